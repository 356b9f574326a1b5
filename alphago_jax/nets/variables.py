"""Explicit parameter pytrees of the networks: their variables and sizes."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def init_variables(net, key, size: int = 19, batch: int = 1):
    """``{"params"}`` (and ``"batch_stats"`` for ``DualResNet``), float32, of ``net`` for ``size`` x
    ``size`` boards; under ``jax.eval_shape``, shapes only."""
    return net.init(key, jnp.zeros((batch, size, size, net.in_planes), jnp.float32))


def param_count(tree) -> int:
    """Total number of array elements in a pytree (of arrays or ``ShapeDtypeStruct``s)."""
    return int(sum(np.prod(x.shape, dtype=np.int64) for x in jax.tree_util.tree_leaves(tree)))


__all__ = ["init_variables", "param_count"]
