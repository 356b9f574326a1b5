"""The history wrapper (``games.history``) and AlphaGo Zero's 17 planes (``features.zero``).

Both are checked on random capture-biased games against plain-Python references that replay the
game's boards and actions.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards as diagrams
import featuregen
from alphago_jax.features import zero
from alphago_jax.games.go import Go
from alphago_jax.games.history import WithHistory

SIZE, BATCH, STEPS = 7, 6, 70


@pytest.fixture(scope="module")
def games():
    game, states, actions = featuregen.play(SIZE, seed=3, batch=BATCH, steps=STEPS, max_moves=60)
    return game, jax.tree_util.tree_map(np.asarray, states), actions


def reference_history(board_seq, t, k):
    """int8[k, N]: boards t, t-1, ..., t-k+1 of a game (board_seq[0] is the start), zeros before it."""
    n = board_seq.shape[1]
    return np.stack([board_seq[t - i] if t - i >= 0 else np.zeros(n, np.int8) for i in range(k)])


def test_contract_passes_through():
    inner = Go(size=5)
    game = WithHistory(inner, boards=4)
    hash(game)
    assert game.size == 5 and game.num_points == 25 and game.num_actions == 26
    assert game.komi == inner.komi and game.pass_action == 25 and game.name == "go"
    s = game.init()
    chex.assert_shape(s.boards, (4, 25))
    chex.assert_type(s.boards, jnp.int8)
    chex.assert_shape(s.placed_at, (25,))
    chex.assert_type(s.placed_at, jnp.int32)
    s = jax.jit(game.step)(s, jnp.int32(12))
    assert int(s.to_play) == -1 and int(s.board[12]) == 1 and int(s.placed_at[12]) == 1
    np.testing.assert_array_equal(game.legal_action_mask(s), s.inner.legal)
    assert not bool(game.is_terminal(s))
    chex.assert_shape(game.returns(s), (2,))
    assert float(game.score(s)) == float(inner.score(s.inner))
    assert int(game.move_code(s, jnp.int32(3))) == int(inner.move_code(s.inner, jnp.int32(3)))
    with pytest.raises(ValueError):
        WithHistory(inner, boards=0)


def test_setup_and_illegal_step():
    game = WithHistory(Go(size=5), boards=3)
    s = game.init_from_board(jnp.asarray(diagrams.parse("""
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . O
    """)), 1)
    assert int(s.placed_at.sum()) == 0
    np.testing.assert_array_equal(s.boards[1:], s.boards[:1].repeat(2, axis=0))  # as if both had passed
    assert int(jnp.abs(s.boards[0]).sum()) == 3
    s2 = game.step(s, jnp.int32(1))  # occupied: illegal, the game ends, history unchanged
    assert bool(s2.terminal)
    np.testing.assert_array_equal(s2.boards, s.boards)
    s3 = game.step(s, jnp.int32(25))  # pass repeats the board
    np.testing.assert_array_equal(s3.boards[0], s.boards[0])
    np.testing.assert_array_equal(s3.boards[1], s.boards[0])


def test_history_matches_replay(games):
    game, states, actions = games
    n = game.num_points
    checked = 0
    for g in range(BATCH):
        seq = np.concatenate([np.zeros((1, n), np.int8), states.inner.board[g]])  # boards after 0..T moves
        counts = np.concatenate([[0], states.inner.move_count[g]])
        ages = np.zeros(n, np.int64)
        for t in range(STEPS):
            if counts[t + 1] == counts[t]:
                break  # over
            a = actions[g, t]
            after = seq[t + 1]
            if a < n and after[a] != 0:
                ages[a] = counts[t + 1]
            ages[after == 0] = 0
            np.testing.assert_array_equal(states.boards[g, t], reference_history(seq, t + 1, game.boards))
            np.testing.assert_array_equal(states.placed_at[g, t], ages)
            checked += 1
    assert checked > 200


def test_zero_planes_match_reference(games):
    game, states, actions = games
    planes = np.asarray(jax.jit(jax.vmap(jax.vmap(zero.zero_planes)))(states))
    chex.assert_shape(planes, (BATCH, STEPS, SIZE, SIZE, 17))
    assert planes.dtype == np.float32
    n = game.num_points
    for g in range(BATCH):
        seq = np.concatenate([np.zeros((1, n), np.int8), states.inner.board[g]])
        for t in range(STEPS):
            p = int(states.inner.to_play[g, t])
            hist = reference_history(seq, min(t + 1, int(states.inner.move_count[g, t])), 8)
            want = np.concatenate([(hist == p), (hist == -p), np.full((1, n), p == 1)]).astype(np.float32)
            np.testing.assert_array_equal(planes[g, t], want.T.reshape(SIZE, SIZE, 17))


def test_zero_planes_need_eight_boards():
    game = WithHistory(Go(size=5), boards=4)
    with pytest.raises(ValueError, match="8 boards"):
        zero.zero_planes(game.init())
    s = WithHistory(Go(size=5)).init()
    p = zero.zero_planes(s)
    chex.assert_shape(p, (5, 5, 17))
    np.testing.assert_array_equal(p[..., 16], 1.0)
    np.testing.assert_array_equal(p[..., :16], 0.0)
