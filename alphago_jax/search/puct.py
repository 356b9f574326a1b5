"""One searched move for a whole batch of games, jit-compiled with the rules and the evaluator.

``make_search(game, evaluator, config)`` returns a jitted function
``(params, states, key) -> SearchOutput``: mctx's PUCT (``muzero_policy``) or Gumbel
(``gumbel_muzero_policy``) search with the game's rules as the model, then the chosen move
played. Two-player conventions: every node's value is for its player to move; an edge's reward
is the game's return for the player who moved (non-zero only on the move that ends the game)
and the discount is -1 (0 once the game is over), so values flip sign at each ply.

Illegal actions are masked at the root and get no prior inside the tree; should the search
still try one deeper in the tree, the rules end the game as a loss for the player who made it,
so its value is -1 and the search turns away from it.

An evaluator maps ``(params, states, key)`` (a batch of states) to ``(prior logits
float32[B, A], value float32[B])``, the value being for the player to move. ``rollout_evaluator`` is the
network-free baseline (uniform prior, value of one random playout to the end);
``network_evaluator`` wraps a network and its input planes, optionally averaged over the
board's symmetries; ``mixed_evaluator`` mixes a network's value with rollouts (AlphaGo).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import mctx

from alphago_jax.features import symmetry
from alphago_jax.games.base import BLACK, Game
from alphago_jax.playout import play_out

Evaluator = Callable[[Any, Any, jax.Array], tuple[jnp.ndarray, jnp.ndarray]]
_MASKED = -1e9  # logit of an illegal action: exp() underflows to an exact 0 prior


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Static search settings (hashable).

    Attributes:
      num_simulations: simulations per move.
      algorithm: ``"puct"`` (AlphaGo Zero's selection, mctx ``muzero_policy``) or ``"gumbel"``.
      c_puct: PUCT exploration constant (mctx ``pb_c_init``).
      dirichlet_alpha, dirichlet_fraction: root noise (fraction 0 turns it off); PUCT only.
      temperature: the move is drawn from visit counts ** (1 / temperature); 0 plays the most
        visited move.
      temperature_moves: if set, only games with fewer moves played than this draw with
        ``temperature``; the others play the most visited move (AlphaGo Zero: 30 on 19x19).
      max_depth: deepest simulation, None for no limit.
      gumbel_considered: actions considered at the root by Gumbel search.
    """

    num_simulations: int = 64
    algorithm: str = "puct"
    c_puct: float = 1.25
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    temperature: float = 1.0
    temperature_moves: int | None = None
    max_depth: int | None = None
    gumbel_considered: int = 16

    def __post_init__(self):
        if self.algorithm not in ("puct", "gumbel"):
            raise ValueError(f"unknown search algorithm {self.algorithm!r}; known: 'puct', 'gumbel'")
        if self.num_simulations < 1:
            raise ValueError(f"num_simulations must be at least 1, got {self.num_simulations}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")


class SearchOutput(NamedTuple):
    """What one searched move returns, for a batch of B games and A actions.

    Attributes:
      actions: int32[B], the moves played.
      visit_probs: float32[B, A], root visit counts normalised (the training target).
      root_value: float32[B], the searched value of the root for its player to move.
      next_states: the states after ``actions``.
      q_values: float32[B, A], the root children's values for the root's player (0 unvisited).
    """

    actions: jnp.ndarray
    visit_probs: jnp.ndarray
    root_value: jnp.ndarray
    next_states: Any
    q_values: jnp.ndarray


def _value_for_mover(game: Game, before, after) -> jnp.ndarray:
    """float32[B]: the return of the player who moved from ``before``, on the move that ended the game."""
    r = jax.vmap(game.returns)(after)  # [B, 2] (black, white)
    mine = jnp.where(before.to_play == BLACK, r[:, 0], r[:, 1])
    return jnp.where(before.terminal, 0.0, mine)


def make_search(game: Game, evaluator: Evaluator, config: SearchConfig = SearchConfig()):
    """The jitted searched move: ``(params, states, key) -> SearchOutput``.

    Args:
      game: any game of the Game contract.
      evaluator: ``(params, states, key) -> (logits float32[B, A], value float32[B])``.
      config: static search settings.
    """
    step = jax.vmap(game.step)
    legal_of = jax.vmap(game.legal_action_mask)

    def evaluate(params, states, key):
        logits, value = evaluator(params, states, key)
        legal = legal_of(states)
        logits = jnp.where(legal, logits, _MASKED)
        value = jnp.where(jax.vmap(game.is_terminal)(states), 0.0, value)
        return logits.astype(jnp.float32), value.astype(jnp.float32)

    def recurrent_fn(params, key, action, states):
        after = step(states, action)
        logits, value = evaluate(params, after, key)
        done = jax.vmap(game.is_terminal)(after)
        out = mctx.RecurrentFnOutput(
            reward=_value_for_mover(game, states, after),
            discount=jnp.where(done, 0.0, -1.0),
            prior_logits=logits,
            value=value,
        )
        return out, after

    def search(params, states, key):
        k_root, k_search, k_move = jax.random.split(key, 3)
        logits, value = evaluate(params, states, k_root)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
        invalid = ~legal_of(states)
        if config.algorithm == "puct":
            out = mctx.muzero_policy(
                params, k_search, root, recurrent_fn, config.num_simulations,
                invalid_actions=invalid, max_depth=config.max_depth,
                dirichlet_fraction=config.dirichlet_fraction, dirichlet_alpha=config.dirichlet_alpha,
                pb_c_init=config.c_puct,
            )
        else:
            out = mctx.gumbel_muzero_policy(
                params, k_search, root, recurrent_fn, config.num_simulations,
                invalid_actions=invalid, max_depth=config.max_depth,
                max_num_considered_actions=config.gumbel_considered,
            )
        tree = out.search_tree
        root_index = mctx.Tree.ROOT_INDEX
        visits = tree.children_visits[:, root_index].astype(jnp.float32)
        visit_probs = visits / jnp.maximum(jnp.sum(visits, axis=-1, keepdims=True), 1.0)
        actions = _choose(k_move, visits, invalid, config.temperature)
        if config.temperature_moves is not None:
            greedy = _choose(k_move, visits, invalid, 0.0)
            actions = jnp.where(states.move_count < config.temperature_moves, actions, greedy)
        return SearchOutput(
            actions=actions,
            visit_probs=visit_probs,
            root_value=tree.node_values[:, root_index],
            next_states=step(states, actions),
            q_values=tree.qvalues(jnp.full(visits.shape[0], root_index)),
        )

    return jax.jit(search)


def _choose(key, visits, invalid, temperature: float) -> jnp.ndarray:
    """int32[B]: the most visited move (temperature 0) or a draw from visits ** (1 / T)."""
    if temperature == 0:
        return jnp.argmax(jnp.where(invalid, -1.0, visits), axis=-1).astype(jnp.int32)
    logits = jnp.where(visits > 0, jnp.log(jnp.maximum(visits, 1e-30)) / temperature, -jnp.inf)
    # A root with no visited legal move (possible with one simulation) falls back to legal moves.
    logits = jnp.where(jnp.any(visits > 0, axis=-1, keepdims=True), logits, jnp.where(invalid, -jnp.inf, 0.0))
    return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)


def rollout_evaluator(game: Game, max_moves: int | None = None) -> Evaluator:
    """Uniform prior and the outcome of one uniformly random playout (no network, no params).

    The playout runs in-graph until every game of the batch is over, or for ``max_moves``
    moves (default ``4 * num_actions``) after which unfinished games count 0.
    """
    limit = max_moves if max_moves is not None else 4 * game.num_actions

    def evaluate(params, states, key):
        del params
        batch = states.to_play.shape[0]
        final, _ = play_out(game, states, key, limit)
        r = jax.vmap(game.returns)(final)
        value = jnp.where(states.to_play == BLACK, r[:, 0], r[:, 1])
        return jnp.zeros((batch, game.num_actions), jnp.float32), value

    return evaluate


def network_evaluator(apply_fn: Callable, planes_fn: Callable, symmetries: str = "none") -> Evaluator:
    """An evaluator from a network: ``apply_fn(params, planes) -> (logits, value)``.

    Args:
      apply_fn: e.g. ``lambda v, x: net.apply(v, x)`` for ``DualResNet`` (eval mode); planes
        float32[B, S, S, C] -> (logits float32[B, S*S + 1], value float32[B]).
      planes_fn: one state -> float32[S, S, C] input planes (vmapped here).
      symmetries: ``"none"``; ``"random"``, one random dihedral map per position, the policy
        mapped back (AlphaGo Zero's search); or ``"all"``, the policy probabilities and the
        value averaged over all 8 maps (AlphaGo's).
    """
    if symmetries not in ("none", "random", "all"):
        raise ValueError(f"unknown symmetries {symmetries!r}; known: 'none', 'random', 'all'")

    def evaluate(params, states, key):
        planes = jax.vmap(planes_fn)(states)
        if symmetries == "none":
            return apply_fn(params, planes)
        if symmetries == "random":
            k = symmetry.random_symmetries(key, planes.shape[:1])
            logits, value = apply_fn(params, symmetry.apply(planes, k))
            return symmetry.apply_policy(logits, symmetry.inverse(k)), value
        batch, n = planes.shape[0], symmetry.NUM_SYMMETRIES
        logits, value = apply_fn(params, jnp.concatenate([symmetry.apply(planes, k) for k in range(n)]))
        logits = logits.reshape((n, batch) + logits.shape[1:])
        probs = jnp.stack([jax.nn.softmax(symmetry.apply_policy(logits[k], symmetry.inverse(k)), axis=-1)
                           for k in range(n)]).mean(axis=0)
        return jnp.log(jnp.maximum(probs, 1e-30)), value.reshape(n, batch).mean(axis=0)

    return evaluate


def mixed_evaluator(network: Evaluator, rollout: Evaluator, lam: float) -> Evaluator:
    """AlphaGo's leaf evaluation: the network's prior, value ``(1 - lam) * v + lam * z``.

    ``v`` is the network's value, ``z`` the rollout's outcome (AlphaGo: lam = 0.5; Zero: 0).
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")

    def evaluate(params, states, key):
        k_net, k_roll = jax.random.split(key)
        logits, v = network(params, states, k_net)
        if lam == 0.0:
            return logits, v
        _, z = rollout(params, states, k_roll)
        return logits, (1.0 - lam) * v + lam * z

    return evaluate
