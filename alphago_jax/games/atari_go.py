"""AtariGo (capture Go: the first capture wins) on the Go machinery, as pure JAX functions.

Rules: boards 2 to 19, actions ``row * size + col`` (row 0 the top edge); ``num_actions`` is
``size * size + 1`` as in Go, but pass is never legal. Black moves first. A move is legal when it
is legal in Go with suicide forbidden (ko never arises before the first capture). The first move
that captures wins; a player with no legal move loses; there are no draws. An illegal action
(pass included) loses, and actions after the end are ignored. ``returns`` is ``(+1, -1)`` if
black won, ``(-1, +1)`` if white won, zeros until the end. Move codes are Go's (player x action).

The state is a ``GoState`` whose ``loser`` is the colour that lost. ``init_from_board`` starts
from setup stones; a setup where the player to move has no legal move is already over.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from alphago_jax.games.base import BLACK
from alphago_jax.games.go import Go, GoState

@dataclasses.dataclass(frozen=True)
class _NoPassGoVariant(Go):
    """Shared frame of AtariGo and NoGo: Go moves with simple ko, no pass, a stuck player loses.

    Only ``size`` is configurable; ``max_moves`` is ``size * size``, which no game reaches.
    """

    size: int = 9
    komi: float = dataclasses.field(default=0.0, init=False, repr=False)
    superko: bool = dataclasses.field(default=False, init=False, repr=False)
    allow_suicide: bool = dataclasses.field(default=False, init=False, repr=False)
    max_moves: int | None = dataclasses.field(default=None, init=False, repr=False)

    _title = "Go variant"

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "max_moves", self.size * self.size)

    def init_from_board(self, board, to_play=BLACK) -> GoState:
        """A game from setup stones (``Go.init_from_board``); over at once if the mover is stuck."""
        state = super().init_from_board(board, to_play)
        stuck = ~jnp.any(state.legal)
        return state.replace(terminal=stuck, loser=jnp.where(stuck, state.to_play, 0).astype(jnp.int8))

    def _points_legal(self, state: GoState) -> jnp.ndarray:
        """bool[N]: legal points for ``state.to_play`` (the variant's rule)."""
        return super()._legal(state)[: self.num_points]

    def _legal(self, state: GoState) -> jnp.ndarray:
        return jnp.concatenate([self._points_legal(state), jnp.zeros((1,), bool)])

    def _ends_by_rule(self, state: GoState, played, captured) -> jnp.ndarray:
        """bool[]: whether the move just played ends the game as a loss for ``state.to_play``."""
        return ~state.terminal & ~jnp.any(state.legal)

    def _rule_outcome(self, state: GoState, played, captured) -> GoState:
        end = self._ends_by_rule(state, played, captured)
        return state.replace(
            terminal=state.terminal | end,
            loser=jnp.where(end, state.to_play, state.loser).astype(jnp.int8),
            legal=state.legal & ~end,
        )

    def returns(self, state: GoState) -> jnp.ndarray:
        """float32[2]: (black, white), +1 for the winner and -1 for the loser; zeros until the end."""
        s = -state.loser.astype(jnp.float32)
        return jnp.where(state.terminal, jnp.stack([s, -s]), 0.0).astype(jnp.float32)


@dataclasses.dataclass(frozen=True)
class AtariGo(_NoPassGoVariant):
    """AtariGo on a ``size`` x ``size`` board (see the module docstring for the rules)."""

    _title = "AtariGo"

    @property
    def name(self) -> str:
        return "atari_go"

    def _ends_by_rule(self, state: GoState, played, captured) -> jnp.ndarray:
        # A capture ends the game: the captured side is the one now to move. Otherwise the
        # player to move loses if they have no legal move.
        return (played & jnp.any(captured)) | (~state.terminal & ~jnp.any(state.legal))
