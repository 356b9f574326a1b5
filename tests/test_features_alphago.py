"""AlphaGo's 48/49 input planes (``features.alphago``) against a plain-Python reference.

Random capture-biased games on 9x9 and 19x19 give the positions (320 and 160); every plane is
compared point by point with ``featureref``, which plays each move on a copy of the board and
reads ladders with a recursive full search (same reading rules as the JAX reader, no shared
code). The ladder planes are also checked on textbook positions in ``test_ladders.py``.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import featuregen
import featureref
from alphago_jax.features import alphago, symmetry


def replay_ages(states, actions, g, n):
    """int[T, N]: turns since each stone was placed, replayed from game g's actions and boards."""
    boards = np.asarray(states.inner.board[g])
    counts = np.asarray(states.inner.move_count[g])
    placed = np.zeros(n, np.int64)
    out = []
    prev_count = 0
    for t in range(boards.shape[0]):
        a = actions[g, t]
        if counts[t] != prev_count and a < n and boards[t, a] != 0:
            placed[a] = counts[t]
        prev_count = counts[t]
        out.append(counts[t] - placed + 1)
    return np.stack(out)


def sample(size, seed, batch, steps, every, max_moves=None):
    game, states, actions = featuregen.play(size, seed=seed, batch=batch, steps=steps, max_moves=max_moves)
    n = game.num_points
    terminal = np.asarray(states.inner.terminal)
    picks, ages = [], []
    for g in range(batch):
        all_ages = replay_ages(states, actions, g, n)
        for t in range(every - 1, steps, every):
            if not terminal[g, t]:
                picks.append((g, t))
                ages.append(all_ages[t])
    gi, ti = np.array(picks).T
    return featuregen.take(states, (gi, ti)), np.stack(ages)


SAMPLES = {"9x9": (9, 11, 16, 60, 3), "19x19": (19, 12, 4, 240, 6)}  # size, seed, batch, steps, every


@functools.lru_cache(maxsize=None)
def _positions(name):
    size, seed, batch, steps, every = SAMPLES[name]
    states, ages = sample(size, seed, batch, steps, every, max_moves=steps + 10)
    planes = np.asarray(jax.jit(jax.vmap(lambda s: alphago.alphago_planes(s, value_net=True)))(states))
    return size, jax.tree_util.tree_map(np.asarray, states), ages, planes


@pytest.fixture(scope="module", params=sorted(SAMPLES))
def positions(request):
    return _positions(request.param)


@pytest.fixture(scope="module")
def positions_9x9():
    """The 9x9 sample alone, for checks one board size is enough for."""
    return _positions("9x9")


def test_planes_match_reference(positions):
    size, states, ages, planes = positions
    n = size * size
    b = states.inner.board.shape[0]
    chex.assert_shape(planes, (b, size, size, 49))
    assert planes.dtype == np.float32
    assert b >= 150
    for i in range(b):
        want = featureref.alphago_planes(states.inner.board[i], int(states.inner.to_play[i]),
                                         states.inner.legal[i, :n], ages[i], size, value_net=True)
        got = planes[i]
        if not np.array_equal(got, want):
            bad = sorted({int(k) for k in np.nonzero((got != want).any(axis=(0, 1)))[0]})
            raise AssertionError(f"position {i}: planes {bad} differ")


def test_batch_function_agrees(positions_9x9):
    """``alphago_planes_batch`` (one ladder work list for the batch) gives the vmapped planes."""
    size, states, _, planes = positions_9x9
    got = np.asarray(jax.jit(lambda s: alphago.alphago_planes_batch(s, value_net=True))(states))
    chex.assert_shape(got, planes.shape)
    np.testing.assert_array_equal(got, planes)


def test_planes_exercise_every_feature(positions):
    """The random positions reach the interesting one-hot bins (so the comparison means something)."""
    size, states, ages, planes = positions
    seen = planes.sum(axis=(0, 1, 2))
    p = alphago.PLANES
    for name, first, width in [("turns_since", p["turns_since"], 8), ("liberties", p["liberties"], 4),
                               ("capture_size", p["capture_size"], 2), ("self_atari_size", p["self_atari_size"], 2),
                               ("liberties_after", p["liberties_after"], 4),
                               ("ladder_capture", p["ladder_capture"], 1), ("ladder_escape", p["ladder_escape"], 1),
                               ("sensibleness", p["sensibleness"], 1)]:
        assert (seen[first:first + width] > 0).all(), name
    np.testing.assert_array_equal(planes[..., p["ones"]], 1.0)
    np.testing.assert_array_equal(planes[..., p["zeros"]], 0.0)


def transform_state(state, k, size):
    """A HistoryState's per-point fields under symmetry k (int32[B]); chain ids and atari
    liberties are point indices, so their values are mapped too."""
    inner = state.inner
    point = lambda x: jnp.where(x >= 0, symmetry.apply_action(x.astype(jnp.int32), k[:, None], size), x).astype(x.dtype)  # noqa: E731
    inner = inner.replace(board=symmetry.apply_board(inner.board, k),
                          chain_id=point(symmetry.apply_board(inner.chain_id, k)),
                          atari_lib=point(symmetry.apply_board(inner.atari_lib, k)),
                          legal=symmetry.apply_policy(inner.legal, k))
    return state.replace(inner=inner, placed_at=symmetry.apply_board(state.placed_at, k))


def test_planes_commute_with_symmetries(positions_9x9):
    """planes(T s) == T planes(s) on the random 9x9 positions, every plane, one random T each."""
    size, states, _, planes = positions_9x9
    b = planes.shape[0]
    k = jnp.asarray(np.random.default_rng(0).integers(0, 8, b), jnp.int32)
    moved = transform_state(jax.tree_util.tree_map(jnp.asarray, states), k, size)
    got = np.asarray(jax.jit(jax.vmap(lambda s: alphago.alphago_planes(s, value_net=True)))(moved))
    want = np.asarray(symmetry.apply(jnp.asarray(planes), k))
    np.testing.assert_array_equal(got, want)
