"""Dead stones from an ownership map (``play.dead_stones``): chains as the rules label them, a
chain judged as a whole, the liberties where a cleanup captures."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games import grid
from alphago_jax.games.go import _label_chains
from alphago_jax.play.dead_stones import chains, cleanup_points, dead_stones


def board_of(rows: list[str]) -> np.ndarray:
    """int8[N] from rows top to bottom: X black, O white, . empty."""
    return np.asarray([{"X": 1, "O": -1, ".": 0}[c] for row in rows for c in row], np.int8)


def test_chains_match_the_rules_labels():
    rng = np.random.default_rng(0)
    for size in (5, 9):
        for _ in range(20):
            board = rng.choice(np.array([-1, 0, 1], np.int8), size * size, p=[0.35, 0.3, 0.35])
            expected = np.asarray(_label_chains(jnp.asarray(board), size)).astype(np.int32)
            np.testing.assert_array_equal(chains(board, size), expected)


def test_a_chain_is_judged_as_a_whole():
    board = board_of(["XX...",
                      "OO...",
                      ".....",
                      "...X.",
                      "....."])
    own = np.zeros(25)
    own[[0, 1]] = [-0.9, -0.2]  # the black chain A5-B5: mean -0.55 for black, dead
    own[[5, 6]] = [0.9, -0.6]  # the white chain A4-B4: mean -0.15 for white, alive
    own[18] = -0.4  # D2: not sure enough
    dead = dead_stones(board, own, 5)
    assert np.flatnonzero(dead).tolist() == [0, 1]
    assert not dead_stones(board, own, 5, threshold=0.6).any()
    with pytest.raises(ValueError, match="25 values"):
        dead_stones(board, own[:9], 5)


def test_cleanup_points_are_the_dead_opponent_liberties():
    board = board_of(["O....",
                      "X....",
                      "..X..",
                      "....O",
                      "....."])
    dead = board == -1  # both white stones
    points = {grid.to_vertex(int(p), 5) for p in np.flatnonzero(cleanup_points(board, dead, 1, 5))}
    assert points == {"B5", "E3", "D2", "E1"}  # A5: B5 (A4 is black); E2: E3, D2, E1
    assert not cleanup_points(board, dead, -1, 5).any()  # white has no dead black stones to capture
