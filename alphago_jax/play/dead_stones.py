"""Dead stones from a network's ownership map: GTP's ``final_status_list`` and the cleanup phase.

A network with KataGo's ownership head predicts, for each point, who owns it when the game is
over (+1 black, -1 white, here always from black's side). A chain whose points that map gives,
on average, to the other colour by more than ``DEAD_BELOW`` is dead: it will be captured, and
the points it stands on will count for its opponent once it is. Averaging over the chain keeps
one point's noise from splitting a chain into dead and alive stones.

Host-side numpy on one board (int8[N], +1 black, -1 white, 0 empty, N = size * size).
"""

from __future__ import annotations

import numpy as np

from alphago_jax.games import grid

DEAD_BELOW = 0.5
"""A chain is dead when the mean ownership of its points, from its own colour's side, is below
``-DEAD_BELOW``: most of the map's confidence against it, not a coin flip."""


def chains(board: np.ndarray, size: int) -> np.ndarray:
    """int32[N]: each stone's chain id (the smallest point of its chain), -1 on empty points."""
    board = np.asarray(board).reshape(-1)
    ids = np.full(board.shape[0], -1, np.int32)
    for start in np.flatnonzero(board):
        if ids[start] < 0:  # points are visited in order: start is its chain's smallest
            chain, _ = grid.chain_and_liberties(board, size, int(start))
            ids[list(chain)] = start
    return ids


def dead_stones(board: np.ndarray, ownership: np.ndarray, size: int, threshold: float = DEAD_BELOW) -> np.ndarray:
    """bool[N]: the stones of ``board`` whose chain ``ownership`` (float[N] in [-1, 1], +1
    black) gives to the other colour: mean of ``ownership * colour`` over the chain below
    ``-threshold``."""
    board = np.asarray(board).reshape(-1)
    ownership = np.asarray(ownership, np.float64).reshape(-1)
    if ownership.shape != board.shape:
        raise ValueError(f"ownership needs {board.shape[0]} values for a {size}x{size} board, got {ownership.shape}")
    ids = chains(board, size)
    stones = ids >= 0
    own = np.where(stones, ownership * board, 0.0)  # from each stone's own side
    total = np.bincount(ids[stones], weights=own[stones], minlength=board.shape[0])
    count = np.bincount(ids[stones], minlength=board.shape[0])
    mean = np.where(stones, total[np.maximum(ids, 0)] / np.maximum(count[np.maximum(ids, 0)], 1), 0.0)
    return stones & (mean < -threshold)


def cleanup_points(board: np.ndarray, dead: np.ndarray, colour: int, size: int) -> np.ndarray:
    """bool[N]: the empty points next to ``dead`` stones of ``colour``'s opponent (their
    liberties): where ``colour`` plays to capture them."""
    board = np.asarray(board).reshape(-1)
    table = grid.neighbour_table(size)
    theirs = np.asarray(dead, bool) & (board == -colour)
    next_to = np.zeros(board.shape[0] + 1, bool)  # the last entry stands for off board
    next_to[table[theirs].reshape(-1)] = True
    return next_to[:-1] & (board == 0)


__all__ = ["DEAD_BELOW", "chains", "cleanup_points", "dead_stones"]
