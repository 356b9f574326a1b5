"""Data parallelism: a batch split over a 1-D mesh of devices, the parameters replicated.

A jitted step runs unchanged on a batch so placed: XLA's SPMD partitioner inserts the
all-reduces, so means (a loss, batch norm's statistics) are over the global batch and the result
is the single-device step's up to floating-point summation order::

    mesh = make_mesh()                                  # all of jax.devices()
    state = replicate(init_train_state(variables, config), mesh)
    for batch in batches:
        state, metrics = train_step(state, shard_batch(batch, mesh), ...)
"""

from __future__ import annotations

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

DATA_AXIS = "data"
"""Name of the mesh axis that the batch is split along."""


def make_mesh(devices=None) -> Mesh:
    """A 1-D mesh with axis ``DATA_AXIS`` over ``devices`` (default: all of ``jax.devices()``)."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), (DATA_AXIS,))


def replicate(tree, mesh: Mesh):
    """Every leaf of ``tree`` (a ``TrainState``, variables) whole on every device of ``mesh``."""
    return jax.device_put(tree, NamedSharding(mesh, PartitionSpec()))


def shard_batch(batch, mesh: Mesh):
    """Every leaf of ``batch`` split along axis 0 over ``mesh``; ValueError unless the batch size
    is a multiple of the number of devices."""
    n = mesh.devices.size
    for leaf in jax.tree_util.tree_leaves(batch):
        if np.shape(leaf)[0] % n:
            raise ValueError(f"shard_batch: batch size {np.shape(leaf)[0]} is not a multiple of {n} devices")
    return jax.device_put(batch, NamedSharding(mesh, PartitionSpec(DATA_AXIS)))


def data_mesh(batch: int, name: str = "batch") -> Mesh | None:
    """The mesh of all of ``jax.devices()`` that batches of ``batch`` rows are split over, None on
    one device; ValueError (naming ``name``) unless ``batch`` is a multiple of the device count."""
    n = jax.device_count()
    if n == 1:
        return None
    if batch % n:
        raise ValueError(f"{name} = {batch} must be a multiple of the {n} devices each batch is split over "
                         f"(data parallel), e.g. {max(n, batch // n * n)}")
    return make_mesh()


def to_devices(tree, mesh: Mesh | None):
    """``tree`` split along its leading axis over ``mesh`` (``shard_batch``); as it is when
    ``mesh`` is None."""
    return tree if mesh is None else shard_batch(tree, mesh)


__all__ = ["DATA_AXIS", "data_mesh", "make_mesh", "replicate", "shard_batch", "to_devices"]
