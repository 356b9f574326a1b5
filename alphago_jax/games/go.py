"""Go as pure JAX functions: one unbatched game per state, jit- and vmap-safe.

Rules followed (those of the Computer Go Olympiad and CGOS, i.e. Tromp-Taylor with komi):

- Board sizes 2 to 19; actions are points ``row * size + col`` (row 0 is the top edge) and
  ``size * size`` is pass. Black moves first.
- A stone or chain without liberties after the opponent's move is captured.
- Suicide is illegal (``allow_suicide=True`` allows it: the suicided chain is removed).
- Positional superko: a move that would recreate any earlier whole-board position of the game
  (including the start position) is masked out of the legal moves. ``superko=False`` uses the
  simple ko rule instead (no immediate recapture of a single stone).
- Pass is always legal. The game ends after two consecutive passes, after ``max_moves`` moves
  (passes included; default ``2 * size * size``), or when a player steps an illegal action,
  which loses.
- Score: Tromp-Taylor area (stones plus empty regions that reach only one colour), black
  area - white area - komi. Positive means black wins; zero is a draw.

How it is fast: every step is O(size^2) dense vector work. Each stone carries its chain id
(the index of one of its stones) and, broadcast from its chain, the chain's single liberty when
the chain is in atari. Chains are found from pseudo-liberty count, sum and sum of squares,
summed per chain in one ``segment_sum``: a chain is in atari exactly when all its
pseudo-liberties are the same point. Board hashes are 64-bit additive Zobrist hashes (two
uint32 words). For positional superko only moves that capture (or suicide) need their resulting
hash looked up, by binary search in the sorted hash history; a plain move that would recreate
an earlier position is found the other way round: the history hash minus the current hash is a
single stone key, whose low bits name its point.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE, Game

MIN_SIZE, MAX_SIZE = 2, 19
_EDGE = 2  # board value used for off-board neighbours
_POINT_BITS = 9  # low bits of a stone key's first word hold its point (361 < 512)
_SENTINEL = np.uint32(0xFFFFFFFF)


@struct.dataclass
class GoState:
    """One game of Go. N = size * size, H = max_moves + 1 (1 without superko).

    Attributes:
      board: int8[N], +1 black, -1 white, 0 empty.
      to_play: int8[], +1 black to move, -1 white to move.
      chain_id: int16[N], index of a stone of the same chain; -1 on empty points.
      atari_lib: int16[N], for a stone whose chain has exactly one liberty, that liberty; else -1.
      legal: bool[N + 1], the legal actions of the player to move (all False once over).
      hash: uint32[2], 64-bit Zobrist hash of the board (additive, two words).
      history: uint32[H, 2], hashes of every position so far, sorted, padded with 0xFFFFFFFF.
      history_len: int32[], number of valid rows in ``history``.
      ko: int16[], the point forbidden by simple ko, -1 if none (only without superko).
      passes: int8[], consecutive passes just played.
      move_count: int32[], actions played so far (passes included).
      terminal: bool[].
      illegal_loser: int8[], colour of the player who stepped an illegal action, 0 if none.
      last_move: int16[], the last action played, -1 at the start.
    """

    board: jnp.ndarray
    to_play: jnp.ndarray
    chain_id: jnp.ndarray
    atari_lib: jnp.ndarray
    legal: jnp.ndarray
    hash: jnp.ndarray
    history: jnp.ndarray
    history_len: jnp.ndarray
    ko: jnp.ndarray
    passes: jnp.ndarray
    move_count: jnp.ndarray
    terminal: jnp.ndarray
    illegal_loser: jnp.ndarray
    last_move: jnp.ndarray


@functools.lru_cache(maxsize=None)
def zobrist_keys(size: int) -> np.ndarray:
    """uint32[2 colours (black, white), 2 words, N]: the stone keys of a board size.

    The low ``_POINT_BITS`` bits of word 0 are the point index itself, so a hash difference
    that is a single stone key names its point; the other 55 bits are random.
    """
    n = size * size
    rng = np.random.default_rng(20160127 + size)
    keys = rng.integers(0, 2**32, size=(2, 2, n), dtype=np.uint64).astype(np.uint32)
    low_mask = np.uint32((1 << _POINT_BITS) - 1)
    keys[:, 0, :] = (keys[:, 0, :] & ~low_mask) | np.arange(n, dtype=np.uint32)
    return keys


def _colour_index(colour):
    """0 for black (+1), 1 for white (-1)."""
    return (1 - colour.astype(jnp.int32)) // 2


@dataclasses.dataclass(frozen=True)
class Go(Game):
    """Go on a ``size`` x ``size`` board. Hashable: close over it with ``jax.jit``.

    Attributes:
      size: board side, 2 to 19.
      komi: points given to white.
      superko: positional superko if True, else simple ko.
      allow_suicide: if True, suicide is legal and removes the suicided chain.
      max_moves: the game ends after this many actions; default ``2 * size * size``.
    """

    size: int = 19
    komi: float = 7.5
    superko: bool = True
    allow_suicide: bool = False
    max_moves: int | None = None

    def __post_init__(self):
        if not isinstance(self.size, (int, np.integer)) or not MIN_SIZE <= self.size <= MAX_SIZE:
            raise ValueError(f"Go board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {self.size!r}")
        if self.max_moves is None:
            object.__setattr__(self, "max_moves", 2 * self.size * self.size)
        if self.max_moves < 1:
            raise ValueError(f"max_moves must be at least 1, got {self.max_moves}")
        object.__setattr__(self, "komi", float(self.komi))

    # ----------------------------------------------------------------------------- sizes
    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def num_actions(self) -> int:
        return self.num_points + 1

    @property
    def pass_action(self) -> int:
        return self.num_points

    @property
    def num_move_codes(self) -> int:
        return 2 * self.num_actions

    @property
    def name(self) -> str:
        return "go"

    @property
    def _history_size(self) -> int:
        return self.max_moves + 1 if self.superko else 1

    # ------------------------------------------------------------------------- contract
    def init(self) -> GoState:
        """The empty board, black to play."""
        return self.init_from_board(jnp.zeros(self.num_points, jnp.int8), BLACK)

    def init_from_board(self, board, to_play=BLACK) -> GoState:
        """A game starting from setup stones (handicap, SGF AB/AW).

        Args:
          board: int8[N] setup stones. Every chain must have a liberty (``validate_setup``
            checks this outside jit).
          to_play: colour to move first, +1 or -1.
        """
        board = jnp.asarray(board, jnp.int8).reshape(self.num_points)
        to_play = jnp.asarray(to_play, jnp.int8)
        chain_id = _label_chains(board, self.size)
        atari_lib, chain_hash = self._chain_info(board, chain_id)
        keys = jnp.asarray(zobrist_keys(self.size))
        stone_keys = jnp.where(board == BLACK, keys[0], jnp.where(board == WHITE, keys[1], 0))
        h = jnp.sum(stone_keys, axis=-1, dtype=jnp.uint32)
        history = jnp.full((self._history_size, 2), _SENTINEL, jnp.uint32).at[0].set(h)
        state = GoState(
            board=board,
            to_play=to_play,
            chain_id=chain_id,
            atari_lib=atari_lib,
            legal=jnp.zeros(self.num_actions, bool),
            hash=h,
            history=history,
            history_len=jnp.int32(1),
            ko=jnp.int16(-1),
            passes=jnp.int8(0),
            move_count=jnp.int32(0),
            terminal=jnp.bool_(False),
            illegal_loser=jnp.int8(0),
            last_move=jnp.int16(-1),
        )
        return state.replace(legal=self._legal(state, chain_hash))

    def step(self, state: GoState, action) -> GoState:
        n = self.num_points
        action = jnp.asarray(action, jnp.int32)
        c = state.to_play
        over = state.terminal
        in_range = (action >= 0) & (action <= n)
        illegal = ~over & ~(in_range & state.legal[jnp.clip(action, 0, n)])
        play = ~over & ~illegal & (action < n)
        passed = ~over & ~illegal & (action == n)

        points = jnp.arange(n)
        board, chain_id = state.board, state.chain_id.astype(jnp.int32)
        placed = (points == action) & play
        captured = (board == -c) & (state.atari_lib == action) & play
        # Friendly chains next to the new stone merge into one chain named after it.
        nbr = jnp.asarray(grid.neighbour_table(self.size))[jnp.clip(action, 0, n - 1)]
        nbr_ids = jnp.where(play & (nbr >= 0) & (board[nbr] == c), chain_id[nbr], -2)
        merged = placed | ((board == c) & jnp.any(chain_id[:, None] == nbr_ids[None, :], axis=1))
        board = jnp.where(placed, c, board)
        board = jnp.where(captured, 0, board)
        chain_id = jnp.where(merged, action, chain_id)
        chain_id = jnp.where(captured, -1, chain_id)

        keys = jnp.asarray(zobrist_keys(self.size))
        own_keys, opp_keys = keys[_colour_index(c)], keys[_colour_index(-c)]
        delta = jnp.where(placed, own_keys, 0) - jnp.where(captured, opp_keys, 0)
        if self.allow_suicide:
            has_lib = jnp.any(merged & jnp.any(grid.shifts(board, self.size, _EDGE) == 0, axis=0))
            suicided = merged & ~has_lib
            board = jnp.where(suicided, 0, board)
            chain_id = jnp.where(suicided, -1, chain_id)
            delta = delta - jnp.where(suicided, own_keys, 0)
        h = state.hash + jnp.sum(delta, axis=-1, dtype=jnp.uint32)

        history, history_len = state.history, state.history_len
        if self.superko:
            history = jnp.where(play, _sorted_insert(history, h), history)
            history_len = history_len + play
        ko = state.ko
        if not self.superko:
            ko = jnp.where(play | passed, self._simple_ko(board, placed, captured, nbr_ids), ko)

        passes = jnp.where(passed, state.passes + 1, jnp.where(play, 0, state.passes)).astype(jnp.int8)
        move_count = state.move_count + (play | passed)
        terminal = over | illegal | (passes >= 2) | (move_count >= self.max_moves)
        atari_lib, chain_hash = self._chain_info(board, chain_id)
        new = GoState(
            board=board,
            to_play=jnp.where(over, c, -c).astype(jnp.int8),
            chain_id=chain_id.astype(jnp.int16),
            atari_lib=atari_lib,
            legal=state.legal,
            hash=h,
            history=history,
            history_len=history_len,
            ko=ko.astype(jnp.int16),
            passes=passes,
            move_count=move_count,
            terminal=terminal,
            illegal_loser=jnp.where(illegal, c, state.illegal_loser).astype(jnp.int8),
            last_move=jnp.where(play | passed, action, state.last_move).astype(jnp.int16),
        )
        return new.replace(legal=self._legal(new, chain_hash) & ~terminal)

    def legal_action_mask(self, state: GoState) -> jnp.ndarray:
        return state.legal

    def is_terminal(self, state: GoState) -> jnp.ndarray:
        return state.terminal

    def returns(self, state: GoState) -> jnp.ndarray:
        """float32[2]: (black, white) in {-1, 0, 1} by area score; an illegal move loses."""
        s = jnp.sign(self.score(state))
        s = jnp.where(state.illegal_loser != 0, -state.illegal_loser.astype(jnp.float32), s)
        return jnp.where(state.terminal, jnp.stack([s, -s]), 0.0).astype(jnp.float32)

    def move_code(self, state: GoState, action) -> jnp.ndarray:
        """Player x action: ``action`` for black, ``num_actions + action`` for white."""
        return jnp.asarray(action, jnp.int32) + _colour_index(state.to_play) * self.num_actions

    # ----------------------------------------------------------------------------- score
    def area(self, state: GoState) -> jnp.ndarray:
        """int32[2]: Tromp-Taylor area of (black, white): stones plus empty points reaching only that colour."""
        board = state.board
        empty = board == 0

        def reach(colour):
            def body(carry):
                r, _ = carry
                nr = (board == colour) | (empty & grid.dilate(r, self.size))
                return nr, jnp.any(nr != r)

            r, _ = jax.lax.while_loop(lambda c: c[1], body, (board == colour, jnp.bool_(True)))
            return r

        rb, rw = reach(BLACK), reach(WHITE)
        black = jnp.sum((board == BLACK) | (empty & rb & ~rw))
        white = jnp.sum((board == WHITE) | (empty & rw & ~rb))
        return jnp.stack([black, white]).astype(jnp.int32)

    def score(self, state: GoState) -> jnp.ndarray:
        """float32[]: black area - white area - komi (Tromp-Taylor)."""
        a = self.area(state)
        return (a[0] - a[1]).astype(jnp.float32) - self.komi

    # -------------------------------------------------------------------- setup helpers
    def handicap_points(self, stones: int) -> list[int]:
        """The GTP ``fixed_handicap`` points for ``stones`` stones (2 to 9; fewer on small boards)."""
        return [grid.from_vertex(v, self.size) for v in fixed_handicap_vertices(self.size, stones)]

    def validate_setup(self, board) -> None:
        """Raise ``ValueError`` naming a chain without liberties or a bad value in ``board``."""
        b = np.asarray(board).reshape(-1)
        if b.shape[0] != self.num_points or not np.isin(b, (-1, 0, 1)).all():
            raise ValueError(f"setup board must have {self.num_points} values in -1, 0, 1")
        ids = np.asarray(_label_chains(jnp.asarray(b, jnp.int8), self.size))
        empty_nbr = np.asarray(jnp.any(grid.shifts(jnp.asarray(b, jnp.int8), self.size, _EDGE) == 0, axis=0))
        for cid in np.unique(ids[ids >= 0]):
            if not empty_nbr[ids == cid].any():
                raise ValueError(f"setup chain at {grid.to_vertex(int(cid), self.size)} has no liberties")

    # ------------------------------------------------------------------------- internals
    def _chain_info(self, board, chain_id):
        """Per-point chain facts from pseudo-liberties, in one segment_sum over chains.

        Returns:
          atari_lib: int16[N], the chain's only liberty if it has exactly one, else -1.
          chain_hash: uint32[2, N], sum of the chain's stone keys (0 on empty points).
        """
        n, size = self.num_points, self.size
        stone = board != 0
        nb_empty = grid.shifts(board, size, _EDGE) == 0
        nb_idx = jnp.asarray(grid.neighbour_index_planes(size))
        cnt = jnp.sum(nb_empty, axis=0, dtype=jnp.int32)
        sm = jnp.sum(jnp.where(nb_empty, nb_idx, 0), axis=0)
        sq = jnp.sum(jnp.where(nb_empty, nb_idx * nb_idx, 0), axis=0)
        keys = jnp.asarray(zobrist_keys(size))
        stone_keys = jnp.where(board == BLACK, keys[0], jnp.where(board == WHITE, keys[1], 0))
        stone_keys = jax.lax.bitcast_convert_type(stone_keys, jnp.int32)  # int32 adds wrap like uint32
        data = jnp.concatenate([jnp.stack([cnt, sm, sq]), stone_keys], axis=0)
        data = jnp.where(stone[None, :], data, 0).T  # [N, 5]
        seg = jnp.where(stone, chain_id, n).astype(jnp.int32)
        per_chain = jax.ops.segment_sum(data, seg, num_segments=n + 1, indices_are_sorted=False)
        g = per_chain[seg].T  # [5, N]: each point sees its chain's sums
        c, s, q = g[0], g[1], g[2]
        lib = s // jnp.maximum(c, 1)
        atari = stone & (c > 0) & (s == c * lib) & (q == c * lib * lib)
        atari_lib = jnp.where(atari, lib, -1).astype(jnp.int16)
        chain_hash = jax.lax.bitcast_convert_type(g[3:], jnp.uint32)
        return atari_lib, chain_hash

    def _legal(self, state: GoState, chain_hash) -> jnp.ndarray:
        """bool[N + 1]: legal actions for ``state.to_play`` (pass always legal)."""
        n, size = self.num_points, self.size
        p = state.to_play
        board = state.board
        empty = board == 0
        nb_board = grid.shifts(board, size, _EDGE)
        nb_atari = grid.shifts(state.atari_lib, size, -1)
        own = nb_board == p
        opp = nb_board == -p
        has_lib = jnp.any(nb_board == 0, axis=0)
        safe_join = jnp.any(own & (nb_atari < 0), axis=0)
        cap_dir = opp & (nb_atari >= 0)  # an adjacent enemy chain in atari: its liberty is here
        captures = jnp.any(cap_dir, axis=0)
        breathes = has_lib | safe_join | captures
        legal = empty if self.allow_suicide else empty & breathes

        if self.superko:
            legal = legal & ~self._superko_repeats(state, chain_hash, empty, breathes, cap_dir, own)
        else:
            legal = legal & (jnp.arange(n) != state.ko)
        return jnp.concatenate([legal, jnp.ones((1,), bool)])

    def _superko_repeats(self, state, chain_hash, empty, breathes, cap_dir, own):
        """bool[N]: empty points whose move would recreate an earlier position."""
        n, size = self.num_points, self.size
        p = state.to_play
        keys = jnp.asarray(zobrist_keys(size))[_colour_index(p)]  # [2, N]
        nb_id = grid.shifts(state.chain_id, size, -1).astype(jnp.int32)
        nb_hash = jnp.stack([grid.shifts(chain_hash[w], size, 0) for w in range(2)])  # [2, 4, N]
        captures = jnp.any(cap_dir, axis=0)
        suicide = empty & ~breathes

        def unique_sum(mask):
            """Sum of chain hashes over distinct chains marked in mask[4, N]."""
            total = jnp.zeros((2, n), jnp.uint32)
            for d in range(4):
                first = mask[d]
                for e in range(d):
                    first = first & ~(mask[e] & (nb_id[e] == nb_id[d]))
                total = total + jnp.where(first, nb_hash[:, d], 0)
            return total

        removed = unique_sum(cap_dir)
        placed = keys
        if self.allow_suicide:
            removed = removed + jnp.where(suicide, unique_sum(own) + keys, 0)
        resulting = state.hash[:, None] + placed - removed  # [2, N]
        lookup = empty & (captures | suicide)
        found = _contains(state.history, state.history_len, resulting.T)
        repeats = lookup & found

        # Plain moves: an earlier position equals this one plus a single own stone.
        d = state.history - state.hash[None, :]  # [H, 2]
        q = (d[:, 0] & jnp.uint32((1 << _POINT_BITS) - 1)).astype(jnp.int32)
        qc = jnp.clip(q, 0, n - 1)
        valid = jnp.arange(state.history.shape[0]) < state.history_len
        match = valid & (q < n) & (d[:, 0] == keys[0, qc]) & (d[:, 1] == keys[1, qc])
        plain_repeat = jnp.zeros(n + 1, bool).at[jnp.where(match, q, n)].set(True)[:n]
        return repeats | (plain_repeat & empty & ~captures & ~suicide)

    def _simple_ko(self, board, placed, captured, nbr_ids):
        """int32[]: the ko point after a move capturing one stone with a lone stone in atari."""
        one = jnp.sum(captured) == 1
        lone = jnp.all(nbr_ids == -2)
        libs = jnp.sum(jnp.where(placed, jnp.sum(grid.shifts(board, self.size, _EDGE) == 0, axis=0), 0))
        return jnp.where(one & lone & (libs == 1), jnp.argmax(captured), -1)


def _label_chains(board, size):
    """int16[N]: chain ids (smallest index in the chain) by min-label propagation; -1 empty."""
    n = size * size
    big = jnp.int32(n)
    stone = board != 0
    label = jnp.where(stone, jnp.arange(n, dtype=jnp.int32), big)

    def body(carry):
        lab, _ = carry
        nb_lab = grid.shifts(lab, size, big)
        nb_same = grid.shifts(board, size, _EDGE) == board[None, :]
        new = jnp.minimum(lab, jnp.min(jnp.where(nb_same & stone[None, :], nb_lab, big), axis=0))
        return new, jnp.any(new != lab)

    label, _ = jax.lax.while_loop(lambda c: c[1], body, (label, jnp.bool_(True)))
    return jnp.where(stone, label, -1).astype(jnp.int16)


def _lex_less(a, b):
    """a < b for 64-bit hashes stored as [..., 2] uint32 words (word 0 most significant)."""
    return (a[..., 0] < b[..., 0]) | ((a[..., 0] == b[..., 0]) & (a[..., 1] < b[..., 1]))


def _sorted_insert(history, h):
    """Insert hash h (uint32[2]) into the sorted history uint32[H, 2] (last row drops off)."""
    pos = jnp.sum(_lex_less(history, h[None, :]))
    i = jnp.arange(history.shape[0])[:, None]
    shifted = jnp.concatenate([history[:1], history[:-1]], axis=0)
    return jnp.where(i < pos, history, jnp.where(i == pos, h[None, :], shifted))


def _contains(history, length, queries):
    """bool[Q]: whether each query hash (uint32[Q, 2]) is among the first ``length`` rows."""
    size = history.shape[0]
    lo = jnp.zeros(queries.shape[0], jnp.int32)
    hi = jnp.full(queries.shape[0], size, jnp.int32)
    for _ in range(max(1, int(np.ceil(np.log2(size + 1))))):
        mid = (lo + hi) // 2
        less = _lex_less(history[jnp.minimum(mid, size - 1)], queries)
        active = lo < hi
        lo = jnp.where(active & less, mid + 1, lo)
        hi = jnp.where(active & ~less, mid, hi)
    at = history[jnp.minimum(lo, size - 1)]
    return (lo < length) & jnp.all(at == queries, axis=-1)


def fixed_handicap_vertices(size: int, stones: int) -> list[str]:
    """GTP v2 fixed handicap placement (section 4.1.1) as vertices.

    Raises:
      ValueError: if the board size does not allow that many fixed handicap stones.
    """
    if size < 7 or stones < 2 or stones > (4 if size == 7 else 9) or (size % 2 == 0 and stones > 4):
        raise ValueError(f"fixed handicap of {stones} stones is not defined on a {size}x{size} board")
    edge = 3 if size >= 13 else 2  # distance from the edge: 4-4 points on 13+, 3-3 below
    lo, hi, mid = edge, size - 1 - edge, size // 2

    def v(col, row):  # col, row from the top-left, 0-based
        return grid.to_vertex(row * size + col, size)

    corners = [v(hi, lo), v(lo, hi), v(hi, hi), v(lo, lo)]  # GTP order: upper right, lower left, ...
    sides = [v(lo, mid), v(hi, mid), v(mid, lo), v(mid, hi)]
    order = {
        2: corners[:2], 3: corners[:3], 4: corners,
        5: corners + [v(mid, mid)], 6: corners + sides[:2], 7: corners + sides[:2] + [v(mid, mid)],
        8: corners + sides, 9: corners + sides + [v(mid, mid)],
    }
    return order[stones]
