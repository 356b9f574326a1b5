"""Random history-keeping Go positions for the feature tests, played in one jitted scan.

Play is biased toward captures (``gamegen.biased_action``) so that ataris, captures and
recaptures are common. Every state along each game is returned, stacked, for batched checks.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

import gamegen
from alphago_jax.games.go import Go
from alphago_jax.games.history import WithHistory


@functools.partial(jax.jit, static_argnums=(0, 2, 3))
def _play(game: WithHistory, key, batch: int, steps: int):
    n = game.num_points

    def one(key):
        def body(s, key):
            a = gamegen.biased_action(key, s, n, capture_p=0.5, pass_p=0.02)
            a = jnp.where(s.terminal, n, a)
            s2 = game.step(s, a)
            return s2, (s2, a)

        _, (states, actions) = jax.lax.scan(body, game.init(), jax.random.split(key, steps))
        return states, actions

    return jax.vmap(one)(jax.random.split(key, batch))


def play(size: int, seed: int, batch: int, steps: int, boards: int = 8, max_moves: int | None = None):
    """(game, states, actions): ``batch`` games of ``steps`` moves; states are stacked
    ``[batch, steps]`` HistoryStates after each move, actions int32[batch, steps]."""
    game = WithHistory(Go(size=size, max_moves=max_moves), boards=boards)
    states, actions = _play(game, jax.random.PRNGKey(seed), batch, steps)
    return game, states, np.asarray(actions)


def take(states, index):
    """The states at ``index`` (numpy fancy index over the leading axes), as a stacked batch."""
    return jax.tree_util.tree_map(lambda x: jnp.asarray(np.asarray(x)[index]), states)
