"""AlphaGo Zero's 17 input planes (Silver et al. 2017, "Neural network architecture"), and the
same with liberty planes added, as KataGo's inputs have them (Wu 2019, "Accelerating Self-Play
Learning in Go").

``s_t = [X_t, X_{t-1}, ..., X_{t-7}, Y_t, ..., Y_{t-7}, C]``: ``X_{t-i}`` the stones of the
player to move on the board ``i`` moves ago, ``Y_{t-i}`` the opponent's, ``C`` all ones when
black is to move; boards before the start are empty, or the setup board in a game from setup
stones (``WithHistory.init_from_board``). The state must be a
``games.history.WithHistory(game, boards=8)`` one (more boards work: the 8 most recent are used).

A network's ``inputs`` names its plane set (``INPUTS``):

- ``"stones"``: the 17 planes above (AlphaGo Zero: no knowledge but the rules).
- ``"liberties"``: the 17, then the mover's chains with 1, 2 and 3 or more liberties and the
  opponent's alike (6 planes, from the rules' chains): what a small network otherwise has to learn
  from many positions to read a capturing race or a string in atari. They cost a few µs a 9x9
  position (docs/benchmarks.md, "Input features"), well under 1% of a network evaluation.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp

from alphago_jax.features import alphago

HISTORY = 8
NUM_PLANES = 2 * HISTORY + 1
# One short name per plane, in plane order.
PLANE_NAMES = (*(f"own t-{i}" for i in range(HISTORY)), *(f"opponent t-{i}" for i in range(HISTORY)), "black to play")
LIBERTY_NAMES = tuple(f"{who} {n} libert{'y' if n == '1' else 'ies'}"
                      for who in ("own", "opponent") for n in ("1", "2", "3+"))
INPUTS = {"stones": PLANE_NAMES, "liberties": PLANE_NAMES + LIBERTY_NAMES}
"""Each input set's plane names, in plane order (its plane count: their number)."""


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


def _liberty_planes(state, size: int) -> jnp.ndarray:
    """float32[N, 6]: the mover's stones in chains of 1, 2, >= 3 liberties, then the opponent's."""
    b = state.board.astype(jnp.int32)
    p = state.to_play.astype(jnp.int32)
    chain_libs = alphago.stone_liberties(state.board, state.chain_id, size)
    planes = [(b == colour) & ((chain_libs == k) if k < 3 else (chain_libs >= 3))
              for colour in (p, -p) for k in (1, 2, 3)]
    return jnp.stack(planes, axis=1).astype(jnp.float32)


def liberty_planes(state) -> jnp.ndarray:
    """float32[size, size, 23]: the 17 planes of ``zero_planes``, then the 6 liberty planes
    (``INPUTS["liberties"]``) of one ``HistoryState``."""
    stones = zero_planes(state)
    size = stones.shape[0]
    return jnp.concatenate([stones, _liberty_planes(state, size).reshape(size, size, 6)], axis=-1)


_FUNCTIONS = {"stones": zero_planes, "liberties": liberty_planes}


def _known(inputs: str) -> str:
    if inputs not in INPUTS:
        raise ValueError(f"unknown input planes {inputs!r}; known: {', '.join(map(repr, INPUTS))}")
    return inputs


def planes_function(inputs: str) -> Callable:
    """The function of one state -> float32[size, size, C] for the input set ``inputs``."""
    return _FUNCTIONS[_known(inputs)]


def num_planes(inputs: str) -> int:
    """C, the number of planes of the input set ``inputs``."""
    return len(INPUTS[_known(inputs)])


def inputs_of(planes: int) -> str:
    """The input set whose plane count is ``planes`` (each set's count differs)."""
    for name, names in INPUTS.items():
        if len(names) == planes:
            return name
    raise ValueError(f"no input set has {planes} planes; known: "
                     + ", ".join(f"{k!r} ({len(v)})" for k, v in INPUTS.items()))


__all__ = ["HISTORY", "INPUTS", "LIBERTY_NAMES", "NUM_PLANES", "PLANE_NAMES", "inputs_of", "liberty_planes",
           "num_planes", "planes_function", "zero_planes"]
