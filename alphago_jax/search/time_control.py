"""Time control: a budget per move from the clock, and a search run in chunks until it is spent::

    budget = move_budget(time_left=300.0, empty_points=int(jnp.sum(state.board == 0)))
    out, tree, sims = search_for(search, params, tree, key, budget)
"""

from __future__ import annotations

import time
from typing import Callable

import jax
import numpy as np

from alphago_jax.search.config import SearchOutput
from alphago_jax.search.tree import SearchTree, TreeSearch


def move_budget(time_left: float, stones_left: int = 0, *, empty_points: int, min_moves: int = 10,
                max_fraction: float = 0.3, margin: float = 0.1) -> float:
    """Seconds to spend on this move: the time left over the moves still expected (AlphaGo's
    allocation), at most ``max_fraction`` of it in main time.

    Args:
      time_left: seconds left on the clock (main time, or the current byo-yomi period).
      stones_left: moves to play within ``time_left`` (Canadian byo-yomi); 0 in main time.
      empty_points: empty points on the board: about a third of them are the player's moves
        still to come (at least ``min_moves``).
      max_fraction: never more than this fraction of ``time_left`` in main time.
      margin: seconds kept back for the network round trip and the protocol.
    """
    if time_left <= 0:
        return 0.0
    if stones_left > 0:
        share = time_left / stones_left
    else:
        share = min(time_left / max(min_moves, empty_points // 3), max_fraction * time_left)
    return max(0.0, share - margin)


TIME_CHUNK = 16
"""Simulations per chunk of a timed search: small, so that a move overruns its budget by one short chunk at most."""


def time_chunk(config) -> int:
    """``search_for``'s default chunk: ``TIME_CHUNK``, at most ``num_simulations``, a multiple of ``leaf_batch``."""
    leaf_batch = getattr(config, "leaf_batch", 1)
    return min(config.num_simulations, max(leaf_batch, TIME_CHUNK // leaf_batch * leaf_batch))


def search_for(search: TreeSearch, params, tree: SearchTree, key, seconds: float, chunk: int | None = None,
               clock: Callable[[], float] = time.perf_counter) -> tuple[SearchOutput, SearchTree, int]:
    """``(SearchOutput, tree, simulations run)``: ``search`` (a ``TreeSearch``) on ``tree`` for
    about ``seconds``, in chunks of ``chunk`` simulations (default ``time_chunk``, a multiple of
    ``leaf_batch``).

    At least one chunk runs; another follows while the elapsed time plus the last chunk's fits in
    ``seconds`` and the tree has room. ``clock`` (monotonic seconds) is a parameter for tests.
    """
    chunk = chunk or time_chunk(search.config)
    begin = clock()
    k_start, k_move, key = jax.random.split(key, 3)
    tree = search.start(params, tree, k_start)
    done = 0
    while True:
        t0 = clock()
        key, k = jax.random.split(key)
        tree = jax.block_until_ready(search.simulate(params, tree, k, chunk))
        done += chunk
        now = clock()
        room = int(np.max(np.asarray(tree.num_nodes))) + chunk <= search.capacity
        if not room or (now - begin) + (now - t0) > seconds:
            break
    return search.result(tree, k_move), tree, done
