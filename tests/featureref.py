"""Plain-Python references for AlphaGo's input planes, written from the definitions.

Boards are flat lists or arrays (+1 black, -1 white, 0 empty), index ``row * size + col``.
Every what-if plane plays the move on a copy of the board, removes the captured chains and
flood-fills the result: no shortcut shared with the JAX code.
"""

from __future__ import annotations

import numpy as np


def neighbours(q, size):
    r, c = divmod(q, size)
    out = []
    if r > 0:
        out.append(q - size)
    if r < size - 1:
        out.append(q + size)
    if c > 0:
        out.append(q - 1)
    if c < size - 1:
        out.append(q + 1)
    return out


def chain(board, q, size):
    """(stones, liberties) of the chain through q, as sets."""
    colour = board[q]
    stones, libs, todo = {q}, set(), [q]
    while todo:
        x = todo.pop()
        for y in neighbours(x, size):
            if board[y] == 0:
                libs.add(y)
            elif board[y] == colour and y not in stones:
                stones.add(y)
                todo.append(y)
    return stones, libs


def play(board, q, p, size):
    """(new board, number captured) after p plays q (no legality check)."""
    b = list(board)
    b[q] = p
    captured = 0
    for y in neighbours(q, size):
        if b[y] == -p:
            stones, libs = chain(b, y, size)
            if not libs:
                for s in stones:
                    b[s] = 0
                captured += len(stones)
    return b, captured


def is_own_eye(board, q, p, size):
    if board[q] != 0 or any(board[y] != p for y in neighbours(q, size)):
        return False
    r, c = divmod(q, size)
    on_edge = r in (0, size - 1) or c in (0, size - 1)
    faults = 1 if on_edge else 0  # a point on the edge starts with one fault
    for dr in (-1, 1):
        for dc in (-1, 1):
            rr, cc = r + dr, c + dc
            if 0 <= rr < size and 0 <= cc < size and board[rr * size + cc] == -p:
                faults += 1
    return faults <= 1


def alphago_planes(board, p, legal, ages, size, value_net=False):
    """float32[size, size, 48 or 49]; the ladder planes come from ``ladder_planes``.

    Args:
      board: flat board; p: colour to move; legal: bool[N] legal points;
      ages: int[N], turns since each stone was placed (1 = the last move), ignored on empty points.
    """
    n = size * size
    board = [int(v) for v in board]
    out = np.zeros((n, 49 if value_net else 48), np.float32)
    for q in range(n):
        v = board[q]
        out[q, 0 if v == p else 1 if v == -p else 2] = 1
        out[q, 3] = 1
        if v != 0:
            out[q, 4 + min(int(ages[q]), 8) - 1] = 1
            _, libs = chain(board, q, size)
            out[q, 12 + min(len(libs), 8) - 1] = 1
        elif legal[q]:
            after, captured = play(board, q, p, size)
            stones, libs = chain(after, q, size)
            out[q, 20 + min(captured, 7)] = 1
            if len(libs) == 1:
                out[q, 28 + min(len(stones), 8) - 1] = 1
            if libs:
                out[q, 36 + min(len(libs), 8) - 1] = 1
            out[q, 46] = not is_own_eye(board, q, p, size)
        if value_net:
            out[q, 48] = p == 1
    capture, escape = ladder_planes(board, p, legal, size)
    out[sorted(capture), 44] = 1
    out[sorted(escape), 45] = 1
    return out.reshape(size, size, -1)


def ladder_captured(board, prey, hunter, size, depth):
    """Whether the chain through ``prey`` (in atari, to move) dies in a ladder: full search.

    The prey escapes by capturing a hunter chain next to it in atari; else it extends at its
    liberty (caught with <= 1 liberty, free with >= 3); with 2 the hunter tries both ataris
    (a stone without liberties is illegal) and succeeds if either catches it within ``depth``.
    """
    stones, libs = chain(board, prey, size)
    for s in stones:
        for y in neighbours(s, size):
            if board[y] == hunter and len(chain(board, y, size)[1]) == 1:
                return False
    (lib,) = libs
    b2, _ = play(board, lib, -hunter, size)
    _, l2 = chain(b2, prey, size)
    if len(l2) <= 1:
        return True
    if len(l2) >= 3 or depth == 0:
        return False
    for a in sorted(l2):
        b3, _ = play(b2, a, hunter, size)
        if chain(b3, a, size)[1] and ladder_captured(b3, prey, hunter, size, depth - 1):
            return True
    return False


def ladder_planes(board, p, legal, size):
    """(capture, escape) sets of points, read with ``ladder_captured`` (depth 2 * size + 2)."""
    board = [int(v) for v in board]
    depth = 2 * size + 2
    capture, escape = set(), set()
    for q in range(size * size):
        if not legal[q]:
            continue
        after, _ = play(board, q, p, size)
        for y in neighbours(q, size):
            if board[y] == -p and len(chain(board, y, size)[1]) == 2 and len(chain(after, y, size)[1]) == 1:
                if ladder_captured(after, y, p, size, depth):
                    capture.add(q)
        if any(board[y] == p and chain(board, y, size)[1] == {q} for y in neighbours(q, size)):
            _, libs = chain(after, q, size)
            if len(libs) >= 3:
                escape.add(q)
            elif len(libs) == 2:
                caught = False
                for a in sorted(libs):
                    b3, _ = play(after, a, -p, size)
                    if chain(b3, a, size)[1] and ladder_captured(b3, q, -p, size, depth - 1):
                        caught = True
                if not caught:
                    escape.add(q)
    return capture, escape
