"""Hex as pure JAX functions: one unbatched game per state, jit- and vmap-safe.

The rules are OpenSpiel's ``hex`` (checked move by move in ``tests/test_hex.py``). The board is
a ``size`` x ``size`` rhombus (3 to 19) of cells ``row * size + col``, each row drawn half a
cell right of the one above::

        a b c          (3 x 3: row 0)
         d e f         (row 1)
          g h i        (row 2)

so ``(row, col)`` touches ``(row, col - 1)``, ``(row, col + 1)``, ``(row - 1, col)``,
``(row - 1, col + 1)``, ``(row + 1, col - 1)`` and ``(row + 1, col)``. Black (+1) moves first
and wins by joining the top and bottom rows, white (-1) by joining the left and right columns (a
corner belongs to both its edges); the game ends at once, and has no draws and no pass. With
``swap=True``, action ``size * size`` is legal for white on the second move only: black's stone
at ``(r, c)`` becomes a white stone at ``(c, r)`` and black is to move (OpenSpiel's
``swap=true``; it counts as a move). An illegal action loses; actions after the end are ignored.
``returns`` is ``(+1, -1)`` if black won, ``(-1, +1)`` if white won, zeros until the end.

Move codes: player x action, in ``[0, 2 * num_actions)`` (``num_actions`` is ``size * size``,
plus 1 with swap; the swap's code is ``2 * num_actions - 1``). Hex is commutative: the same set
of codes reaches the same position in any order. A step is O(size^2) dense work: each stone
carries its group id and the group's edge flags (bit 0 top / left, bit 1 bottom / right); a new
stone merges its neighbours' groups and ORs their flags, and both flags set means a win.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games.base import BLACK, WHITE, Game

MIN_SIZE, MAX_SIZE = 3, 19
BOTH_EDGES = 3


@struct.dataclass
class HexState:
    """One game of Hex. N = size * size.

    Attributes:
      board: int8[N], +1 black, -1 white, 0 empty.
      to_play: int8[], +1 black to move, -1 white to move.
      group: int16[N], index of a stone of the same group (connected same-coloured stones); -1 empty.
      edges: int8[N], a stone's group's edge flags (bit 0 top / left, bit 1 bottom / right); 0 empty.
      move_count: int32[], actions played so far (a swap counts).
      terminal: bool[].
      winner: int8[], +1 or -1 once the game is over, else 0.
      last_move: int16[], the last action played, -1 at the start.
    """

    board: jnp.ndarray
    to_play: jnp.ndarray
    group: jnp.ndarray
    edges: jnp.ndarray
    move_count: jnp.ndarray
    terminal: jnp.ndarray
    winner: jnp.ndarray
    last_move: jnp.ndarray


@functools.lru_cache(maxsize=None)
def neighbour_table(size: int) -> np.ndarray:
    """int32[size*size, 6]: index of each hex neighbour (see the module docstring), -1 off board."""
    offsets = [(0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0)]
    table = np.full((size * size, 6), -1, np.int32)
    for r in range(size):
        for c in range(size):
            for k, (dr, dc) in enumerate(offsets):
                rr, cc = r + dr, c + dc
                if 0 <= rr < size and 0 <= cc < size:
                    table[r * size + c, k] = rr * size + cc
    return table


@functools.lru_cache(maxsize=None)
def edge_table(size: int) -> np.ndarray:
    """int8[2 colours (black, white), N]: the edge flags of each cell for that colour."""
    rows, cols = np.divmod(np.arange(size * size), size)
    black = (rows == 0) * 1 + (rows == size - 1) * 2
    white = (cols == 0) * 1 + (cols == size - 1) * 2
    return np.stack([black, white]).astype(np.int8)


@dataclasses.dataclass(frozen=True)
class Hex(Game):
    """Hex on a ``size`` x ``size`` rhombus. Hashable: close over it with ``jax.jit``.

    Attributes:
      size: board side, 3 to 19.
      swap: if True, white may swap on the second move (action ``size * size``).
    """

    size: int = 11
    swap: bool = False

    def __post_init__(self):
        s = self.size
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or not MIN_SIZE <= s <= MAX_SIZE:
            raise ValueError(f"Hex board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {s!r}")
        if not isinstance(self.swap, (bool, np.bool_)):
            raise ValueError(f"Hex swap must be True or False, got {self.swap!r}")
        object.__setattr__(self, "size", int(s))
        object.__setattr__(self, "swap", bool(self.swap))

    # ----------------------------------------------------------------------------- sizes
    @property
    def num_actions(self) -> int:
        return self.num_points + int(self.swap)

    @property
    def swap_action(self) -> int:
        """The swap action (``size * size``); only legal with ``swap=True``."""
        return self.num_points

    @property
    def name(self) -> str:
        return "hex"

    # ------------------------------------------------------------------------- contract
    def init(self) -> HexState:
        """The empty board, black to play."""
        n = self.num_points
        return HexState(
            board=jnp.zeros(n, jnp.int8),
            to_play=jnp.int8(BLACK),
            group=jnp.full(n, -1, jnp.int16),
            edges=jnp.zeros(n, jnp.int8),
            move_count=jnp.int32(0),
            terminal=jnp.bool_(False),
            winner=jnp.int8(0),
            last_move=jnp.int16(-1),
        )

    def init_from_board(self, board, to_play=BLACK) -> HexState:
        """A game from setup stones; already won if a player joins their edges. ``move_count``: the
        number of stones."""
        n = self.num_points
        board = jnp.asarray(board, jnp.int8).reshape(n)
        to_play = jnp.asarray(to_play, jnp.int8)
        group = _label_groups(board, self.size)
        seg = jnp.where(board != 0, group, n).astype(jnp.int32)
        table = jnp.asarray(edge_table(self.size))
        own = jnp.where(board == BLACK, table[0], jnp.where(board == WHITE, table[1], 0)).astype(jnp.int32)
        bits = jnp.stack([own & 1, own >> 1], axis=-1)
        per_group = jax.ops.segment_max(bits, seg, num_segments=n + 1)[seg]
        edges = jnp.where(board != 0, per_group[:, 0] | (per_group[:, 1] << 1), 0).astype(jnp.int8)
        won = (edges == BOTH_EDGES) & (board != 0)
        winner = jnp.where(jnp.any(won & (board == BLACK)), BLACK, jnp.where(jnp.any(won & (board == WHITE)), WHITE, 0))
        return HexState(
            board=board,
            to_play=to_play,
            group=group,
            edges=edges,
            move_count=jnp.sum(board != 0, dtype=jnp.int32),
            terminal=winner != 0,
            winner=winner.astype(jnp.int8),
            last_move=jnp.int16(-1),
        )

    def legal_action_mask(self, state: HexState) -> jnp.ndarray:
        """bool[num_actions]: empty cells, plus the swap on white's first move; none once over."""
        legal = (state.board == 0) & ~state.terminal
        if self.swap:
            legal = jnp.concatenate([legal, (self._swap_allowed(state) & ~state.terminal)[None]])
        return legal

    def step(self, state: HexState, action) -> HexState:
        n, size = self.num_points, self.size
        a = jnp.asarray(action, jnp.int32)
        c = state.to_play
        over = state.terminal
        cell = jnp.clip(a, 0, n - 1)
        cell_ok = (a >= 0) & (a < n) & (state.board[cell] == 0)
        swap_ok = (a == n) & self._swap_allowed(state) if self.swap else jnp.bool_(False)
        illegal = ~over & ~(cell_ok | swap_ok)
        play = ~over & cell_ok

        # Merge the new stone with the groups of its same-coloured neighbours.
        points = jnp.arange(n)
        placed = (points == a) & play
        nbr = jnp.asarray(neighbour_table(size))[cell]
        nbr_c = jnp.maximum(nbr, 0)
        same = play & (nbr >= 0) & (state.board[nbr_c] == c)
        nbr_ids = jnp.where(same, state.group[nbr_c], -2).astype(jnp.int16)
        nbr_edges = jnp.where(same, state.edges[nbr_c], 0)
        table = jnp.asarray(edge_table(size))
        merged, flags = placed, jnp.where(c == BLACK, table[0, cell], table[1, cell])
        for k in range(6):  # six separate compares: no [N, 6] intermediate under vmap
            merged = merged | (state.group == nbr_ids[k])
            flags = flags | nbr_edges[k]
        won = play & (flags == BOTH_EDGES)

        board = jnp.where(placed, c, state.board)
        group = jnp.where(merged, a, state.group).astype(jnp.int16)
        edges = jnp.where(merged, flags, state.edges).astype(jnp.int8)

        if self.swap:
            # Black's single stone at (r, c) becomes a white stone at (c, r).
            do_swap = ~over & swap_ok
            mirrored = -state.board.reshape(size, size).T.reshape(n)
            board = jnp.where(do_swap, mirrored, board)
            group = jnp.where(do_swap, jnp.where(mirrored != 0, points, -1), group).astype(jnp.int16)
            edges = jnp.where(do_swap, jnp.where(mirrored != 0, table[1], 0), edges).astype(jnp.int8)
            play = play | do_swap

        return HexState(
            board=board,
            to_play=jnp.where(over, c, -c).astype(jnp.int8),
            group=group,
            edges=edges,
            move_count=state.move_count + play,
            terminal=over | illegal | won,
            winner=jnp.where(won, c, jnp.where(illegal, -c, state.winner)).astype(jnp.int8),
            last_move=jnp.where(play, a, state.last_move).astype(jnp.int16),
        )

    def is_terminal(self, state: HexState) -> jnp.ndarray:
        return state.terminal

    def returns(self, state: HexState) -> jnp.ndarray:
        """float32[2]: (black, white), +1 for the winner and -1 for the loser; zeros until the end."""
        w = state.winner.astype(jnp.float32)
        return jnp.where(state.terminal, jnp.stack([w, -w]), 0.0).astype(jnp.float32)

    # ------------------------------------------------------------------------- internals
    def _swap_allowed(self, state: HexState) -> jnp.ndarray:
        return (state.move_count == 1) & (state.to_play == WHITE)


@functools.partial(jax.jit, static_argnums=1)
def _label_groups(board, size):
    """int16[N]: group ids (smallest index in the group) by min-label propagation; -1 empty."""
    n = size * size
    big = jnp.int32(n)
    stone = board != 0
    nbr = jnp.asarray(neighbour_table(size))
    nbr_c = jnp.maximum(nbr, 0)
    same = (nbr >= 0) & (board[nbr_c] == board[:, None]) & stone[:, None]
    label = jnp.where(stone, jnp.arange(n, dtype=jnp.int32), big)

    def body(carry):
        lab, _ = carry
        new = jnp.minimum(lab, jnp.min(jnp.where(same, lab[nbr_c], big), axis=1))
        return new, jnp.any(new != lab)

    label, _ = jax.lax.while_loop(lambda c: c[1], body, (label, jnp.bool_(True)))
    return jnp.where(stone, label, -1).astype(jnp.int16)
