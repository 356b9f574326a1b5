"""The Flax (Linen) networks of AlphaGo and AlphaGo Zero.

``PolicyNet`` (48 planes -> logits over ``S*S + 1`` actions) and ``ValueNet`` (49 planes ->
value in ``[-1, 1]``) are AlphaGo's; ``DualResNet`` (17 planes -> logits and value, batch norm,
optionally KataGo's heads and global pooling) is AlphaGo Zero's; ``RolloutPolicy`` (``rollout``)
is AlphaGo's fast linear rollout policy over a ``GoState`` (not a Flax module); ``saved`` reads
and writes network files. Networks take ``[batch, size, size, planes]`` at any board size
(defaults: the papers' 19x19), return float32, and compute in bfloat16 with
``dtype=jnp.bfloat16``::

    net = PolicyNet()
    variables = init_variables(net, key, size=19)
    logits = jax.jit(net.apply)(variables, planes)
"""

from alphago_jax.nets import rollout, saved
from alphago_jax.nets.policy import ConvTrunk, PolicyNet, masked_softmax
from alphago_jax.nets.resnet import DualOutput, DualResNet, GlobalPoolBlock, ResidualBlock, policy_value, policy_value_apply
from alphago_jax.nets.rollout import RolloutPolicy
from alphago_jax.nets.value import ValueNet
from alphago_jax.nets.variables import init_variables, param_count

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
    "rollout",
    "saved",
]
