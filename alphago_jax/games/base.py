"""The ``Game`` contract that every game implements and every consumer (search, features, play) uses.

A game is a frozen, hashable configuration whose methods are pure, jit- and vmap-safe functions
of one unbatched state (a ``flax.struct`` dataclass of fixed shape)::

    game = games.make("go", size=9, komi=7.5)
    state = game.step(game.init(), action)    # int32 action in [0, game.num_actions)
    mask = game.legal_action_mask(state)      # bool[game.num_actions]
    done = game.is_terminal(state)            # bool[]
    r = game.returns(state)                   # float32[2], (black, white); zeros until terminal

An illegal action never raises inside jit: the game ends as a loss for the player who made it.
The Python-facing layers (GTP, SGF, CLI) reject illegal moves before they reach ``step``.
"""

from __future__ import annotations

import abc
from typing import Any

import jax.numpy as jnp

BLACK = 1
WHITE = -1

State = Any  # a flax.struct dataclass with at least ``board`` and ``to_play``


class Game(abc.ABC):
    """Abstract base of every game. Subclasses are frozen dataclasses (hashable, static)."""

    size: int

    @property
    @abc.abstractmethod
    def num_actions(self) -> int:
        """Number of actions, including pass where the game has one."""

    @property
    def num_points(self) -> int:
        """Number of board points, ``size * size``."""
        return self.size * self.size

    @property
    def num_move_codes(self) -> int:
        """Number of distinct move codes for GRAVE/MCPS statistics (default: player x action)."""
        return 2 * self.num_actions

    @abc.abstractmethod
    def init(self) -> State:
        """The initial state: empty board, black to play."""

    @abc.abstractmethod
    def step(self, state: State, action: jnp.ndarray) -> State:
        """The state after ``action`` (int32 scalar). Pure; an illegal action loses."""

    @abc.abstractmethod
    def legal_action_mask(self, state: State) -> jnp.ndarray:
        """bool[num_actions]: the actions the player to move may take (all False once over)."""

    @abc.abstractmethod
    def is_terminal(self, state: State) -> jnp.ndarray:
        """bool[]: whether the game is over."""

    @abc.abstractmethod
    def returns(self, state: State) -> jnp.ndarray:
        """float32[2]: (black, white) outcome in {-1, 0, 1}; zeros until terminal."""

    def move_code(self, state: State, action: jnp.ndarray) -> jnp.ndarray:
        """int32[]: code of ``action`` in ``state``, in ``[0, num_move_codes)``; default ``action`` for
        black, ``num_actions + action`` for white."""
        return jnp.asarray(action, jnp.int32) + (state.to_play < 0).astype(jnp.int32) * self.num_actions

    @property
    def name(self) -> str:
        return type(self).__name__.lower()
