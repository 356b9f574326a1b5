"""The replay buffer: FIFO order against a deque, capacity, sampling only filled rows, jit.

Every example carries its own id (its value, and its planes filled with ``id % 251``), so the
buffer's contents can be compared row by row with a ``collections.deque(maxlen=C)`` of ids.
Shapes are few and fixed (capacities 1, 3, 5; batches of 4): compilation dominates.
"""

from __future__ import annotations

import collections

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alphago_jax.train import Examples, ReplayBuffer, replay_add, replay_init, replay_sample

SIZE, PLANES, ACTIONS, BATCH = 3, 2, 10, 4

add = jax.jit(replay_add)
sample = jax.jit(replay_sample, static_argnums=2)


def one_example():
    return Examples(
        planes=jnp.zeros((SIZE, SIZE, PLANES), jnp.uint8),
        policy=jnp.zeros((ACTIONS,), jnp.float32),
        value=jnp.zeros((), jnp.float32),
    )


def batch_of(ids) -> Examples:
    """Examples whose planes, policy and value all encode their id (ids >= 1)."""
    ids = np.asarray(ids)
    planes = np.broadcast_to((ids % 251).astype(np.uint8)[:, None, None, None], (len(ids), SIZE, SIZE, PLANES))
    policy = np.zeros((len(ids), ACTIONS), np.float32)
    policy[np.arange(len(ids)), ids % ACTIONS] = 1.0
    return Examples(jnp.asarray(planes), jnp.asarray(policy), jnp.asarray(ids, jnp.float32))


def ordered_ids(buffer: ReplayBuffer) -> list[int]:
    """The ids in the buffer, oldest first (see the ReplayBuffer docstring)."""
    size, insert = int(buffer.size), int(buffer.insert)
    rows = np.arange(size) if size < buffer.capacity else (insert + np.arange(size)) % buffer.capacity
    return [int(v) for v in np.asarray(buffer.value)[rows]]


def assert_rows_consistent(buffer: ReplayBuffer):
    """Every filled row holds one whole example; every unfilled row is zeros."""
    size = int(buffer.size)
    ids = np.asarray(buffer.value).astype(np.int64)
    planes, policy = np.asarray(buffer.planes), np.asarray(buffer.policy)
    for row in range(buffer.capacity):
        if row < size:
            assert (planes[row] == ids[row] % 251).all()
            assert policy[row].argmax() == ids[row] % ACTIONS and policy[row].sum() == 1.0
        else:
            assert ids[row] == 0 and not planes[row].any() and not policy[row].any()


def test_init_shapes_and_dtypes():
    buffer = replay_init(5, one_example())
    chex.assert_shape(buffer.planes, (5, SIZE, SIZE, PLANES))
    chex.assert_type(buffer.planes, jnp.uint8)
    chex.assert_shape(buffer.policy, (5, ACTIONS))
    chex.assert_shape(buffer.value, (5,))
    chex.assert_type([buffer.policy, buffer.value], [jnp.float32, jnp.float32])
    chex.assert_shape([buffer.insert, buffer.size], [(), ()])
    chex.assert_type([buffer.insert, buffer.size], [jnp.int32, jnp.int32])
    assert buffer.capacity == 5 and int(buffer.size) == 0 and int(buffer.insert) == 0
    with pytest.raises(ValueError, match="capacity"):
        replay_init(0, one_example())


@settings(max_examples=40, deadline=None)
@given(
    capacity=st.sampled_from([1, 3, 5]),
    masks=st.lists(st.lists(st.booleans(), min_size=BATCH, max_size=BATCH), min_size=1, max_size=8),
)
def test_add_matches_deque(capacity, masks):
    buffer = replay_init(capacity, one_example())
    reference = collections.deque(maxlen=capacity)
    next_id = 1
    for mask in masks:
        ids = list(range(next_id, next_id + BATCH))
        next_id += BATCH
        buffer = add(buffer, batch_of(ids), jnp.asarray(mask))
        reference.extend(i for i, keep in zip(ids, mask) if keep)
        assert int(buffer.size) == len(reference) <= capacity
        assert ordered_ids(buffer) == list(reference)
    assert_rows_consistent(buffer)


def test_more_valid_rows_than_capacity_keeps_the_last():
    buffer = replay_init(3, one_example())
    buffer = add(buffer, batch_of([1, 2, 3, 4]), jnp.asarray([True, True, True, True]))
    assert ordered_ids(buffer) == [2, 3, 4] and int(buffer.size) == 3
    buffer = add(buffer, batch_of([5, 6, 7, 8]), jnp.asarray([True, False, True, True]))
    assert ordered_ids(buffer) == [5, 7, 8] and int(buffer.insert) == (1 + 3) % 3


def test_valid_none_adds_every_row():
    buffer = add(replay_init(5, one_example()), batch_of([1, 2, 3, 4]), None)
    assert ordered_ids(buffer) == [1, 2, 3, 4]


def test_samples_only_filled_rows():
    buffer = replay_init(5, one_example())
    buffer = add(buffer, batch_of([7, 8, 9, 10]), jnp.asarray([True, False, True, False]))
    batch = sample(buffer, jax.random.key(0), 256)
    chex.assert_shape([batch.planes, batch.policy, batch.value], [(256, SIZE, SIZE, PLANES), (256, ACTIONS), (256,)])
    chex.assert_type([batch.planes, batch.policy, batch.value], [jnp.uint8, jnp.float32, jnp.float32])
    values = np.asarray(batch.value)
    assert set(values.tolist()) == {7.0, 9.0}  # both filled rows drawn, nothing else
    assert (np.asarray(batch.planes) == (values.astype(np.int64) % 251)[:, None, None, None]).all()
    # A full buffer that wrapped around: every row is live.
    for start in (11, 15):
        buffer = add(buffer, batch_of(list(range(start, start + 4))), None)
    assert set(np.asarray(sample(buffer, jax.random.key(1), 256).value).tolist()) == set(ordered_ids(buffer))


def test_empty_buffer_samples_zeros():
    batch = sample(replay_init(5, one_example()), jax.random.key(0), 8)
    chex.assert_trees_all_equal(batch, jax.tree.map(jnp.zeros_like, batch))
    chex.assert_shape(batch.planes, (8, SIZE, SIZE, PLANES))


def test_add_rejects_wrong_shapes():
    buffer = replay_init(5, one_example())
    bad = batch_of([1, 2, 3, 4]).replace(policy=jnp.zeros((BATCH, ACTIONS + 1)))
    with pytest.raises(AssertionError):
        replay_add(buffer, bad, None)
    with pytest.raises(AssertionError):
        replay_add(buffer, batch_of([1, 2, 3, 4]), jnp.ones((3,), bool))


class TestVariants(chex.TestCase):
    """The same adds and samples, jitted and not."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_add_and_sample(self):
        add_v = self.variant(replay_add)
        sample_v = self.variant(replay_sample, static_argnums=2)
        masks = [[True, False, True, True], [False, False, False, False], [True, True, True, True]]
        buffer = reference = replay_init(5, one_example())
        for k, mask in enumerate(masks):
            examples, valid = batch_of(range(1 + 4 * k, 5 + 4 * k)), jnp.asarray(mask)
            buffer, reference = add_v(buffer, examples, valid), add(reference, examples, valid)
        chex.assert_trees_all_equal(buffer, reference)
        assert ordered_ids(buffer) == [4, 9, 10, 11, 12]
        chex.assert_trees_all_equal(sample_v(buffer, jax.random.key(3), 16), sample(reference, jax.random.key(3), 16))
