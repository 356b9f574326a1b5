"""A fixed-capacity circular replay buffer of AlphaGo Zero training examples.

Every example is a triple (s, pi, z): the network's input planes, the search's visit
distribution and the game's outcome for the player to move. The buffer is a pytree of
fixed-shape arrays, and the functions are pure, so a whole self-play step (search, then
``replay_add``) or training step (``replay_sample``, then a gradient step) compiles into one
jitted function and the buffer can be checkpointed like any other pytree::

    buffer = replay_init(500_000, Examples(planes[0], policy[0], value[0]))
    buffer = replay_add(buffer, Examples(planes, policy, value), valid)   # jit-able
    batch = replay_sample(buffer, key, 256)                                # jit-able

Once full, each new example overwrites the oldest one (first in, first out), as AlphaGo
Zero's window over the most recent self-play games.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Examples:
    """Training examples: one (no leading axis) or a batch of B (leading axis B).

    Attributes:
      planes: [B, S, S, P] network input, any dtype (uint8, bool or float32 planes).
      policy: float32[B, A], the search's visit distribution (the policy target).
      value: float32[B], the game's outcome for the player to move (the value target).
    """

    planes: jax.Array
    policy: jax.Array
    value: jax.Array


@struct.dataclass
class ReplayBuffer:
    """Storage for ``C`` examples, written circularly.

    Attributes:
      planes: [C, S, S, P], the dtype of the example given to ``replay_init``.
      policy: float32[C, A].
      value: float32[C].
      insert: int32[], the row the next example goes to.
      size: int32[], how many rows hold examples (at most C). Rows ``>= size`` are zeros.

    While ``size < C`` the filled rows are ``0 .. size-1`` in the order they were added; once
    full, the oldest row is ``insert`` and the order is ``insert, ..., C-1, 0, ..., insert-1``.
    """

    planes: jax.Array
    policy: jax.Array
    value: jax.Array
    insert: jax.Array
    size: jax.Array

    @property
    def capacity(self) -> int:
        """C, a Python int (static)."""
        return self.value.shape[0]


def replay_init(capacity: int, example: Examples) -> ReplayBuffer:
    """An empty buffer for ``capacity`` examples shaped like ``example`` (one, unbatched).

    ``planes`` keep the example's dtype; ``policy`` and ``value`` are stored as float32.
    All storage starts as zeros, ``insert = size = 0``.
    """
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    planes = jnp.asarray(example.planes)
    policy = jnp.asarray(example.policy)
    value = jnp.asarray(example.value)
    chex.assert_rank([policy, value], [1, 0])
    return ReplayBuffer(
        planes=jnp.zeros((capacity,) + planes.shape, planes.dtype),
        policy=jnp.zeros((capacity,) + policy.shape, jnp.float32),
        value=jnp.zeros((capacity,), jnp.float32),
        insert=jnp.zeros((), jnp.int32),
        size=jnp.zeros((), jnp.int32),
    )


def replay_add(buffer: ReplayBuffer, examples: Examples, valid: jax.Array | None = None) -> ReplayBuffer:
    """Append the rows of a batch marked in ``valid``, in row order, overwriting the oldest.

    Args:
      buffer: the buffer (capacity C).
      examples: a batch of B examples with the buffer's per-example shapes (cast to the
        buffer's dtypes).
      valid: bool[B], the rows to keep (e.g. positions of games that have ended, or not
        padding); the others are not written. None keeps every row.

    Returns:
      The new buffer: ``size`` grows by ``sum(valid)`` up to C, ``insert`` advances by
      ``sum(valid)`` modulo C. If more than C rows are valid, only the last C are kept,
      exactly as if they had been added one at a time.
    """
    capacity = buffer.capacity
    batch = examples.value.shape[0]
    chex.assert_shape(examples.planes, (batch,) + buffer.planes.shape[1:])
    chex.assert_shape(examples.policy, (batch,) + buffer.policy.shape[1:])
    chex.assert_shape(examples.value, (batch,))
    valid = jnp.ones((batch,), bool) if valid is None else jnp.asarray(valid, bool)
    chex.assert_shape(valid, (batch,))

    # The k-th valid row (k = 0, 1, ...) goes to (insert + k) mod C. Rows that would be
    # overwritten within this same batch are dropped too: a scatter with duplicate indices
    # has no defined winner.
    rank = jnp.cumsum(valid, dtype=jnp.int32) - 1
    count = rank[-1] + 1 if batch else jnp.int32(0)
    keep = valid & (rank >= count - capacity)
    # Index C is out of bounds: mode="drop" skips the rows not kept.
    rows = jnp.where(keep, (buffer.insert + rank) % capacity, capacity)

    def put(store, new):
        return store.at[rows].set(new.astype(store.dtype), mode="drop")

    return ReplayBuffer(
        planes=put(buffer.planes, examples.planes),
        policy=put(buffer.policy, examples.policy),
        value=put(buffer.value, examples.value),
        insert=((buffer.insert + count) % capacity).astype(jnp.int32),
        size=jnp.minimum(buffer.size + count, capacity).astype(jnp.int32),
    )


def replay_sample(buffer: ReplayBuffer, key: jax.Array, batch: int) -> Examples:
    """``batch`` examples drawn uniformly, with replacement, from the filled rows (``< size``).

    Returns ``Examples`` with planes ``[batch, S, S, P]`` (the buffer's dtype), policy
    float32[batch, A] and value float32[batch].

    An empty buffer (``size == 0``) is not an error, so that this stays usable inside jit:
    every draw is row 0, which holds zeros, so the batch is all zeros (an all-zero policy
    target). Callers train only once ``size`` is large enough.
    """
    rows = jax.random.randint(key, (batch,), 0, jnp.maximum(buffer.size, 1), dtype=jnp.int32)
    return Examples(planes=buffer.planes[rows], policy=buffer.policy[rows], value=buffer.value[rows])
