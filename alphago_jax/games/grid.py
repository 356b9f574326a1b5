"""Square-grid helpers of the Go family: neighbour stencils and GTP vertices.

Points are flat indices ``row * size + col``; row 0 is the top edge (GTP row ``size``), column 0
is GTP column ``A``. Neighbours come from pad-and-slice stencils rather than gathers: dense
shifts vectorise well on every backend.
"""

from __future__ import annotations

import functools

import jax.numpy as jnp
import numpy as np

GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"  # GTP skips the letter I.


def neighbours(x: jnp.ndarray, size: int, fill) -> tuple[jnp.ndarray, ...]:
    """``(up, down, left, right)``, each like ``x`` (``[size * size]``, any dtype): the four
    orthogonal neighbours' values of every point, ``fill`` beyond the edge.

    Four arrays rather than one stacked: combined elementwise they keep vmapped layouts
    contiguous, where a direction axis costs transposes.
    """
    n = size * size
    fill = jnp.asarray(fill, dtype=x.dtype)
    # One-dimensional shifts of the flat board: contiguous slices vectorise better than 2-D
    # windows; the left and right neighbours wrap across rows, so the edge columns are masked.
    p = jnp.pad(x, size, constant_values=fill)
    col = np.arange(n) % size
    up = p[:n]
    down = p[2 * size:]
    left = jnp.where(col == 0, fill, p[size - 1:size - 1 + n])
    right = jnp.where(col == size - 1, fill, p[size + 1:size + 1 + n])
    return up, down, left, right


def any_of(values) -> jnp.ndarray:
    """Elementwise OR of a sequence of boolean arrays."""
    return functools.reduce(jnp.logical_or, values)


def sum_of(values) -> jnp.ndarray:
    """Elementwise sum of a sequence of arrays."""
    return functools.reduce(jnp.add, values)


def dilate(mask: jnp.ndarray, size: int) -> jnp.ndarray:
    """bool[size*size]: points that are in ``mask`` or orthogonally next to a point in it."""
    return mask | any_of(neighbours(mask, size, False))


@functools.lru_cache(maxsize=None)
def neighbour_table(size: int) -> np.ndarray:
    """int32[size*size, 4]: flat index of each neighbour (up, down, left, right), -1 off board."""
    n = size * size
    idx = np.arange(n).reshape(size, size)
    p = np.pad(idx, 1, constant_values=-1)
    table = np.stack([p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]], axis=-1)
    return table.reshape(n, 4).astype(np.int32)


def chain_and_liberties(board: np.ndarray, size: int, point: int) -> tuple[set[int], set[int]]:
    """The chain through the stone at ``point`` on an int8[size*size] board and its liberties
    (numpy, on the host: error messages, GTP answers)."""
    table = neighbour_table(size)
    colour, chain, libs, todo = board[point], {point}, set(), [point]
    while todo:
        for q in table[todo.pop()]:
            q = int(q)
            if q < 0 or q in chain:
                continue
            if board[q] == 0:
                libs.add(q)
            elif board[q] == colour:
                chain.add(q)
                todo.append(q)
    return chain, libs


@functools.lru_cache(maxsize=None)
def neighbour_index_planes(size: int) -> np.ndarray:
    """int32[4, size*size]: the flat index of each neighbour, 0 where off board (mask it)."""
    return np.maximum(neighbour_table(size).T, 0).astype(np.int32)


def to_vertex(point: int, size: int) -> str:
    """GTP vertex of a flat point index, or ``"pass"`` for ``size * size``."""
    if point == size * size:
        return "pass"
    if not 0 <= point < size * size:
        raise ValueError(f"point {point} is off a {size}x{size} board")
    row, col = divmod(int(point), size)
    return f"{GTP_COLUMNS[col]}{size - row}"


def from_vertex(vertex: str, size: int) -> int:
    """Flat point index of a GTP vertex such as ``"D4"`` (``size * size`` for ``"pass"``);
    ``ValueError`` naming a malformed or off-board vertex."""
    v = vertex.strip().upper()
    if v == "PASS":
        return size * size
    if len(v) < 2 or v[0] not in GTP_COLUMNS[:size] or not v[1:].isdigit():
        raise ValueError(f"invalid vertex {vertex!r} for a {size}x{size} board")
    col = GTP_COLUMNS.index(v[0])
    number = int(v[1:])
    if not 1 <= number <= size:
        raise ValueError(f"invalid vertex {vertex!r} for a {size}x{size} board")
    return (size - number) * size + col


def render(board, size: int, last_move: int | None = None) -> str:
    """A text diagram of a board (+1 black ``X``, -1 white ``O``, 0 empty), GTP row labels, the
    last move (if given) bracketed."""
    b = np.asarray(board).reshape(size, size)
    cols = "   " + " ".join(GTP_COLUMNS[:size])
    lines = [cols]
    for r in range(size):
        cells = ""
        for c in range(size):
            mark = {1: "X", -1: "O"}.get(int(b[r, c]), ".")
            point = r * size + c
            if last_move is not None and point == last_move:
                cells = cells[:-1] + f"({mark})"
            else:
                cells += f"{mark} "
        lines.append(f"{size - r:>2} {cells.rstrip()}")
    lines.append(cols)
    return "\n".join(lines)
