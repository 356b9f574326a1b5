"""NoGo ("anti-atari Go") on the Go machinery, as pure JAX functions.

NoGo as played in Cazenave's "Monte Carlo Permutation Search" (arXiv:2510.06381, 2025); legality
is checked move by move against GNU Go's in ``tests/test_nogo.py``. Rules: boards 2 to 19,
actions ``row * size + col`` (row 0 the top edge); ``num_actions`` is ``size * size + 1`` as in
Go, but pass is never legal. Black moves first. A move is legal when the point is empty, it
captures nothing and it is not suicide: every chain keeps a liberty, so no stone is ever removed.
A player with no legal move loses; there are no draws. An illegal action (pass included) loses,
and actions after the end are ignored. ``returns`` is ``(+1, -1)`` if black won, ``(-1, +1)``
if white won, zeros until the end. Move codes are Go's (player x action).

The state is a ``GoState`` whose ``loser`` is the colour that lost. ``init_from_board`` starts
from setup stones; a setup where the player to move has no legal move is already over.
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
        """bool[N]: empty points where the mover's chain keeps a liberty and no enemy chain loses its last."""
        empty, keeps_liberty, captures = self._move_facts(state)
        return empty & keeps_liberty & ~captures
