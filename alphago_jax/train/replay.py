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

Examples may also carry the targets of KataGo's auxiliary heads (``nets.DualOutput``): the final
ownership of every point and the final score margin, both from the player to move's view. A
buffer made from an example without them (``None``) stores none, so it costs nothing extra; with
them (an ``AuxReplayBuffer``), ownership is stored as int8 (S*S bytes per position, against
the planes' 17 * S*S).
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
      ownership: int8[B, S*S] or None: each point's final Tromp-Taylor owner, +1 the player to
        move, -1 the opponent, 0 neither (the ownership head's target).
      score: float32[B] or None: the final area score margin (komi included) for the player to
        move, in points (the score head's target).
    """

    planes: jax.Array
    policy: jax.Array
    value: jax.Array
    ownership: jax.Array | None = None
    score: jax.Array | None = None


@struct.dataclass
class ReplayBuffer:
    """Storage for ``C`` examples, written circularly.

    Attributes:
      planes: [C, S, S, P], the dtype of the example given to ``replay_init``.
      policy: float32[C, A].
      value: float32[C].
      insert: int32[], the row the next example goes to.
      size: int32[], how many rows hold examples (at most C). Rows ``>= size`` are zeros.
      ownership, score: None: this buffer stores no auxiliary targets (``AuxReplayBuffer`` does).

    While ``size < C`` the filled rows are ``0 .. size-1`` in the order they were added; once
    full, the oldest row is ``insert`` and the order is ``insert, ..., C-1, 0, ..., insert-1``.
    """

    planes: jax.Array
    policy: jax.Array
    value: jax.Array
    insert: jax.Array
    size: jax.Array

    # Class attributes, not fields: the pytree (and so the checkpoints of runs without the
    # auxiliary heads, older ones included) keeps exactly the five arrays above.
    ownership = None
    score = None

    @property
    def capacity(self) -> int:
        """C, a Python int (static)."""
        return self.value.shape[0]


NO_OWNER = 2
"""An ``ownership`` target value (+-2 once seen from a player's side) that says "unknown": a
resigned game's board was never played out. ``score`` says so with NaN. The loss skips both."""


@struct.dataclass
class AuxReplayBuffer(ReplayBuffer):
    """A ``ReplayBuffer`` that also stores the auxiliary heads' targets (``replay_init`` makes one
    from an example that has them).

    Attributes:
      ownership: int8[C, S*S], or None where the example has no ownership.
      score: float32[C], or None where the example has no score.
    """

    ownership: jax.Array | None = None
    score: jax.Array | None = None


def replay_init(capacity: int, example: Examples) -> ReplayBuffer:
    """An empty buffer for ``capacity`` examples shaped like ``example`` (one, unbatched).

    ``planes`` keep the example's dtype; ``policy``, ``value`` and ``score`` are stored as
    float32, ``ownership`` as int8; the auxiliary targets only if the example has them (an
    ``AuxReplayBuffer``, else a ``ReplayBuffer``). All storage starts as zeros, ``insert = size = 0``.
    """
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity}")
    planes = jnp.asarray(example.planes)
    policy = jnp.asarray(example.policy)
    value = jnp.asarray(example.value)
    chex.assert_rank([policy, value], [1, 0])
    ownership = score = None
    if example.ownership is not None:
        chex.assert_rank(example.ownership, 1)
        ownership = jnp.zeros((capacity,) + jnp.shape(example.ownership), jnp.int8)
    if example.score is not None:
        chex.assert_rank(example.score, 0)
        score = jnp.zeros((capacity,), jnp.float32)
    aux = {} if ownership is None and score is None else {"ownership": ownership, "score": score}
    return (AuxReplayBuffer if aux else ReplayBuffer)(
        planes=jnp.zeros((capacity,) + planes.shape, planes.dtype),
        policy=jnp.zeros((capacity,) + policy.shape, jnp.float32),
        value=jnp.zeros((capacity,), jnp.float32),
        insert=jnp.zeros((), jnp.int32),
        size=jnp.zeros((), jnp.int32),
        **aux,
    )


def replay_add(buffer: ReplayBuffer, examples: Examples, valid: jax.Array | None = None) -> ReplayBuffer:
    """Append the rows of a batch marked in ``valid``, in row order, overwriting the oldest.

    Args:
      buffer: the buffer (capacity C).
      examples: a batch of B examples with the buffer's per-example shapes (cast to the
        buffer's dtypes), with the auxiliary targets exactly when the buffer stores them.
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
    for name in ("ownership", "score"):
        if (getattr(buffer, name) is None) != (getattr(examples, name) is None):
            raise ValueError(f"replay_add: the buffer {'lacks' if getattr(buffer, name) is None else 'needs'} "
                             f"the examples' {name}")
    if buffer.ownership is not None:
        chex.assert_shape(examples.ownership, (batch,) + buffer.ownership.shape[1:])
    if buffer.score is not None:
        chex.assert_shape(examples.score, (batch,))
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
        return None if store is None else store.at[rows].set(new.astype(store.dtype), mode="drop")

    aux = {k: put(getattr(buffer, k), getattr(examples, k)) for k in ("ownership", "score")
           if isinstance(buffer, AuxReplayBuffer)}
    return buffer.replace(
        planes=put(buffer.planes, examples.planes),
        policy=put(buffer.policy, examples.policy),
        value=put(buffer.value, examples.value),
        insert=((buffer.insert + count) % capacity).astype(jnp.int32),
        size=jnp.minimum(buffer.size + count, capacity).astype(jnp.int32),
        **aux,
    )


def replay_sample(buffer: ReplayBuffer, key: jax.Array, batch: int) -> Examples:
    """``batch`` examples drawn uniformly, with replacement, from the filled rows (``< size``).

    Returns ``Examples`` with planes ``[batch, S, S, P]`` (the buffer's dtype), policy
    float32[batch, A] and value float32[batch]; ownership int8[batch, S*S] and score
    float32[batch] where the buffer stores them (else None).

    An empty buffer (``size == 0``) is not an error, so that this stays usable inside jit:
    every draw is row 0, which holds zeros, so the batch is all zeros (an all-zero policy
    target). Callers train only once ``size`` is large enough.
    """
    rows = jax.random.randint(key, (batch,), 0, jnp.maximum(buffer.size, 1), dtype=jnp.int32)
    def take(store):
        return None if store is None else store[rows]

    return Examples(planes=buffer.planes[rows], policy=buffer.policy[rows], value=buffer.value[rows],
                    ownership=take(buffer.ownership), score=take(buffer.score))
