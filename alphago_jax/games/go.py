"""Go as pure JAX functions: one unbatched game per state, jit- and vmap-safe.

Rules (the Computer Go Olympiad's and CGOS's: Tromp-Taylor with komi): boards 2 to 19, actions
``row * size + col`` (row 0 the top edge) and pass ``size * size``; black moves first. Chains
left without liberties by the opponent's move are captured; suicide is illegal unless
``allow_suicide`` (the chain is removed). Positional superko masks any move that recreates an
earlier position (``superko=False``: simple ko). Pass is always legal. The game ends after two
passes in a row, after ``max_moves`` actions (default ``2 * size * size``), or at an illegal
action, which loses. Score: Tromp-Taylor area, black - white - komi; zero is a draw. Move codes:
player x action (``action`` for black, ``num_actions + action`` for white).

A step is O(size^2) dense vector work with no data-dependent loop: each stone carries its
chain id and, when its chain has exactly one liberty, that liberty (a segment min and max over
chains). Hashes are 64-bit additive Zobrist hashes (two uint32 words); superko checks few moves
exactly (``games/superko.py``): a recapture is the ko point, other captures go through a Bloom
filter of the history, and a plain move that repeats is found from the history hash minus the
current one, a single stone key whose low bits name its point.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from alphago_jax.games import grid, superko as _superko
from alphago_jax.games.base import BLACK, WHITE, Game

MIN_SIZE, MAX_SIZE = 2, 19
_EDGE = 2  # board value used for off-board neighbours
_POINT_BITS = 9  # low bits of a stone key's first word hold its point (361 < 512)


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
      history: uint32[H, 2], hashes of every position so far, in order; rows past ``history_len`` unused.
      history_len: int32[], number of valid rows in ``history``.
      bloom: uint32[W], Bloom filter bits of the history hashes (W >= H, a power of two).
      ko: int16[], the simple-ko point (an immediate single-stone recapture), -1 if none.
      passes: int8[], consecutive passes just played.
      move_count: int32[], actions played so far (passes included).
      terminal: bool[].
      loser: int8[], colour that lost by rule rather than by score (an illegal action; in AtariGo
        and NoGo also a capture or no move), 0 if none.
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
    bloom: jnp.ndarray
    ko: jnp.ndarray
    passes: jnp.ndarray
    move_count: jnp.ndarray
    terminal: jnp.ndarray
    loser: jnp.ndarray
    last_move: jnp.ndarray


def _mix32(x):
    """A 32-bit xorshift-multiply finaliser, uint32 -> uint32 (a bijection), on numpy or jax arrays."""
    x = x ^ (x >> 16)
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def stone_key(point, colour_index, word, xp=jnp):
    """uint32: word ``word`` (0 or 1) of a stone's Zobrist key (``colour_index`` 0 black, 1 white).

    The low ``_POINT_BITS`` bits of word 0 are the point, so a hash difference that is one stone
    key names its point; the other 55 bits are pseudo-random.
    """
    point = xp.asarray(point).astype(xp.uint32)
    seed = xp.asarray(colour_index).astype(xp.uint32) * np.uint32(0x9E3779B9) + np.uint32(word * 0x632BE5AB + 0x2545F491)
    k = _mix32(point * np.uint32(0x85EBCA77) + seed)
    if word == 0:
        low = np.uint32((1 << _POINT_BITS) - 1)
        k = (k & ~low) | point
    return k


@functools.lru_cache(maxsize=None)
def zobrist_keys(size: int) -> np.ndarray:
    """uint32[2 colours (black, white), 2 words, N]: the stone keys of a board size (``stone_key``)."""
    points = np.arange(size * size, dtype=np.uint32)
    with np.errstate(over="ignore"):
        return np.stack([np.stack([stone_key(points, c, w, np) for w in range(2)]) for c in range(2)])


def _colour_index(colour):
    """0 for black (+1), 1 for white (-1)."""
    return (colour < 0).astype(jnp.int32)


def _keys_of(keys, colour):
    """uint32[2, N]: the stone keys of ``colour`` (a select, not a gather: cheaper under vmap)."""
    return jnp.where(colour == BLACK, keys[0], keys[1])


@dataclasses.dataclass(frozen=True)
class Go(Game):
    """Go on a ``size`` x ``size`` board. Hashable: close over it with ``jax.jit``.

    Attributes:
      size: board side, 2 to 19.
      komi: points given to white.
      superko: positional superko if True, else simple ko.
      allow_suicide: if True, suicide is legal and removes the suicided chain.
      max_moves: the game ends after this many actions; default ``2 * size * size``.
      pass_after: pass is legal only from this move number on (from 0) or when nothing else is;
        0 (the rules): always. A self-play aid against a young network's early passes.
    """

    size: int = 19
    komi: float = 7.5
    superko: bool = True
    allow_suicide: bool = False
    max_moves: int | None = None
    pass_after: int = 0

    _title = "Go"  # the name used in error messages

    def __post_init__(self):
        size = self.size
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or not MIN_SIZE <= size <= MAX_SIZE:
            raise ValueError(f"{self._title} board size must be an integer from {MIN_SIZE} to {MAX_SIZE}, got {size!r}")
        if self.max_moves is None:
            object.__setattr__(self, "max_moves", 2 * self.size * self.size)
        if self.max_moves < 1:
            raise ValueError(f"max_moves must be at least 1, got {self.max_moves}")
        if not isinstance(self.pass_after, (int, np.integer)) or self.pass_after < 0:
            raise ValueError(f"pass_after must be an integer >= 0, got {self.pass_after!r}")
        object.__setattr__(self, "komi", float(self.komi))

    # ----------------------------------------------------------------------------- sizes
    @property
    def num_actions(self) -> int:
        return self.num_points + 1

    @property
    def pass_action(self) -> int:
        return self.num_points

    @property
    def name(self) -> str:
        return "go"

    @property
    def _history_size(self) -> int:
        return self.max_moves + 1 if self.superko else 1

    @property
    def _bloom_words(self) -> int:
        # At least 32 bits per position, two bits set each: under 0.5% false positives when full.
        return 1 << max(0, (self._history_size - 1).bit_length()) if self.superko else 1

    # ------------------------------------------------------------------------- contract
    def init(self) -> GoState:
        """The empty board, black to play."""
        return self.init_from_board(jnp.zeros(self.num_points, jnp.int8), BLACK)

    def init_from_board(self, board, to_play=BLACK) -> GoState:
        """A game from setup stones ``board`` (int8[N]; every chain needs a liberty: ``validate_setup``),
        ``to_play`` (+1 or -1) to move."""
        board = jnp.asarray(board, jnp.int8).reshape(self.num_points)
        to_play = jnp.asarray(to_play, jnp.int8)
        chain_id = _label_chains(board, self.size)
        atari_lib = self._atari_libs(board, chain_id)
        keys = jnp.asarray(zobrist_keys(self.size))
        stone_keys = jnp.where(board == BLACK, keys[0], jnp.where(board == WHITE, keys[1], 0))
        h = jnp.sum(stone_keys, axis=-1, dtype=jnp.uint32)
        history = jnp.zeros((self._history_size, 2), jnp.uint32).at[0].set(h)
        state = GoState(
            board=board,
            to_play=to_play,
            chain_id=chain_id,
            atari_lib=atari_lib,
            legal=jnp.zeros(self.num_actions, bool),
            hash=h,
            history=history,
            history_len=jnp.int32(1),
            bloom=_superko.bloom_insert(jnp.zeros(self._bloom_words, jnp.uint32), h[1]),
            ko=jnp.int16(-1),
            passes=jnp.int8(0),
            move_count=jnp.int32(0),
            terminal=jnp.bool_(False),
            loser=jnp.int8(0),
            last_move=jnp.int16(-1),
        )
        return state.replace(legal=self._legal(state))

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
        own_keys, opp_keys = _keys_of(keys, c), _keys_of(keys, -c)
        delta = jnp.where(placed, own_keys, 0) - jnp.where(captured, opp_keys, 0)
        if self.allow_suicide:
            has_lib = jnp.any(merged & grid.any_of(v == 0 for v in grid.neighbours(board, self.size, _EDGE)))
            suicided = merged & ~has_lib
            board = jnp.where(suicided, 0, board)
            chain_id = jnp.where(suicided, -1, chain_id)
            delta = delta - jnp.where(suicided, own_keys, 0)
        h = state.hash + jnp.sum(delta, axis=-1, dtype=jnp.uint32)

        history, history_len, bloom = state.history, state.history_len, state.bloom
        if self.superko:
            bloom = jnp.where(play, _superko.bloom_insert(bloom, h[1]), bloom)
            at_end = (jnp.arange(history.shape[0]) == history_len)[:, None] & play
            history = jnp.where(at_end, h[None, :], history)
            history_len = history_len + play
        ko = jnp.where(play | passed, self._simple_ko(board, placed, captured, nbr_ids), state.ko)

        passes = jnp.where(passed, state.passes + 1, jnp.where(play, 0, state.passes)).astype(jnp.int8)
        move_count = state.move_count + (play | passed)
        terminal = over | illegal | (passes >= 2) | (move_count >= self.max_moves)
        atari_lib = self._atari_libs(board, chain_id)
        new = GoState(
            board=board,
            to_play=jnp.where(over, c, -c).astype(jnp.int8),
            chain_id=chain_id.astype(jnp.int16),
            atari_lib=atari_lib,
            legal=state.legal,
            hash=h,
            history=history,
            history_len=history_len,
            bloom=bloom,
            ko=ko.astype(jnp.int16),
            passes=passes,
            move_count=move_count,
            terminal=terminal,
            loser=jnp.where(illegal, c, state.loser).astype(jnp.int8),
            last_move=jnp.where(play | passed, action, state.last_move).astype(jnp.int16),
        )
        new = new.replace(legal=self._legal(new) & ~terminal)
        return self._rule_outcome(new, play, captured)

    def _rule_outcome(self, state: GoState, played, captured) -> GoState:
        """Hook for variants that end by rule, given the state after a move, whether a stone was
        placed and the stones it took (bool[N]). Go: ``state`` unchanged."""
        return state

    def resume(self, state: GoState) -> GoState:
        """A game ended by two passes reopened for a cleanup phase (pass count reset, legal moves
        recomputed); any other state unchanged."""
        resume = state.terminal & (state.loser == 0) & (state.move_count < self.max_moves)
        reopened = state.replace(passes=jnp.int8(0), terminal=jnp.bool_(False))
        reopened = reopened.replace(legal=self._legal(reopened))
        return jax.tree_util.tree_map(lambda new, old: jnp.where(resume, new, old), reopened, state)

    def legal_action_mask(self, state: GoState) -> jnp.ndarray:
        return state.legal

    def is_terminal(self, state: GoState) -> jnp.ndarray:
        return state.terminal

    def returns(self, state: GoState) -> jnp.ndarray:
        """float32[2]: (black, white) in {-1, 0, 1} by area score; an illegal move loses."""
        s = jnp.sign(self.score(state))
        s = jnp.where(state.loser != 0, -state.loser.astype(jnp.float32), s)
        return jnp.where(state.terminal, jnp.stack([s, -s]), 0.0).astype(jnp.float32)

    # ----------------------------------------------------------------------------- score
    def area(self, state: GoState) -> jnp.ndarray:
        """int32[2]: Tromp-Taylor area of (black, white): stones plus empty points reaching only that colour."""
        owner = self.ownership(state)
        return jnp.stack([jnp.sum(owner == BLACK), jnp.sum(owner == WHITE)]).astype(jnp.int32)

    def ownership(self, state: GoState) -> jnp.ndarray:
        """int8[N]: each point's Tromp-Taylor owner: +1 black, -1 white (stones, and empty points
        reaching only that colour), 0 for empty points reaching both or neither."""
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
        black = (board == BLACK) | (empty & rb & ~rw)
        white = (board == WHITE) | (empty & rw & ~rb)
        return jnp.where(black, BLACK, jnp.where(white, WHITE, 0)).astype(jnp.int8)

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
        empty_nbr = np.asarray(grid.any_of(v == 0 for v in grid.neighbours(jnp.asarray(b, jnp.int8), self.size, _EDGE)))
        for cid in np.unique(ids[ids >= 0]):
            if not empty_nbr[ids == cid].any():
                raise ValueError(f"setup chain at {grid.to_vertex(int(cid), self.size)} has no liberties")

    # ------------------------------------------------------------------------- internals
    def _atari_libs(self, board, chain_id):
        """int16[N]: for each stone, its chain's only liberty if it has exactly one, else -1
        (the chain's smallest and largest liberty, by segment min and max, are equal)."""
        n, size = self.num_points, self.size
        # Materialise the new board first: fused into the stencil below, the move's selects
        # would be recomputed for every neighbour of every point.
        board, chain_id = jax.lax.optimization_barrier((board.astype(jnp.int32), chain_id))
        stone = board != 0
        nb_empty = [v == 0 for v in grid.neighbours(board, size, _EDGE)]
        nb_idx = grid.neighbour_index_planes(size)
        lo = functools.reduce(jnp.minimum, [jnp.where(e, i, n) for e, i in zip(nb_empty, nb_idx)])
        hi = functools.reduce(jnp.maximum, [jnp.where(e, i, -1) for e, i in zip(nb_empty, nb_idx)])
        seg = jnp.where(stone, chain_id, n).astype(jnp.int32)
        lo, hi, seg = jax.lax.optimization_barrier((lo, hi, seg))
        lo = jax.ops.segment_min(lo, seg, num_segments=n + 1)[seg]
        hi = jax.ops.segment_max(hi, seg, num_segments=n + 1)[seg]
        return jnp.where(stone & (lo == hi), lo, -1).astype(jnp.int16)

    def _move_facts(self, state: GoState):
        """``(empty, keeps_liberty, captures)``, bool[N] each, for a stone of the mover on each point:
        the point is empty; the stone has a liberty without capturing; it captures."""
        p, size = state.to_play, self.size
        nb_board = grid.neighbours(state.board, size, _EDGE)
        nb_atari = grid.neighbours(state.atari_lib, size, -1)
        has_lib = grid.any_of(b == 0 for b in nb_board)
        safe_join = grid.any_of((b == p) & (a < 0) for b, a in zip(nb_board, nb_atari))
        captures = grid.any_of((b == -p) & (a >= 0) for b, a in zip(nb_board, nb_atari))
        return state.board == 0, has_lib | safe_join, captures

    def _legal(self, state: GoState) -> jnp.ndarray:
        """bool[N + 1]: legal actions for ``state.to_play`` (pass last; see ``pass_after``)."""
        n = self.num_points
        empty, keeps_liberty, captures = self._move_facts(state)
        breathes = keeps_liberty | captures
        legal = empty if self.allow_suicide else empty & breathes

        if self.superko:
            legal = legal & ~self._superko_repeats(state, empty & captures, empty & ~breathes)
        else:
            legal = legal & (jnp.arange(n) != state.ko)
        can_pass = jnp.ones((1,), bool)
        if self.pass_after:
            can_pass = can_pass & ((state.move_count >= self.pass_after) | ~jnp.any(legal))
        return jnp.concatenate([legal, can_pass])

    def _superko_repeats(self, state: GoState, captures, suicides):
        """bool[N]: empty points whose move would recreate an earlier position, given the points
        where the move captures and where it is suicide (bool[N] each).

        Exact, cheapest test first: the simple-ko point; other captures and suicides through a
        Bloom filter on hash word 1, hits confirmed in the history; plain moves from the history
        rows that are this position plus one own stone.
        """
        n = self.num_points
        p = state.to_play
        keys = jnp.asarray(zobrist_keys(self.size))
        own_keys, opp_keys = _keys_of(keys, p), _keys_of(keys, -p)  # [2, N]
        board, lib = state.board, state.atari_lib.astype(jnp.int32)
        points = jnp.arange(n)
        candidates = (captures | suicides) if self.allow_suicide else captures

        # Word 1 of the hash each candidate produces: the keys of the chains whose only
        # liberty it is are summed per point in one segment_sum.
        taken = (board == -p) & (lib >= 0)
        data = jnp.where(taken, opp_keys[1], 0)
        if self.allow_suicide:  # a suicide removes the own chains in atari and the new stone
            own_taken = (board == p) & (lib >= 0) & suicides[jnp.maximum(lib, 0)]
            taken = taken | own_taken
            data = jnp.where(own_taken, own_keys[1], data)
        seg = jnp.where(taken, lib, n)
        data, seg = jax.lax.optimization_barrier((jax.lax.bitcast_convert_type(data, jnp.int32), seg))
        removed = jax.lax.bitcast_convert_type(jax.ops.segment_sum(data, seg, num_segments=n + 1)[:n], jnp.uint32)
        placed = jnp.where(suicides, 0, own_keys[1]) if self.allow_suicide else own_keys[1]
        resulting = state.hash[1] + placed - removed

        def full_hash(q):
            """uint32[2]: the exact hash after a capture or suicide at q."""
            gone = taken & (lib == q)
            delta = jnp.where(gone & (board == -p), opp_keys, 0) + jnp.where(gone & (board == p), own_keys, 0)
            put = jnp.where(suicides[q], 0, own_keys[:, q])
            return state.hash + put - jnp.sum(delta, axis=-1, dtype=jnp.uint32)

        # Plain moves: an earlier position equals this one plus a single own stone, whose point
        # is named by the low bits of the hash difference.
        d = state.history - state.hash[None, :]  # [H, 2]
        q = (d[:, 0] & jnp.uint32((1 << _POINT_BITS) - 1)).astype(jnp.int32)
        valid = jnp.arange(state.history.shape[0]) < state.history_len
        ci = _colour_index(p)
        plain = valid & (q < n) & (d[:, 0] == stone_key(q, ci, 0)) & (d[:, 1] == stone_key(q, ci, 1))

        ko_back = captures & (points == state.ko)
        maybe = candidates & ~ko_back & _superko.bloom_contains(state.bloom, resulting)
        found, found_plain = _superko.confirm_repeats(state.history, valid, full_hash, maybe, plain, q)
        return ko_back | found | (found_plain & ~candidates)

    def _simple_ko(self, board, placed, captured, nbr_ids):
        """int32[]: the ko point after a move capturing one stone with a lone stone in atari."""
        one = jnp.sum(captured) == 1
        lone = jnp.all(nbr_ids == -2)
        libs = jnp.sum(jnp.where(placed, grid.sum_of((v == 0).astype(jnp.int32) for v in grid.neighbours(board, self.size, _EDGE)), 0))
        return jnp.where(one & lone & (libs == 1), jnp.argmax(captured), -1)


@functools.partial(jax.jit, static_argnums=1)
def _label_chains(board, size):
    """int16[N]: chain ids (smallest index in the chain) by min-label propagation; -1 empty."""
    n = size * size
    big = jnp.int32(n)
    stone = board != 0
    label = jnp.where(stone, jnp.arange(n, dtype=jnp.int32), big)

    def body(carry):
        lab, _ = carry
        new = lab
        for nb_lab, nb_board in zip(grid.neighbours(lab, size, big), grid.neighbours(board, size, _EDGE)):
            new = jnp.minimum(new, jnp.where(stone & (nb_board == board), nb_lab, big))
        return new, jnp.any(new != lab)

    label, _ = jax.lax.while_loop(lambda c: c[1], body, (label, jnp.bool_(True)))
    return jnp.where(stone, label, -1).astype(jnp.int16)


def fixed_handicap_vertices(size: int, stones: int) -> list[str]:
    """GTP v2 fixed handicap placement (section 4.1.1) as vertices; ``ValueError`` if undefined."""
    if size < 7 or stones < 2 or stones > (4 if size == 7 else 9) or (size % 2 == 0 and stones > 4):
        raise ValueError(f"fixed handicap of {stones} stones is not defined on a {size}x{size} board")
    edge = 3 if size >= 13 else 2  # distance from the edge: 4-4 points on 13+, 3-3 below
    lo, hi, mid = edge, size - 1 - edge, size // 2

    def v(col, row):  # col, row from the top-left, 0-based
        return grid.to_vertex(row * size + col, size)

    corners = [v(lo, hi), v(hi, lo), v(lo, lo), v(hi, hi)]  # GTP order: D4, Q16, D16, Q4 on 19x19
    sides = [v(lo, mid), v(hi, mid), v(mid, lo), v(mid, hi)]
    order = {
        2: corners[:2], 3: corners[:3], 4: corners,
        5: corners + [v(mid, mid)], 6: corners + sides[:2], 7: corners + sides[:2] + [v(mid, mid)],
        8: corners + sides, 9: corners + sides + [v(mid, mid)],
    }
    return order[stones]
