"""AlphaGo's fast rollout policy: a linear softmax over hand-crafted local features of each move.

Silver et al. 2016 ("Mastering the game of Go with deep neural networks and tree search",
Extended Data Table 4) play rollouts with ``p(a | s) ∝ exp(w · φ(s, a))`` over sparse binary
features of each candidate move. Here the features of every point of a ``GoState`` come at once
from dense O(N) work (stencils, a few segment reductions), jit- and vmap-safe. For a candidate
``q`` (p the player to move; "last move" the opponent's previous action if it was a point):

======================  ==========  =========================================================
feature                 weights     active when
======================  ==========  =========================================================
3x3 pattern             4^8=65,536  always: the 8 neighbours of q, each empty / p's stone /
                                    opponent's stone / off board (``pattern_index``)
response pattern        8 x 4^8     q is next to the last move: its offset (8) x its 3x3 pattern
neighbour               8           q is next to the last move (its offset)
save-atari              1           q is the only liberty of p's chain in atari, which then has
                                    at least 2 liberties
capture                 1           q is the only liberty of an adjacent opponent chain
self-atari              1           the move does not capture and leaves its chain 1 liberty
distance to last move   18          Manhattan distance d: bucket min(d, 17) - 1; 17: no last move
pass                    1           the pass action's own logit
======================  ==========  =========================================================

Illegal actions get the logit ``MASKED`` (float32 min): probability 0, never sampled.

Simplifications of the paper's features: patterns encode colour only, not liberty counts (atari
enters through the three flags); the response pattern is q's own 3x3 pattern with its offset
from the last move (8 x 4^8 weights, no canonicalisation under symmetries) rather than the
12-point diamond plus a "response" flag; no nakade patterns; one distance, to the last move
only. Liberties after a move are exact for moves that capture nothing; for a capturing move only
the captured stones next to q count (a lower bound), and it is never self-atari.

Parameters are a dict of float32 arrays (``PARAM_SHAPES``); ``features`` gives the index arrays
for training code that scatters its own updates.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.features.alphago import chain_stats
from alphago_jax.games import grid

NUM_PATTERNS = 4 ** 8  # 3x3 patterns: 8 neighbours, 4 states each
NUM_OFFSETS = 8  # positions of a point among the 8 around the last move
NUM_RESPONSE = NUM_OFFSETS * NUM_PATTERNS
NUM_DISTANCE = 18  # Manhattan distance 1..16, 17+, and "no last move"
NO_LAST_MOVE = NUM_DISTANCE - 1
MASKED = float(np.finfo(np.float32).min)

# Neighbour codes of a 3x3 pattern, relative to the player to move.
EMPTY, OWN, OPPONENT, OFF_BOARD = 0, 1, 2, 3
# The 8 neighbour offsets (row, col) in pattern order: digit k of the base-4 index is offset k.
OFFSETS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
_EDGE = 2  # board value of off-board points

PARAM_SHAPES = {
    "pattern": (NUM_PATTERNS,),
    "response": (NUM_RESPONSE,),
    "neighbour": (NUM_OFFSETS,),
    "distance": (NUM_DISTANCE,),
    "save_atari": (),
    "capture": (),
    "self_atari": (),
    "pass": (),
}


class RolloutFeatures(NamedTuple):
    """The features of every candidate point of one position (N = size * size).

    Attributes:
      pattern: int32[N], 3x3 pattern index in ``[0, NUM_PATTERNS)``.
      response: int32[N], ``offset * NUM_PATTERNS + pattern`` where the point is next to the
        last move, else -1 (inactive).
      neighbour: int32[N], the point's offset from the last move (index into ``OFFSETS``) where
        it is one of the 8 points around it, else -1.
      distance: int32[N], distance bucket in ``[0, NUM_DISTANCE)``.
      save_atari, capture, self_atari: bool[N], the flags (False on illegal points).
      legal: bool[N + 1], the legal actions (pass last).
    """

    pattern: jnp.ndarray
    response: jnp.ndarray
    neighbour: jnp.ndarray
    distance: jnp.ndarray
    save_atari: jnp.ndarray
    capture: jnp.ndarray
    self_atari: jnp.ndarray
    legal: jnp.ndarray


def _ring(x, size: int, fill):
    """The values at the 8 neighbours of every point, in ``OFFSETS`` order, each ``[N]``."""
    p = jnp.pad(x.reshape(size, size), 1, constant_values=fill)
    return tuple(p[1 + dr:1 + dr + size, 1 + dc:1 + dc + size].reshape(-1) for dr, dc in OFFSETS)


def pattern_index(board, to_play, size: int):
    """int32[N]: every point's 3x3 pattern relative to ``to_play``: neighbour k (``OFFSETS[k]``) adds
    ``code * 4**k``, code ``EMPTY`` 0, ``OWN`` 1, ``OPPONENT`` 2 or ``OFF_BOARD`` 3."""
    b = board.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    idx = jnp.zeros(size * size, jnp.int32)
    for k, v in enumerate(_ring(b, size, _EDGE)):
        code = jnp.where(v == _EDGE, OFF_BOARD, jnp.where(v == p, OWN, jnp.where(v == -p, OPPONENT, EMPTY)))
        idx = idx + code * (4 ** k)
    return idx


def _chain_liberty_bounds(board, chain_id, size: int):
    """Per stone: (liberty count, smallest liberty, largest liberty) of its chain, int32[N] each;
    together they name every liberty of a chain with at most two."""
    n = size * size
    b = board.astype(jnp.int32)
    stone = b != 0
    seg = jnp.where(stone, chain_id.astype(jnp.int32), n)
    _, libs = chain_stats(board, chain_id, size)
    nb_empty = [v == 0 for v in grid.neighbours(b, size, _EDGE)]
    nb_idx = grid.neighbour_index_planes(size)
    lo = functools.reduce(jnp.minimum, [jnp.where(e, i, n) for e, i in zip(nb_empty, nb_idx)])
    hi = functools.reduce(jnp.maximum, [jnp.where(e, i, -1) for e, i in zip(nb_empty, nb_idx)])
    lo = jax.ops.segment_min(lo, seg, num_segments=n + 1)[seg]
    hi = jax.ops.segment_max(hi, seg, num_segments=n + 1)[seg]
    return libs[seg], lo, hi


def tactical_flags(board, chain_id, atari_lib, to_play, size: int):
    """(save_atari, capture, self_atari), bool[N] each, for a stone of ``to_play`` on each empty point."""
    n = size * size
    b = board.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    q = jnp.arange(n, dtype=jnp.int32)
    libs, lo, hi = _chain_liberty_bounds(board, chain_id, size)
    nb_b = grid.neighbours(b, size, _EDGE)
    nb_atari = grid.neighbours(atari_lib.astype(jnp.int32), size, -1)
    nb_libs = grid.neighbours(libs, size, 0)
    nb_lo = grid.neighbours(lo, size, n)
    nb_hi = grid.neighbours(hi, size, -1)
    nb_idx = grid.neighbour_index_planes(size)

    big = jnp.zeros(n, bool)  # joins an own chain with 3+ liberties: 2+ liberties after the move
    mn = jnp.full(n, n, jnp.int32)  # smallest and largest known liberty after the move (not q)
    mx = jnp.full(n, -1, jnp.int32)
    capture = jnp.zeros(n, bool)
    extends = jnp.zeros(n, bool)  # q is the only liberty of an adjacent own chain
    for d in range(4):
        v, i = nb_b[d], nb_idx[d]
        own, opp = v == p, v == -p
        taken = opp & (nb_atari[d] >= 0)  # an adjacent enemy chain in atari: its liberty is q
        capture = capture | taken
        extends = extends | (own & (nb_atari[d] >= 0))
        big = big | (own & (nb_libs[d] >= 3))
        small = own & (nb_libs[d] <= 2)
        new = v == 0
        point = new | taken  # an empty neighbour, or a captured stone next to q
        for use, lo_val, hi_val in ((point, i, i), (small, nb_lo[d], nb_hi[d])):
            lo_val = jnp.where(use & (lo_val != q), lo_val, n)
            hi_val = jnp.where(use & (hi_val != q), hi_val, -1)
            # A 2-liberty chain's other liberty may be either bound: fold both into both.
            mn = jnp.minimum(mn, jnp.minimum(lo_val, jnp.where(hi_val >= 0, hi_val, n)))
            mx = jnp.maximum(mx, jnp.maximum(hi_val, jnp.where(lo_val < n, lo_val, -1)))
    two_or_more = big | (mn < mx)
    one = ~big & (mn == mx) & (mn < n)
    empty = b == 0
    save = empty & extends & two_or_more
    self_atari = empty & ~capture & one
    return save, empty & capture, self_atari


def last_move_features(last_move, size: int):
    """(neighbour, distance), int32[N] each: offset index from ``GoState.last_move`` or -1, distance bucket."""
    n = size * size
    last = last_move.astype(jnp.int32)
    has_last = (last >= 0) & (last < n)
    lr, lc = last // size, last % size
    pts = np.arange(n)
    r, c = jnp.asarray(pts // size), jnp.asarray(pts % size)
    dr, dc = r - lr, c - lc
    # One compare per offset: deriving it from |dr| and |dc| with a max miscompiles in unbatched
    # jit on GPU (XLA, jax 0.11.2).
    neighbour = jnp.full(n, -1, jnp.int32)
    for k, (odr, odc) in enumerate(OFFSETS):
        on_board = (lr + odr >= 0) & (lr + odr < size) & (lc + odc >= 0) & (lc + odc < size)
        at = has_last & on_board & (jnp.asarray(pts, jnp.int32) == last + odr * size + odc)
        neighbour = jnp.where(at, k, neighbour)
    d = jnp.abs(dr) + jnp.abs(dc)
    distance = jnp.where(has_last, jnp.clip(d, 1, NUM_DISTANCE - 1) - 1, NO_LAST_MOVE).astype(jnp.int32)
    return neighbour, distance


@dataclasses.dataclass(frozen=True)
class RolloutPolicy:
    """AlphaGo's fast rollout policy for ``size`` x ``size`` Go; methods take one ``GoState``::

        policy = RolloutPolicy(size=19)
        params = policy.init(jax.random.PRNGKey(0))
        logits = policy.logits(params, state)          # float32[N + 1], MASKED where illegal
        action = policy.sample(params, state, key)     # int32[]

    Parameters: a dict of ``PARAM_SHAPES`` (589,854 floats).
    """

    size: int = 19

    @property
    def num_points(self) -> int:
        return self.size * self.size

    def init(self, key, scale: float = 0.0):
        """Parameters: zeros (the uniform policy over legal moves), or normal(0, ``scale``)."""
        keys = jax.random.split(key, len(PARAM_SHAPES))
        return {
            name: (scale * jax.random.normal(k, shape, jnp.float32)).astype(jnp.float32)
            for k, (name, shape) in zip(keys, PARAM_SHAPES.items())
        }

    def features(self, state) -> RolloutFeatures:
        """The features of every candidate point of ``state`` (a ``GoState``)."""
        size = self.size
        if state.board.shape[-1] != self.num_points:
            raise ValueError(f"RolloutPolicy(size={size}) got a board of {state.board.shape[-1]} points")
        legal = state.legal
        on_board = legal[:-1]
        pattern = pattern_index(state.board, state.to_play, size)
        neighbour, distance = last_move_features(state.last_move, size)
        response = jnp.where(neighbour >= 0, neighbour * NUM_PATTERNS + pattern, -1).astype(jnp.int32)
        save, capture, self_atari = tactical_flags(state.board, state.chain_id, state.atari_lib, state.to_play, size)
        return RolloutFeatures(
            pattern=pattern,
            response=response,
            neighbour=neighbour,
            distance=distance,
            save_atari=save & on_board,
            capture=capture & on_board,
            self_atari=self_atari & on_board,
            legal=legal,
        )

    def logits_from_features(self, params, f: RolloutFeatures) -> jnp.ndarray:
        """float32[N + 1]: ``w · φ(a)`` for every action, ``MASKED`` on illegal ones."""
        z = params["pattern"][f.pattern]
        z = z + jnp.where(f.response >= 0, params["response"][jnp.maximum(f.response, 0)], 0.0)
        z = z + jnp.where(f.neighbour >= 0, params["neighbour"][jnp.maximum(f.neighbour, 0)], 0.0)
        z = z + params["distance"][f.distance]
        z = z + jnp.where(f.save_atari, params["save_atari"], 0.0)
        z = z + jnp.where(f.capture, params["capture"], 0.0)
        z = z + jnp.where(f.self_atari, params["self_atari"], 0.0)
        z = jnp.concatenate([z, params["pass"][None]])
        return jnp.where(f.legal, z, MASKED).astype(jnp.float32)

    def logits(self, params, state) -> jnp.ndarray:
        """float32[N + 1]: action logits of ``state``, ``MASKED`` on illegal actions."""
        return self.logits_from_features(params, self.features(state))

    def log_prob(self, params, state, action) -> jnp.ndarray:
        """float32[]: log-probability of ``action`` (the log-likelihood used for training)."""
        return jax.nn.log_softmax(self.logits(params, state))[action]

    def sample(self, params, state, key) -> jnp.ndarray:
        """int32[]: an action drawn from the softmax over legal actions (``sample_logits``)."""
        return sample_logits(key, self.logits(params, state), state.legal)


def sample_logits(key, logits, legal) -> jnp.ndarray:
    """int32[]: an index drawn from ``softmax(logits)`` over ``legal`` (bool[A]) by inverse CDF with
    one uniform number; the last index (pass) when nothing is legal."""
    a = logits.shape[-1]
    z = jnp.where(legal, logits, MASKED)
    w = jnp.where(legal, jnp.exp(z - jnp.max(z)), 0.0)
    cdf = jnp.cumsum(w)
    t = jax.random.uniform(key, (), jnp.float32) * cdf[-1]
    above = cdf > t  # the first such index has weight > 0, hence is legal
    last_legal = a - 1 - jnp.argmax(legal[::-1])
    idx = jnp.where(jnp.any(above), jnp.argmax(above), jnp.where(jnp.any(legal), last_legal, a - 1))
    return idx.astype(jnp.int32)


__all__ = [
    "MASKED",
    "NUM_DISTANCE",
    "NUM_OFFSETS",
    "NUM_PATTERNS",
    "NUM_RESPONSE",
    "OFFSETS",
    "PARAM_SHAPES",
    "RolloutFeatures",
    "RolloutPolicy",
    "last_move_features",
    "pattern_index",
    "sample_logits",
    "tactical_flags",
]
