"""A game in progress, as the Python side of play sees it: rules, setup stones, moves, states.

Every player and the GTP engine keep a ``Position``: the setup stones, the first player, the
moves played so far (``(colour, action)`` pairs) and the state after each of them, stepped by
the JAX rules one move at a time (one jitted step per board size). It adds to the rules what
interactive play needs and a batched search does not:

- a move by either colour (GTP's ``play`` does not require alternation): the state is handed
  to that colour before the move, its legal moves recomputed;
- play after two passes (a cleanup phase, or a GUI that keeps going): the game is reopened;
- illegal moves rejected before they reach ``step`` (``IllegalMove``, saying why);
- undo (the states are kept, so undo is a pop);
- the Tromp-Taylor score and an SGF record.

``play_game(size, komi)`` is the rules every player uses, so that all of them agree on when a
game is over: Go with positional superko, suicide forbidden, and a move limit of
``MAX_MOVES_PER_POINT * size * size`` (longer than the rules' default, for cleanup phases).

Works for ``Go`` and for ``games.history.WithHistory(Go)`` (the network players' states).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE, Game
from alphago_jax.games.go import Go, fixed_handicap_vertices
from alphago_jax.games.history import WithHistory

MAX_MOVES_PER_POINT = 3
"""Moves a game of play may last, per point of the board (passes included)."""

COLOUR_NAMES = {BLACK: "black", WHITE: "white"}
_COLOUR_WORDS = {"b": BLACK, "black": BLACK, "w": WHITE, "white": WHITE}


class IllegalMove(ValueError):
    """A move the rules forbid; the message says why."""


def play_game(size: int, komi: float, max_moves: int | None = None) -> Go:
    """The rules of interactive play: Go with positional superko and a generous move limit."""
    return Go(size=size, komi=komi, max_moves=max_moves or MAX_MOVES_PER_POINT * size * size)


def parse_colour(text: str) -> int:
    """``BLACK`` or ``WHITE`` from ``b``, ``black``, ``w``, ``white`` (any case).

    Raises:
      ValueError: naming the text.
    """
    try:
        return _COLOUR_WORDS[text.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"invalid colour {text!r}") from None


def colour_letter(colour: int) -> str:
    return "B" if colour == BLACK else "W"


# ------------------------------------------------------------------------- jitted pieces

def _rules(game: Game) -> Game:
    """``game`` with komi 0: the rules' steps do not depend on komi, so one compile serves all."""
    if isinstance(game, WithHistory):
        return dataclasses.replace(game, game=_rules(game.game))
    return dataclasses.replace(game, komi=0.0)


def _go(game: Game) -> Go:
    return game.game if isinstance(game, WithHistory) else game


def _inner(state):
    return state.inner if hasattr(state, "inner") else state


@functools.lru_cache(maxsize=None)
def _ops(rules: Game):
    """Jitted ``init_from_board``, ``step``, ``reopen`` and ``area`` of komi-free ``rules``."""
    go = _go(rules)

    def reopen(state, colour, resume):
        inner = _inner(state)
        turn = inner.to_play != colour
        inner = inner.replace(
            to_play=colour.astype(jnp.int8),
            # The simple-ko shortcut belongs to the other player; superko's history check is exact.
            ko=jnp.where(turn, jnp.int16(-1), inner.ko),
            passes=jnp.where(resume, jnp.int8(0), inner.passes),
            terminal=jnp.where(resume, False, inner.terminal),
        )
        # The legal moves of the player now to move (the rules' own computation).
        inner = inner.replace(legal=go._legal(inner) & ~inner.terminal)
        return state.replace(inner=inner) if hasattr(state, "inner") else inner

    return (jax.jit(rules.init_from_board), jax.jit(rules.step), jax.jit(reopen),
            jax.jit(lambda s: go.area(_inner(s))))


def prepared(game: Game, state, colour: int):
    """``state`` ready for a move by ``colour``: handed to it, reopened after two passes.

    Returns ``state`` itself when nothing had to change (so callers can test ``is``). A game
    over by the move limit or by an illegal move stays over.
    """
    inner = _inner(state)
    turn = int(inner.to_play) != colour
    resume = bool(inner.terminal) and int(inner.loser) == 0 and int(inner.move_count) < _go(game).max_moves
    if not turn and not resume:
        return state
    return _ops(_rules(game))[2](state, jnp.int8(colour), jnp.bool_(resume))


# ------------------------------------------------------------------------------ position

class Position:
    """One game: setup stones, first player, moves, and the state after each move.

    Args:
      game: the rules (``Go`` or ``WithHistory(Go)``); komi only affects ``score``.
      setup: int8[N] setup stones (+1 black, -1 white), default none.
      first_player: the colour to move first (white after handicap stones).
      handicap: the number of handicap stones (recorded in the SGF's HA).
    """

    def __init__(self, game: Game, setup=None, first_player: int = BLACK, handicap: int = 0):
        self.game = game
        self.size = game.size
        n = self.size * self.size
        self.setup = np.zeros(n, np.int8) if setup is None else np.asarray(setup, np.int8).reshape(n).copy()
        _go(game).validate_setup(self.setup)
        self.first_player = int(first_player)
        self.handicap = int(handicap)
        self.moves: list[tuple[int, int]] = []
        init, self._step, _, self._area = _ops(_rules(game))
        self._states = [init(jnp.asarray(self.setup), jnp.int8(self.first_player))]

    # -- reading ---------------------------------------------------------------------------
    @property
    def state(self):
        """The current state (unbatched)."""
        return self._states[-1]

    @property
    def num_points(self) -> int:
        return self.size * self.size

    @property
    def pass_action(self) -> int:
        return self.num_points

    @property
    def to_play(self) -> int:
        return int(_inner(self.state).to_play)

    @property
    def board(self) -> np.ndarray:
        """int8[N], +1 black, -1 white, 0 empty."""
        return np.asarray(_inner(self.state).board)

    @property
    def last_move(self) -> int | None:
        return self.moves[-1][1] if self.moves else None

    @property
    def consecutive_passes(self) -> int:
        """Passes at the end of the move list."""
        k = 0
        for _, action in reversed(self.moves):
            if action != self.pass_action:
                break
            k += 1
        return k

    @property
    def at_move_limit(self) -> bool:
        """The game has lasted the rules' ``max_moves``: no move can follow."""
        return int(_inner(self.state).move_count) >= _go(self.game).max_moves

    def is_empty(self) -> bool:
        return not self.moves and not self.setup.any()

    def legal_mask(self, colour: int | None = None) -> np.ndarray:
        """bool[N + 1]: the legal moves of ``colour`` (default: the player to move)."""
        colour = self.to_play if colour is None else colour
        return np.asarray(_inner(prepared(self.game, self.state, colour)).legal)

    def why_illegal(self, colour: int, action: int) -> str | None:
        """None if ``colour`` may play ``action`` here, else the reason."""
        if not 0 <= action <= self.num_points:
            return f"action {action} is off the board"
        state = prepared(self.game, self.state, colour)
        inner = _inner(state)
        if bool(np.asarray(inner.legal)[action]):
            return None
        if bool(inner.terminal):
            return f"the game is over (move limit of {_go(self.game).max_moves} reached)"
        return sgf._why_illegal(_go(self.game), inner, action)

    def area(self, dead: np.ndarray | None = None) -> tuple[int, int]:
        """Tromp-Taylor area (black, white): stones plus empty regions reaching only that colour;
        with ``dead`` (bool[N]), of the board with those stones taken off first."""
        state = self.state
        if dead is not None and np.any(dead):
            inner = _inner(state)
            state = inner.replace(board=jnp.where(jnp.asarray(dead), 0, inner.board).astype(inner.board.dtype))
        a = np.asarray(self._area(state))
        return int(a[0]), int(a[1])

    def score(self, dead: np.ndarray | None = None) -> float:
        """Tromp-Taylor score with komi: black area - white area - komi (> 0: black wins);
        ``dead``: as for ``area``."""
        black, white = self.area(dead)
        return float(black - white) - float(self.game.komi)

    def render(self) -> str:
        """The board drawn in text (X black, O white, the last move bracketed)."""
        last = self.last_move
        return grid.render(self.board, self.size, last if last is not None and last < self.num_points else None)

    # -- changing --------------------------------------------------------------------------
    def play(self, colour: int, action: int) -> None:
        """Play ``action`` (a point or pass) for ``colour``.

        Raises:
          IllegalMove: saying why; the position is unchanged.
        """
        action = int(action)
        state = prepared(self.game, self.state, colour) if 0 <= action <= self.num_points else self.state
        if not 0 <= action <= self.num_points or not bool(np.asarray(_inner(state).legal)[action]):
            raise IllegalMove(self.why_illegal(colour, action) or "illegal move")
        self._states.append(self._step(state, np.int32(action)))
        self.moves.append((int(colour), action))

    def compile(self) -> None:
        """Compile the rules' step now (``play`` otherwise does on the first move); the
        position is unchanged."""
        jax.block_until_ready(self._step(self.state, np.int32(self.pass_action)))

    def undo(self) -> tuple[int, int]:
        """Take back the last move and return it.

        Raises:
          ValueError: when no move has been played.
        """
        if not self.moves:
            raise ValueError("no move to undo")
        self._states.pop()
        return self.moves.pop()

    # -- records ---------------------------------------------------------------------------
    def record(self, result: str | None = None, black_name: str | None = None,
               white_name: str | None = None, comments: tuple[str, ...] = ()) -> sgf.GameRecord:
        """The game as an SGF record (``sgf.dump`` / ``sgf.save`` write it). Its first player
        (SGF's PL) is the colour of the first move when there is one: GTP lets either colour move
        first, and a record whose PL names the other colour contradicts its own first move."""
        first = self.moves[0][0] if self.moves else self.first_player
        return sgf.GameRecord(
            size=self.size, komi=float(self.game.komi), handicap=self.handicap,
            black_setup=tuple(int(p) for p in np.flatnonzero(self.setup == BLACK)),
            white_setup=tuple(int(p) for p in np.flatnonzero(self.setup == WHITE)),
            first_player=first, moves=tuple(self.moves), result=result,
            black_name=black_name, white_name=white_name, comments=tuple(comments))

    @classmethod
    def from_record(cls, game: Game, record: sgf.GameRecord, moves: int | None = None) -> "Position":
        """The position after the first ``moves`` moves of ``record`` (default all).

        Raises:
          IllegalMove: naming the move number, for an illegal move in the record.
          ValueError: for an illegal setup.
        """
        pos = cls(game, record.setup_board(), record.first_player, record.handicap)
        for i, (colour, action) in enumerate(record.moves[:moves]):
            try:
                pos.play(colour, action)
            except IllegalMove as e:
                vertex = grid.to_vertex(action, record.size)
                raise IllegalMove(f"move {i + 1} ({colour_letter(colour)} {vertex}) is illegal: {e}") from None
        return pos


def handicap_setup(size: int, points) -> np.ndarray:
    """int8[N]: black stones on ``points`` (the board of a handicap game)."""
    board = np.zeros(size * size, np.int8)
    board[list(points)] = BLACK
    return board


def free_handicap_points(size: int, stones: int) -> list[int]:
    """Points for ``stones`` handicap stones chosen by the engine (GTP ``place_free_handicap``).

    The fixed placement where GTP defines one; beyond it, each further stone goes to the
    empty point farthest from the stones already placed (off the first line while there is
    room), which spreads them evenly.
    """
    n = size * size
    if not 1 <= stones < n:
        raise ValueError(f"cannot place {stones} handicap stones on a {size}x{size} board")
    placed: list[int] = []
    for k in range(min(stones, 9), 1, -1):
        try:
            placed = [grid.from_vertex(v, size) for v in fixed_handicap_vertices(size, k)]
            break
        except ValueError:
            continue
    rows, cols = np.divmod(np.arange(n), size)
    inner = (rows > 0) & (rows < size - 1) & (cols > 0) & (cols < size - 1)
    while len(placed) < stones:
        free = np.ones(n, bool)
        free[placed] = False
        pool = free & inner if (free & inner).any() else free
        if placed:
            pr, pc = np.divmod(np.asarray(placed), size)
            dist = np.min(np.abs(rows[:, None] - pr[None]) + np.abs(cols[:, None] - pc[None]), axis=1)
        else:
            dist = -(np.abs(rows - size // 2) + np.abs(cols - size // 2))
        placed.append(int(np.argmax(np.where(pool, dist, -10 * n))))
    return placed
