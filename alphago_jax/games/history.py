"""``WithHistory``: a Go-family game whose state also carries what the input planes need.

``WithHistory(game, boards=k)`` wraps a game; its ``HistoryState`` holds the inner state, the
last ``k`` boards (AlphaGo Zero's planes) and the move at which each stone was placed (AlphaGo's
"turns since" planes). The rules are untouched: every call goes to the inner game, and a step
adds O(k * N) work. A step the inner game ignores (the game was over) or rejects (an illegal
action) leaves the history as it is; a pass repeats the board::

    game = WithHistory(games.make("go", size=19))
    state = game.step(game.init(), 72)
    state.board, state.to_play          # the inner state's fields, read through
    state.inner                         # the GoState itself
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp
from flax import struct

from alphago_jax.games.base import BLACK, Game


@struct.dataclass
class HistoryState:
    """A Go-family state with its recent history. N = size * size, k = boards kept.

    Attributes:
      inner: the wrapped game's state (a ``GoState``).
      boards: int8[k, N], the last k boards, most recent first; before the start, zeros (an
        empty board) or, after setup stones, the setup board.
      placed_at: int32[N], the inner ``move_count`` just after the stone on each point was placed
        (1 for the first move; a stone's age in turns is ``move_count - placed_at + 1``); 0 on
        empty points and for setup stones.
    """

    inner: object
    boards: jnp.ndarray
    placed_at: jnp.ndarray

    # The inner state's fields, read through (consumers of the Game contract use these).
    board = property(lambda self: self.inner.board)
    to_play = property(lambda self: self.inner.to_play)
    chain_id = property(lambda self: self.inner.chain_id)
    atari_lib = property(lambda self: self.inner.atari_lib)
    legal = property(lambda self: self.inner.legal)
    ko = property(lambda self: self.inner.ko)
    passes = property(lambda self: self.inner.passes)
    move_count = property(lambda self: self.inner.move_count)
    terminal = property(lambda self: self.inner.terminal)
    loser = property(lambda self: self.inner.loser)
    last_move = property(lambda self: self.inner.last_move)


@dataclasses.dataclass(frozen=True)
class WithHistory(Game):
    """A Go-family game whose state keeps the last ``boards`` boards and stone placement times.

    Attributes:
      game: the wrapped game (``Go``, ``AtariGo`` or ``NoGo``).
      boards: how many boards to keep (k >= 1; 8 for AlphaGo Zero's planes).
    """

    game: Game
    boards: int = 8

    def __post_init__(self):
        if not isinstance(self.boards, int) or self.boards < 1:
            raise ValueError(f"boards must be a positive int, got {self.boards!r}")

    # ------------------------------------------------------------------ pass-through
    @property
    def size(self) -> int:
        return self.game.size

    @property
    def num_actions(self) -> int:
        return self.game.num_actions

    @property
    def num_move_codes(self) -> int:
        return self.game.num_move_codes

    @property
    def name(self) -> str:
        return self.game.name

    def __getattr__(self, attr):
        # Configuration read through (komi, superko, pass_action, max_moves, ...). Only called
        # when normal lookup fails; guard the dataclass internals against recursion.
        if attr.startswith("__") or attr == "game":
            raise AttributeError(attr)
        return getattr(self.game, attr)

    # ---------------------------------------------------------------------- contract
    def _wrap(self, inner) -> HistoryState:
        n = self.game.num_points
        boards = jnp.zeros((self.boards, n), jnp.int8).at[0].set(inner.board.astype(jnp.int8))
        return HistoryState(inner=inner, boards=boards, placed_at=jnp.zeros(n, jnp.int32))

    def init(self) -> HistoryState:
        """The inner game's initial state, with an empty history."""
        return self._wrap(self.game.init())

    def init_from_board(self, board, to_play=BLACK) -> HistoryState:
        """A game from setup stones (see ``Go.init_from_board``); setup stones have ``placed_at`` 0.

        Every history board is the setup board, as if both sides had passed: a network trained on
        games never sees a full board whose previous boards are empty (all its stones played at
        once), and it misreads such positions.
        """
        state = self._wrap(self.game.init_from_board(board, to_play))
        return state.replace(boards=jnp.broadcast_to(state.boards[0], state.boards.shape))

    def step(self, state: HistoryState, action) -> HistoryState:
        inner = self.game.step(state.inner, action)
        moved = inner.move_count != state.inner.move_count
        boards = jnp.concatenate([inner.board[None].astype(jnp.int8), state.boards[:-1]], axis=0)
        boards = jnp.where(moved, boards, state.boards)
        new_stone = (inner.board != 0) & (state.inner.board == 0)
        placed_at = jnp.where(new_stone, inner.move_count, state.placed_at)
        placed_at = jnp.where(inner.board == 0, 0, placed_at).astype(jnp.int32)
        return HistoryState(inner=inner, boards=boards, placed_at=placed_at)

    def legal_action_mask(self, state: HistoryState) -> jnp.ndarray:
        return self.game.legal_action_mask(state.inner)

    def is_terminal(self, state: HistoryState) -> jnp.ndarray:
        return self.game.is_terminal(state.inner)

    def returns(self, state: HistoryState) -> jnp.ndarray:
        return self.game.returns(state.inner)

    def move_code(self, state: HistoryState, action) -> jnp.ndarray:
        return self.game.move_code(state.inner, action)

    def score(self, state: HistoryState) -> jnp.ndarray:
        """float32[]: the inner game's score (Go: black area - white area - komi)."""
        return self.game.score(state.inner)

    def area(self, state: HistoryState) -> jnp.ndarray:
        """int32[2]: the inner game's Tromp-Taylor area of (black, white)."""
        return self.game.area(state.inner)

    def ownership(self, state: HistoryState) -> jnp.ndarray:
        """int8[N]: the inner game's Tromp-Taylor owner of each point (+1 black, -1 white, 0 neither)."""
        return self.game.ownership(state.inner)
