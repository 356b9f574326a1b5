"""NoGo ("anti-atari Go") as pure JAX functions on the Go machinery.

Rules followed (NoGo as in the MCPS paper's experiments, seed 002; checked move by move
against GNU Go's Go legality in ``tests/test_nogo.py``):

- Board sizes 2 to 19 (``size``); actions are points ``row * size + col`` (row 0 is the top
  edge, column 0 is GTP column A). ``num_actions`` is ``size * size + 1`` as in the whole Go
  family, but the last action (pass) is never legal. Black moves first on an empty board.
- A move is legal exactly when the point is empty, the move captures nothing (no adjacent enemy
  chain has this point as its only liberty) and it is not suicide (the new stone's chain keeps
  a liberty). Equivalently: a Go move (suicide forbidden) that leaves every chain on the board
  with at least one liberty. No stone is ever removed, so ko and superko never arise.
- The player to move who has no legal move loses; the game ends as soon as that happens.
  There are no draws (the board has ``size * size`` points, so a game lasts at most that many
  moves).
- Stepping an illegal action (pass included) ends the game as a loss for the player who made
  it; actions once the game is over are ignored.
- ``returns`` is ``(+1, -1)`` if black won, ``(-1, +1)`` if white won, zeros until the end.

Move codes (GRAVE/MCPS): player x action, ``action`` for black and ``num_actions + action``
for white, in ``[0, 2 * (size * size + 1))`` (the pass codes are never used), as in Go.

The state is a ``GoState``; ``state.loser`` is the colour that lost. ``init_from_board``
starts from setup stones; a setup in which the player to move has no legal move is already over.
"""

from __future__ import annotations

import dataclasses

import jax.numpy as jnp

from alphago_jax.games.atari_go import _NoPassGoVariant
from alphago_jax.games.go import GoState

@dataclasses.dataclass(frozen=True)
class NoGo(_NoPassGoVariant):
    """NoGo on a ``size`` x ``size`` board (see the module docstring for the rules)."""

    _title = "NoGo"

    @property
    def name(self) -> str:
        return "nogo"

    def _points_legal(self, state: GoState) -> jnp.ndarray:
        """bool[N]: empty points where the mover's chain keeps a liberty and no enemy chain loses its last.

        ``atari_lib`` (per stone, its chain's only liberty, or -1) says which neighbouring
        chains are in atari: an enemy one would be captured, a friendly one gives no liberty.
        """
        empty, keeps_liberty, captures = self._move_facts(state)
        return empty & keeps_liberty & ~captures
