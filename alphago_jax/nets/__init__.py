"""The Flax (Linen) networks of AlphaGo and AlphaGo Zero.

- ``PolicyNet``: AlphaGo's SL/RL policy network, 48 planes -> logits over ``S*S + 1`` actions.
- ``ValueNet``: AlphaGo's value network, 49 planes -> value in ``[-1, 1]``.
- ``DualResNet``: AlphaGo Zero's residual network, 17 planes -> (logits, value), batch norm;
  optionally KataGo's ownership and score heads (a ``DualOutput``) and global pooling.
- ``RolloutPolicy``: AlphaGo's fast rollout policy, a linear softmax over local features of a
  ``GoState`` (not a Flax module: ``init(key)``, ``logits(params, state)``, ``sample``).

Every network takes ``[batch, size, size, planes]`` input, works at any board size (the
defaults are the papers' 19x19 networks) and returns float32 outputs; ``dtype=jnp.bfloat16``
computes in bfloat16 with float32 parameters. Parameters are explicit pytrees::

    net = PolicyNet()
    variables = init_variables(net, key, size=19)
    logits = jax.jit(net.apply)(variables, planes)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.nets.policy import ConvTrunk, PolicyNet, masked_softmax
from alphago_jax.nets.resnet import DualOutput, DualResNet, GlobalPoolBlock, ResidualBlock, policy_value, policy_value_apply
from alphago_jax.nets.rollout import RolloutPolicy
from alphago_jax.nets.value import ValueNet


def init_variables(net, key, size: int = 19, batch: int = 1):
    """Variables of ``net`` (one with an ``in_planes`` attribute) for ``size`` x ``size`` boards.

    Returns ``{"params": ...}`` (plus ``"batch_stats"`` for ``DualResNet``), float32 leaves.
    Wrap in ``jax.eval_shape`` to get shapes without computing anything.
    """
    return net.init(key, jnp.zeros((batch, size, size, net.in_planes), jnp.float32))


def param_count(tree) -> int:
    """Total number of array elements in a pytree (of arrays or ``ShapeDtypeStruct``s)."""
    return int(sum(np.prod(x.shape, dtype=np.int64) for x in jax.tree_util.tree_leaves(tree)))


__all__ = [
    "ConvTrunk",
    "DualOutput",
    "DualResNet",
    "GlobalPoolBlock",
    "PolicyNet",
    "ResidualBlock",
    "RolloutPolicy",
    "ValueNet",
    "init_variables",
    "masked_softmax",
    "param_count",
    "policy_value",
    "policy_value_apply",
]
