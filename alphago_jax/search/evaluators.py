"""Leaf evaluators: ``(params, states, key) -> (prior logits float32[B, A], value float32[B])``,
the value in [-1, 1] for the player to move; the searches mask illegal actions and zero the
value of finished games themselves.

``rollout_evaluator`` (one uniformly random playout, no network), ``policy_rollout_evaluator``
(one playout of AlphaGo's fast rollout policy), ``network_evaluator`` (a network on its input
planes, optionally averaged over symmetries) and ``mixed_evaluator`` (AlphaGo's
``(1 - lambda) v + lambda z``). ``score_utility_apply`` makes a network's value a utility that
also counts its score head's margin (KataGo's score utility). ``tactical_evaluator`` gives part
of an evaluator's prior to the moves a capture reader finds (Go-family games); a
``RootedEvaluator`` reads the search's roots with another evaluator than its other leaves.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp

from alphago_jax.features import symmetry
from alphago_jax.features.alphago import ladder_planes_batch, net_moves
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, Game
from alphago_jax.games.history import WithHistory
from alphago_jax.playout import play_out, sample_legal
from alphago_jax.search.amaf import playout_mask, simple_ko_rules

Evaluator = Callable[[Any, Any, jax.Array], tuple[jnp.ndarray, jnp.ndarray]]
MASKED = -1e9  # logit of an illegal action: exp() underflows to an exact 0 prior
SYMMETRIES = ("none", "random", "all")
"""What ``network_evaluator`` does with the board's symmetries (see there)."""


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
    """float32[B]: the return of the player who moved from ``before`` to ``after`` (0 unless that move ended the game)."""
    r = jax.vmap(game.returns)(after)  # [B, 2] (black, white)
    mine = jnp.where(before.to_play == BLACK, r[:, 0], r[:, 1])
    return jnp.where(before.terminal, 0.0, mine)


def _outcome_for_player_to_move(game: Game, states, final) -> jnp.ndarray:
    r = jax.vmap(game.returns)(final)
    return jnp.where(states.to_play == BLACK, r[:, 0], r[:, 1])


def rollout_evaluator(game: Game, max_moves: int | None = None, *, keep_eyes: bool = False,
                      simple_ko: bool = False) -> Evaluator:
    """Uniform prior and the outcome of one uniformly random playout (no network, no params).

    The playout stops when every game is over or after ``max_moves`` moves (default
    ``4 * num_actions``; unfinished games count 0). Go only: ``keep_eyes`` never fills the
    mover's one-point eyes and passes only when nothing else is left (``amaf.playout_mask``), so
    games end when the board is settled; ``simple_ko`` plays under simple ko, cheaper. A
    ``WithHistory`` game plays out its inner game's states: a playout needs no input planes.
    """
    limit = max_moves if max_moves is not None else 4 * game.num_actions
    wrapped = isinstance(game, WithHistory)
    rules = game.game if wrapped else game
    playout_game = simple_ko_rules(rules) if simple_ko else rules
    choose = _eye_keeping_moves(playout_game) if keep_eyes else None

    def evaluate(params, states, key):
        del params
        states = states.inner if wrapped else states
        final, _ = play_out(playout_game, states, key, limit, choose)
        return jnp.zeros((states.to_play.shape[0], game.num_actions), jnp.float32), \
            _outcome_for_player_to_move(rules, states, final)

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
    """Uniform prior and the outcome of one playout of ``policy`` (a ``nets.RolloutPolicy`` of the
    Go-family ``game``'s size), at most ``max_moves`` long (default ``4 * num_actions``; unfinished
    games count 0). ``pick`` takes the policy's params out of the search's (default: they are)."""
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
    """An evaluator from a network.

    Args:
      apply_fn: ``(params, planes float32[B, S, S, C]) -> (logits float32[B, S*S + 1], value
        float32[B])``, e.g. ``nets.policy_value_apply(net)``.
      planes_fn: one state -> float32[S, S, C] (vmapped here).
      symmetries: ``"none"``; ``"random"``, one random map per position, the policy mapped back
        (AlphaGo Zero); ``"all"``, probabilities and value averaged over the 8 maps (AlphaGo).
    """
    if symmetries not in SYMMETRIES:
        raise ValueError(f"unknown symmetries {symmetries!r}; known: {', '.join(map(repr, SYMMETRIES))}")

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
    """AlphaGo's leaf evaluation: the network's prior and ``(1 - lam) * v + lam * z``, ``v`` the
    network's value, ``z`` the rollout's outcome (AlphaGo: lam = 0.5)."""
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


def score_utility_apply(aux_fn: Callable, factor: float) -> Callable:
    """``(variables, planes float32[B, S, S, C]) -> (logits, utility float32[B])`` for
    ``network_evaluator``: the utility ``(1 - factor) v + factor (2 / pi) atan(score / S)``, ``v``
    the value head's and ``score`` the score head's margin in points, both for the player to move
    (KataGo's static score utility, centred on an even game, its scale the board's side).

    Why: once a game is won or lost, the value heads of every move agree, and a search on the
    value alone stops telling a small loss from a lost group; the score term keeps it playing for
    points, so an opponent's later mistake can still turn the game. The utility stays in
    ``(-1, 1)`` (a finished game's ``+-1`` is still the best and the worst).

    Args:
      aux_fn: ``(variables, planes) -> nets.DualOutput`` of a network with a score head.
      factor: the score term's weight in ``[0, 1)``.
    """
    if not 0.0 <= factor < 1.0:
        raise ValueError(f"the score utility's factor must be in [0, 1), got {factor}")

    def apply(variables, planes):
        out = aux_fn(variables, planes)
        if out.score is None:
            raise ValueError("a score utility needs a network with a score head")
        bonus = (2.0 / math.pi) * jnp.arctan(out.score.astype(jnp.float32) / planes.shape[1])
        return out.logits, (1.0 - factor) * out.value.astype(jnp.float32) + factor * bonus

    return apply


def tactical_moves(states, size: int, nets: bool = True) -> jnp.ndarray:
    """bool[B, N + 1]: the capture reader's moves in each state (a batch of Go-family states with
    ``board`` int8[B, N], ``chain_id``, ``atari_lib`` int16[B, N], ``to_play`` int8[B], ``legal``
    bool[B, N + 1]); never the pass.

    Three kinds, tactics a network trained on its own games misreads in positions unlike them:
    - saving by capture: a legal move that captures an opponent chain in atari next to one of the
      mover's chains in atari;
    - ladder capture: a legal atari after which the opponent chain dies in a ladder
      (``features.alphago.ladder_planes_batch``'s reading; the follow-up of a net is one);
    - net (with ``nets``): a loose move that catches an opponent chain with two liberties either
      way it runs (``features.alphago.net_moves``; it costs the most: docs/benchmarks.md).
    """
    n = size * size
    board, atari = states.board.astype(jnp.int32), states.atari_lib.astype(jnp.int32)
    mover = states.to_play.astype(jnp.int32)[:, None]
    legal = states.legal[:, :n]
    own_in_atari = (board == mover) & (atari >= 0)
    near_own = jax.vmap(lambda m: grid.dilate(m, size))(own_in_atari)
    takers = (board == -mover) & (atari >= 0) & near_own  # stones of opponent chains to take
    rows = jnp.arange(board.shape[0])[:, None]
    save = jnp.zeros((board.shape[0], n + 1), bool).at[rows, jnp.where(takers, atari, n)].set(True)[:, :n]
    ladder, _ = ladder_planes_batch(states.board, states.chain_id, states.atari_lib, states.to_play, legal, size)
    moves = save | ladder
    if nets:
        moves = moves | jax.vmap(functools.partial(net_moves, size=size))(states.board, states.chain_id,
                                                                          states.to_play, legal)
    moves = legal & moves
    return jnp.concatenate([moves, jnp.zeros_like(moves[:, :1])], axis=1)


def tactical_evaluator(evaluator: Evaluator, size: int, weight: float, nets: bool = True) -> Evaluator:
    """``evaluator`` whose prior gives ``weight`` of its mass, shared equally, to the moves of
    ``tactical_moves`` (``nets``: with the net reading) where there are any:
    ``(1 - weight) p + weight m / |m|``. Values unchanged.

    Why: PUCT spends its visits where the prior points, so a tactic the network's prior misses
    (a capture that saves a string, the atari of a net's follow-up) is never read to the end;
    the reader's moves get visits, and the search's values then decide. AlphaGo's tree policy
    and the MCTS programs before it gave such moves prior knowledge the same way.

    Args:
      evaluator: a Go-family evaluator (its states have ``board``, ``chain_id``, ``atari_lib``).
      size: the board's side.
      weight: in ``[0, 1)``.
    """
    if not 0.0 <= weight < 1.0:
        raise ValueError(f"the tactical prior's weight must be in [0, 1), got {weight}")

    def evaluate(params, states, key):
        logits, value = evaluator(params, states, key)
        if weight == 0.0:
            return logits, value
        moves = tactical_moves(states, size, nets)
        count = jnp.sum(moves, axis=-1, keepdims=True)
        probs = jax.nn.softmax(logits.astype(jnp.float32), axis=-1)
        mixed = (1.0 - weight) * probs + weight * moves / jnp.maximum(count, 1)
        return jnp.where(count > 0, jnp.log(jnp.maximum(mixed, 1e-30)), logits), value

    return evaluate


@dataclasses.dataclass(frozen=True)
class RootedEvaluator:
    """An evaluator that reads the search's roots with ``root`` and every other leaf with ``leaf``
    (both ``Evaluator``s of the same values): a costly reading (``tactical_evaluator``'s nets)
    then runs once a move, not once a simulation. ``TreeSearch`` gives each root ``root``'s prior
    on every move, a reused one too; other searches read every node with ``leaf``."""

    leaf: Evaluator
    root: Evaluator

    def __call__(self, params, states, key):
        return self.leaf(params, states, key)
