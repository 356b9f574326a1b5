"""What a player thinks of a position: per-move statistics, read from a search tree.

``tree_analysis`` turns the root of a (batch-1) ``search.SearchTree`` into ``MoveInfo`` rows:
visits, win rate and prior of each searched move and its principal variation (the most
visited child, repeatedly). ``lz_analyze_line`` formats them the way Leela Zero's
``lz-analyze`` does, which is what Sabaki and Lizzie read::

    info move D4 visits 120 winrate 5321 prior 1203 order 0 pv D4 Q16 info move ...

(win rate and prior in units of 0.01%, win rate for the player to move).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from alphago_jax.games import grid


@dataclasses.dataclass(frozen=True)
class MoveInfo:
    """One candidate move of an analysis.

    Attributes:
      action: the move (a point, or ``size * size`` for pass).
      visits: simulations through it (1 for players that do not search).
      winrate: its value for the player to move, in [0, 1] (0.5 when unknown).
      prior: the prior probability of the move.
      pv: the principal variation starting with ``action``.
    """

    action: int
    visits: int
    winrate: float
    prior: float
    pv: tuple[int, ...]


def tree_analysis(tree, max_moves: int = 10, pv_length: int = 12) -> list[MoveInfo]:
    """The most visited moves at the root of game 0 of ``tree``, most visited first.

    Args:
      tree: a ``search.SearchTree`` (batch axis first; game 0 is read).
      max_moves: at most this many moves.
      pv_length: at most this many moves in each principal variation.
    """
    children = np.asarray(tree.children[0])  # [C, A]
    visits = np.asarray(tree.visits[0])
    value_sum = np.asarray(tree.value_sum[0])
    reward = np.asarray(tree.reward[0])
    discount = np.asarray(tree.discount[0])
    prior = np.asarray(tree.prior[0, 0])
    kids = children[0]
    rows = []
    for action in np.flatnonzero(kids >= 0):
        node = int(kids[action])
        n = int(visits[node])
        if n <= 0:
            continue
        q = (reward[node] * n + discount[node] * value_sum[node]) / n  # for the root's player
        rows.append(MoveInfo(int(action), n, float(np.clip((q + 1) / 2, 0, 1)), float(prior[action]),
                             _principal_variation(children, visits, int(action), node, pv_length)))
    rows.sort(key=lambda m: (-m.visits, -m.winrate, m.action))
    return rows[:max_moves]


def _principal_variation(children, visits, action, node, length) -> tuple[int, ...]:
    pv = [action]
    while len(pv) < length:
        kids = children[node]
        has = kids >= 0
        if not has.any():
            break
        n = np.where(has, visits[np.maximum(kids, 0)], 0)
        best = int(np.argmax(n))
        if n[best] <= 0:
            break
        pv.append(best)
        node = int(kids[best])
    return tuple(pv)


def lz_analyze_line(moves: list[MoveInfo], size: int) -> str:
    """One ``lz-analyze`` update: an ``info move ...`` group per move, on one line."""
    parts = []
    for order, m in enumerate(moves):
        pv = " ".join(grid.to_vertex(a, size) for a in m.pv)
        parts.append(f"info move {grid.to_vertex(m.action, size)} visits {m.visits} "
                     f"winrate {int(round(m.winrate * 10000))} prior {int(round(m.prior * 10000))} "
                     f"order {order} pv {pv}")
    return " ".join(parts)
