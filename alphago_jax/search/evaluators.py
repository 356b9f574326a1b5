"""Leaf evaluators: what a search asks of a batch of positions.

An evaluator maps ``(params, states, key)`` (a batch of B states) to ``(prior logits
float32[B, A], value float32[B])``, the value in [-1, 1] for the player to move. The searches
mask illegal actions and zero the value of finished games themselves.

- ``rollout_evaluator``: uniform prior, the outcome of one uniformly random playout to the end
  (no network, no parameters): the pure-MCTS baseline of every game; in Go optionally the usual
  Monte Carlo Go playout (own eyes kept, simple ko), shorter and cheaper.
- ``policy_rollout_evaluator``: uniform prior, the outcome of one playout of AlphaGo's fast
  rollout policy (Go family).
- ``network_evaluator``: a network and its input planes, optionally averaged over the board's
  symmetries.
- ``mixed_evaluator``: AlphaGo's leaf value, ``(1 - lambda) v + lambda z``.
"""

from __future__ import annotations

from typing import Any, Callable

import jax
import jax.numpy as jnp

from alphago_jax.features import symmetry
from alphago_jax.games.base import BLACK, Game
from alphago_jax.playout import play_out, sample_legal
from alphago_jax.search.amaf import playout_mask, simple_ko_rules

Evaluator = Callable[[Any, Any, jax.Array], tuple[jnp.ndarray, jnp.ndarray]]
MASKED = -1e9  # logit of an illegal action: exp() underflows to an exact 0 prior


def masked(game: Game, evaluator: Evaluator) -> Evaluator:
    """``evaluator`` with illegal actions' logits set to ``MASKED``, finished games' values to 0, float32."""
    legal_of, terminal_of = jax.vmap(game.legal_action_mask), jax.vmap(game.is_terminal)

    def evaluate(params, states, key):
        logits, value = evaluator(params, states, key)
        logits = jnp.where(legal_of(states), logits, MASKED)
        value = jnp.where(terminal_of(states), 0.0, value)
        return logits.astype(jnp.float32), value.astype(jnp.float32)

    return evaluate


def value_for_mover(game: Game, before, after) -> jnp.ndarray:
    """float32[B]: the return of the player who moved from ``before``, on the move that ended the game."""
    r = jax.vmap(game.returns)(after)  # [B, 2] (black, white)
    mine = jnp.where(before.to_play == BLACK, r[:, 0], r[:, 1])
    return jnp.where(before.terminal, 0.0, mine)


def _outcome_for_player_to_move(game: Game, states, final) -> jnp.ndarray:
    r = jax.vmap(game.returns)(final)
    return jnp.where(states.to_play == BLACK, r[:, 0], r[:, 1])


def rollout_evaluator(game: Game, max_moves: int | None = None, *, keep_eyes: bool = False,
                      simple_ko: bool = False) -> Evaluator:
    """Uniform prior and the outcome of one uniformly random playout (no network, no params).

    The playout runs in-graph until every game of the batch is over, or for ``max_moves``
    moves (default ``4 * num_actions``) after which unfinished games count 0.

    Go's usual Monte Carlo playout, both off by default (other games ignore them):

    - ``keep_eyes``: the playout never fills a one-point eye of the player to move and passes
      only when no other move is left (``amaf.playout_mask``; any legal move where nothing
      else is allowed), so its games end by two passes when the board is settled rather than
      at the move limit, and its outcomes say more about the position;
    - ``simple_ko``: the playout's moves follow the simple ko rule rather than positional
      superko (``amaf.simple_ko_rules``): the superko test drops out of every step.
    """
    limit = max_moves if max_moves is not None else 4 * game.num_actions
    playout_game = simple_ko_rules(game) if simple_ko else game
    choose = _eye_keeping_moves(playout_game) if keep_eyes else None

    def evaluate(params, states, key):
        del params
        final, _ = play_out(playout_game, states, key, limit, choose)
        return jnp.zeros((states.to_play.shape[0], game.num_actions), jnp.float32), \
            _outcome_for_player_to_move(game, states, final)

    return evaluate


def _eye_keeping_moves(game: Game):
    """``(states, key) -> int32[B]``: uniformly random moves that keep the player's own eyes
    (``amaf.playout_mask``), any legal move where that leaves none."""
    def allowed(state):
        mask = playout_mask(game, state, protect_eyes=True)
        return jnp.where(jnp.any(mask), mask, game.legal_action_mask(state))

    allowed_of = jax.vmap(allowed)
    return lambda states, key: sample_legal(key, allowed_of(states))


def policy_rollout_evaluator(game: Game, policy, max_moves: int | None = None,
                             pick: Callable[[Any], Any] | None = None) -> Evaluator:
    """Uniform prior and the outcome of one playout of a ``nets.RolloutPolicy`` (Go family).

    Args:
      game: a Go-family game whose states carry the fields the policy reads (``GoState`` or
        ``HistoryState``).
      policy: a ``RolloutPolicy`` of the game's board size.
      max_moves: playout length limit (default ``4 * num_actions``); unfinished games count 0.
      pick: ``params -> rollout params`` when the search's params hold more than the policy's
        (e.g. ``lambda p: p["rollout"]``); default: the params are the policy's.
    """
    limit = max_moves if max_moves is not None else 4 * game.num_actions
    sample = jax.vmap(policy.sample, in_axes=(None, 0, 0))

    def evaluate(params, states, key):
        weights = params if pick is None else pick(params)

        def choose(s, k):
            return sample(weights, s, jax.random.split(k, s.to_play.shape[0]))

        final, _ = play_out(game, states, key, limit, choose)
        return jnp.zeros((states.to_play.shape[0], game.num_actions), jnp.float32), \
            _outcome_for_player_to_move(game, states, final)

    return evaluate


def network_evaluator(apply_fn: Callable, planes_fn: Callable, symmetries: str = "none") -> Evaluator:
    """An evaluator from a network: ``apply_fn(params, planes) -> (logits, value)``.

    Args:
      apply_fn: e.g. ``lambda v, x: net.apply(v, x)`` for ``DualResNet`` (eval mode;
        ``nets.policy_value_apply(net)`` for one with auxiliary heads); planes
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
