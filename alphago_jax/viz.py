"""Pictures for notebooks: boards, heatmaps over a board, input planes, search trees.

``draw_board`` draws a Go-family board or a Hex rhombus with stones, the last move, an optional
heatmap (e.g. a policy) and labels; ``draw_boards`` a grid of them; ``draw_planes`` input planes
``[size, size, C]``; ``draw_tree`` the most visited part of a ``search.SearchTree`` and
``principal_variation`` its most visited path. Boards are flat ``[size * size]`` (or ``[size,
size]``) arrays, +1 black, -1 white, 0 empty, row 0 the top edge. matplotlib only: given ``ax``
a function draws into it, else it makes its own pyplot figure.

Layer: reads arrays only (game states, search trees); imports ``games.grid`` for vertex names.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from alphago_jax.games import grid

BOARD_COLOUR = "#dcb35c"
_STAR_POINTS = {9: (2, 4, 6), 13: (3, 6, 9), 19: (3, 9, 15)}


def _axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)[1]


def _board(board, size: int | None):
    b = np.asarray(board).reshape(-1)
    size = size or math.isqrt(b.size)
    if size * size != b.size:
        raise ValueError(f"a board of {b.size} points is not square; give size")
    return b, size


def _hex_xy(point: int, size: int) -> tuple[float, float]:
    """Centre of a Hex cell: each row half a cell right of the one above (``games.hex``)."""
    r, c = divmod(point, size)
    return c + 0.5 * r, -r * math.sqrt(3) / 2


def _go_xy(point: int, size: int) -> tuple[float, float]:
    r, c = divmod(point, size)
    return float(c), float(size - 1 - r)


def draw_board(board, size: int | None = None, *, ax=None, last_move: int | None = None, heat=None,
               labels: Mapping[int, str] | Sequence[str] | None = None, title: str | None = None,
               hex: bool = False, coords: bool = True, cmap: str = "viridis", heat_range=None):
    """Draw one board; returns the axes.

    Args:
      board: int[N] or int[S, S], +1 black, -1 white, 0 empty.
      size: the board side (default: the square root of N).
      last_move: a point to mark (ignored if None, a pass or off the board).
      heat: float[N] (or [N + 1]: the pass entry goes into the title) shaded on the points,
        e.g. a policy or visit distribution; NaN points are left unshaded.
      labels: text per point: ``{point: text}`` or a sequence of N strings ("" for none).
      title: the axes' title.
      hex: draw a Hex rhombus (hexagonal cells; black joins top and bottom, white left and right).
      coords: GTP coordinates (A.., rows from ``size`` at the top) around a Go board.
      cmap, heat_range: the heatmap's colour map and ``(vmin, vmax)`` (default its min and max).
    """
    b, size = _board(board, size)
    n = size * size
    ax = _axes(ax, (0.63 * size + 1.2, 0.37 * size + 1.2) if hex else (0.42 * size + 1.2,) * 2)
    xy = _hex_xy if hex else _go_xy
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize="medium")

    fills = [None] * n  # the heatmap's colour per point
    if heat is not None:
        fills, note = _heat_fills(heat, n, cmap, heat_range)
        if note:
            ax.set_title(f"{title}\n{note}" if title else note, fontsize="medium")
    if hex:
        _draw_hex_cells(ax, size, fills)
    else:
        _draw_go_grid(ax, size, fills, coords)
    stone_r = 0.47 if not hex else 0.4
    _draw_stones(ax, b, size, xy, stone_r, last_move)
    if labels is not None:
        _draw_labels(ax, b, size, xy, labels, fills)
    return ax


def _heat_fills(heat, n: int, cmap: str, heat_range):
    """(colour or None per point, the pass entry's note or None) of a heatmap over ``n`` points."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    h = np.asarray(heat, np.float64).reshape(-1)
    note = f"pass {h[n]:.2f}" if h.size == n + 1 else None
    h = h[:n]
    finite = h[np.isfinite(h)]
    lo, hi = heat_range or ((finite.min(), finite.max()) if finite.size else (0.0, 1.0))
    norm, cm = Normalize(lo, hi if hi > lo else lo + 1e-9), colormaps[cmap]
    return [cm(norm(v)) if np.isfinite(v) else None for v in h], note


def _draw_hex_cells(ax, size: int, fills) -> None:
    """The Hex rhombus's cells (shaded by ``fills``) and the players' edges."""
    import matplotlib.patches as patches
    from matplotlib import patheffects

    n = size * size
    radius = 1 / math.sqrt(3)
    for p in range(n):
        ax.add_patch(patches.RegularPolygon(_hex_xy(p, size), 6, radius=radius, facecolor=fills[p] or BOARD_COLOUR,
                                            edgecolor="#7a5c2e", lw=0.8))
    # The players' edges: black top and bottom, white left and right.
    for p0, p1, dx, dy, colour in ((0, size - 1, 0, 0.6, "black"), (n - size, n - 1, 0, -0.6, "black"),
                                   (0, n - size, -0.65, 0, "white"), (size - 1, n - 1, 0.65, 0, "white")):
        (x0, y0), (x1, y1) = _hex_xy(p0, size), _hex_xy(p1, size)
        ax.plot([x0 + dx, x1 + dx], [y0 + dy, y1 + dy], color=colour, lw=3, solid_capstyle="round",
                path_effects=[patheffects.withStroke(linewidth=4.5, foreground="black")])
    ax.set_xlim(-1.2, size - 1 + 0.5 * (size - 1) + 1.2)
    ax.set_ylim(-(size - 1) * math.sqrt(3) / 2 - 1.2, 1.2)


def _draw_go_grid(ax, size: int, fills, coords: bool) -> None:
    """A Go board: wood, heatmap squares (``fills``), lines, star points and GTP coordinates."""
    import matplotlib.patches as patches

    margin = 1.3 if coords else 0.7
    ax.add_patch(patches.Rectangle((-margin, -margin), size - 1 + 2 * margin, size - 1 + 2 * margin,
                                   facecolor=BOARD_COLOUR, lw=0))
    for p in range(size * size):
        if fills[p] is not None:
            x, y = _go_xy(p, size)
            ax.add_patch(patches.Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=fills[p], lw=0))
    for i in range(size):
        ax.plot([0, size - 1], [i, i], color="black", lw=0.6, zorder=1)
        ax.plot([i, i], [0, size - 1], color="black", lw=0.6, zorder=1)
    for r in _STAR_POINTS.get(size, ()):
        for c in _STAR_POINTS[size]:
            ax.plot(c, size - 1 - r, "o", color="black", ms=3, zorder=1)
    if coords:
        for i in range(size):
            for x, y, text in ((i, -0.95, grid.GTP_COLUMNS[i]), (-0.95, i, str(i + 1))):
                ax.text(x, y, text, ha="center", va="center", fontsize="x-small")
    ax.set_xlim(-1.3, size + 0.3)
    ax.set_ylim(-1.3, size + 0.3)


def _draw_stones(ax, b, size: int, xy, stone_r: float, last_move: int | None) -> None:
    """The stones of ``b`` (int[N]) and a ring on the last move (if on the board)."""
    import matplotlib.patches as patches

    for p in np.flatnonzero(b):
        face, edge = ("black", "black") if b[p] > 0 else ("white", "#333333")
        ax.add_patch(patches.Circle(xy(p, size), stone_r, facecolor=face, edgecolor=edge, lw=0.8, zorder=2))
    if last_move is not None and 0 <= last_move < size * size:
        mark = "white" if b[last_move] > 0 else ("black" if b[last_move] < 0 else "red")
        ax.add_patch(patches.Circle(xy(last_move, size), stone_r * 0.45, facecolor="none", edgecolor=mark,
                                    lw=1.5, zorder=3))


def _draw_labels(ax, b, size: int, xy, labels, fills) -> None:
    """Text on points, white on black stones and dark heatmap colours, black elsewhere."""
    items = labels.items() if isinstance(labels, Mapping) else enumerate(labels)
    for p, text in items:
        if text:
            under = fills[p] if b[p] == 0 else None
            dark = b[p] > 0 or (under is not None and 0.299 * under[0] + 0.587 * under[1] + 0.114 * under[2] < 0.5)
            ax.text(*xy(p, size), text, ha="center", va="center", fontsize="x-small", zorder=4,
                    color="white" if dark else "black")


def draw_boards(boards, size: int | None = None, *, titles: Sequence[str] | None = None, cols: int = 4,
                last_moves: Sequence[int | None] | None = None, heats=None, hex: bool = False,
                scale: float = 2.4, coords: bool = False, **kwargs):
    """Draw a grid of boards (``boards``: [K, N]); returns the figure."""
    import matplotlib.pyplot as plt

    boards = np.asarray(boards)
    k = boards.shape[0]
    cols = max(1, min(cols, k))
    rows = -(-k // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(scale * cols, scale * rows), squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= k:
            ax.axis("off")
            continue
        draw_board(boards[i], size, ax=ax, title=titles[i] if titles else None, hex=hex, coords=coords,
                   last_move=last_moves[i] if last_moves is not None else None,
                   heat=heats[i] if heats is not None else None, **kwargs)
    fig.tight_layout()
    return fig


def draw_planes(planes, names: Sequence[str] | None = None, *, cols: int = 8, scale: float = 1.3,
                cmap: str = "Greys"):
    """Draw input planes ``[size, size, C]`` as a grid of small images with their names; returns
    the figure. Each image runs from 0 (white) to 1 (dark); a constant plane is drawn flat."""
    import matplotlib.pyplot as plt

    x = np.asarray(planes, np.float32)
    c = x.shape[-1]
    rows = -(-c // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(scale * cols, (scale + 0.25) * rows), squeeze=False)
    for i, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if i >= c:
            ax.axis("off")
            continue
        ax.imshow(x[..., i], cmap=cmap, vmin=0.0, vmax=max(1.0, float(x[..., i].max())), interpolation="nearest")
        ax.set_title(f"{i}: {names[i]}" if names else str(i), fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------------------- search trees

def _tree_arrays(tree, game: int):
    """numpy arrays of game ``game`` of a batched ``SearchTree``, and its edge statistics."""
    get = {k: np.asarray(getattr(tree, k)[game]) for k in
           ("visits", "value_sum", "reward", "discount", "children", "num_nodes")}
    n = get["visits"]
    with np.errstate(invalid="ignore", divide="ignore"):
        # Q of the edge into each node, for the player who moved into it (``tree._child_stats``).
        q = np.where(n > 0, (get["reward"] * n + get["discount"] * get["value_sum"]) / np.maximum(n, 1), np.nan)
    return get["children"], n, q, int(get["num_nodes"])


def principal_variation(tree, game: int = 0, first: int | None = None) -> list[int]:
    """The actions of the most visited path from the root of game ``game`` of a ``SearchTree``,
    starting with ``first`` when given."""
    children, visits, _, _ = _tree_arrays(tree, game)
    node, path = 0, []
    while True:
        kids = children[node]
        if first is not None and not path:
            a = first
        else:
            counts = np.where(kids >= 0, visits[np.maximum(kids, 0)], 0)
            a = int(np.argmax(counts)) if counts.max(initial=0) > 0 else -1
        if a < 0 or kids[a] < 0 or visits[kids[a]] == 0:
            return path
        path.append(a)
        node = int(kids[a])


def draw_tree(tree, game: int = 0, *, size: int | None = None, max_depth: int = 3,
              max_children: int | Sequence[int] = 3, min_visits: int = 1, chosen: int | None = None, ax=None,
              title: str | None = None):
    """Draw the most visited part of game ``game`` of a batched ``search.SearchTree``, root on the
    left; returns the axes.

    A node's area is its visits, its colour the Q of its move for the mover (red -1 .. green +1),
    its label the move, N and Q (the root: V); the principal variation (from ``chosen``, the move
    played, when given) is bold. ``size`` names moves as vertices (default: from the actions);
    ``max_depth`` moves are drawn below the root, at most ``max_children`` per node (one number
    or one per depth) with at least ``min_visits`` each.
    """
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    children, visits, q, _ = _tree_arrays(tree, game)
    size = size or math.isqrt(children.shape[-1] - 1)
    widths = [max_children] * max_depth if isinstance(max_children, int) else list(max_children)
    pv = principal_variation(tree, game, chosen)
    on_pv, node = {0}, 0
    for a in pv:
        node = int(children[node, a])
        on_pv.add(node)

    # Nodes to draw, depth first: (node, action, depth, parent's index); y: a tidy layout, the
    # leaves one under the other in that order, each parent level with the middle of its children.
    shown: list[tuple[int, int, int, int]] = []
    ys: list[float] = []
    leaves = [0]

    def place(node, action, depth, parent) -> int:
        me = len(shown)
        shown.append((node, action, depth, parent))
        ys.append(0.0)
        kids = sorted((-int(visits[k]), a, int(k)) for a, k in enumerate(children[node])
                      if k >= 0 and visits[k] >= min_visits)
        width = widths[depth] if depth < min(max_depth, len(widths)) else 0
        placed = [place(k, a, depth + 1, me) for _, a, k in kids[:width]]
        if placed:
            ys[me] = sum(ys[j] for j in placed) / len(placed)
        else:
            ys[me], leaves[0] = -float(leaves[0]), leaves[0] + 1
        return me

    place(0, -1, 0, -1)
    depth_drawn = max(d for _, _, d, _ in shown)
    ax = _axes(ax, (2.4 * (depth_drawn + 1) + 0.5, 0.3 * leaves[0] + 0.8))
    cm, norm = colormaps["RdYlGn"], Normalize(-1, 1)
    top = max(int(visits[0]), 1)
    for i, (node, action, depth, parent) in enumerate(shown):
        if parent >= 0:
            bold = node in on_pv and shown[parent][0] in on_pv
            ax.plot([depth - 1, depth], [ys[parent], ys[i]], color="crimson" if bold else "#aaaaaa",
                    lw=2.5 if bold else 0.8, zorder=1)
        colour = "#cccccc" if depth == 0 or not np.isfinite(q[node]) else cm(norm(q[node]))
        ax.scatter([depth], [ys[i]], s=20 + 400 * visits[node] / top, color=colour, edgecolors="black",
                   linewidths=1.5 if node in on_pv else 0.5, zorder=2)
        if depth == 0:
            label = f"root  N {visits[0]}  V {float(np.asarray(tree.value_sum[game, 0])) / top:+.2f}"
        else:
            move = grid.to_vertex(action, size) if action <= size * size else str(action)
            label = f"{move}  N {visits[node]}  Q {q[node]:+.2f}"
        leaf = i == len(shown) - 1 or shown[i + 1][3] != i  # depth first: a child would come next
        ax.text(depth + 0.1, ys[i] if leaf else ys[i] + 0.12, label, ha="left", va="center" if leaf else "bottom",
                fontsize=7, zorder=3, fontweight="bold" if node in on_pv else "normal")
    ax.set_xlim(-0.3, depth_drawn + 1.1)
    ax.set_ylim(-leaves[0] + 0.3, 0.9)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize="medium")
    return ax


__all__ = ["BOARD_COLOUR", "draw_board", "draw_boards", "draw_planes", "draw_tree", "principal_variation"]
