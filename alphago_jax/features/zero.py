"""AlphaGo Zero's 17 input planes (Silver et al. 2017, "Neural network architecture").

``s_t = [X_t, X_{t-1}, ..., X_{t-7}, Y_t, ..., Y_{t-7}, C]``: ``X_{t-i}`` the stones of the
player to move on the board ``i`` moves ago, ``Y_{t-i}`` the opponent's, ``C`` all ones when
black is to move; boards before the start are empty. The state must be a
``games.history.WithHistory(game, boards=8)`` one (more boards work: the 8 most recent are used).
"""

from __future__ import annotations

import jax.numpy as jnp

HISTORY = 8
NUM_PLANES = 2 * HISTORY + 1
# One short name per plane, in plane order.
PLANE_NAMES = (*(f"own t-{i}" for i in range(HISTORY)), *(f"opponent t-{i}" for i in range(HISTORY)), "black to play")


def zero_planes(state) -> jnp.ndarray:
    """float32[size, size, 17]: AlphaGo Zero's planes of one ``HistoryState`` (``boards`` int8[k >= 8, N]).

    Planes 0-7: the mover's stones on the last 8 boards, most recent first; 8-15: the opponent's;
    16: 1 if black is to move. ``jax.vmap`` it for a batch.
    """
    boards = state.boards
    k, n = boards.shape
    if k < HISTORY:
        raise ValueError(f"zero_planes needs the last {HISTORY} boards; the state keeps {k}")
    size = int(round(n ** 0.5))
    boards = boards[:HISTORY].astype(jnp.int32)
    p = state.to_play.astype(jnp.int32)
    own = (boards == p).astype(jnp.float32)
    opp = (boards == -p).astype(jnp.float32)
    colour = jnp.broadcast_to((p > 0).astype(jnp.float32), (1, n))
    planes = jnp.concatenate([own, opp, colour], axis=0)  # [17, N]
    return planes.T.reshape(size, size, NUM_PLANES)
