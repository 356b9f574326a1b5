"""AlphaGo Zero's dual-head residual network (Silver et al. 2017).

Architecture (defaults: the paper's 20-block network, i.e. the convolutional block + 19
residual blocks, 256 filters, 17 input planes)::

    x: [B, S, S, 17]
    stem:      conv 3x3 F, BN, ReLU
    block x N: conv 3x3 F, BN, ReLU, conv 3x3 F, BN, + skip, ReLU
    policy:    conv 1x1 2, BN, ReLU, flatten, FC S*S+1           -> logits [B, S*S + 1]
    value:     conv 1x1 1, BN, ReLU, flatten, FC 256, ReLU, FC 1, tanh   -> value [B]

Convolutions followed by batch norm have no bias (the norm's offset plays that role); the
fully connected layers have biases. Batch norm keeps running statistics in the
``batch_stats`` collection::

    variables = net.init(key, x)                          # {"params", "batch_stats"}
    (logits, v), upd = net.apply(variables, x, train=True, mutable=["batch_stats"])
    variables = {**variables, **upd}                      # running statistics updated
    logits, v = net.apply(variables, x)                   # train=False: running statistics

At 19x19 with the defaults the network has 22,827,877 parameters: stem 39,680 (conv 39,168 +
BN 512), 19 blocks of 1,180,672, policy head 262,242 (conv 512 + BN 4 + FC 722*362 + 362),
value head 93,187 (conv 256 + BN 2 + FC 361*256 + 256 + FC 257); plus 19,974 running
statistics in ``batch_stats``. The paper gives the layers, not a parameter count.
"""

from __future__ import annotations

import functools

import flax.linen as nn
import jax.numpy as jnp

from alphago_jax.nets.policy import Dtype, check_planes


def _batch_norm(net, train: bool):
    """``nn.BatchNorm`` configured by a module's ``bn_momentum``, ``bn_epsilon`` and ``dtype``."""
    return functools.partial(nn.BatchNorm, use_running_average=not train, momentum=net.bn_momentum,
                             epsilon=net.bn_epsilon, dtype=net.dtype)


class ResidualBlock(nn.Module):
    """conv 3x3, BN, ReLU, conv 3x3, BN, add the input, ReLU. ``[B, S, S, F]`` -> same."""

    filters: int
    bn_momentum: float = 0.9
    bn_epsilon: float = 1e-5
    dtype: Dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jnp.ndarray, train: bool) -> jnp.ndarray:
        conv = functools.partial(nn.Conv, self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype)
        norm = _batch_norm(self, train)
        h = nn.relu(norm(name="bn0")(conv(name="conv0")(x)))
        h = norm(name="bn1")(conv(name="conv1")(h))
        return nn.relu(x + h)


class DualResNet(nn.Module):
    """AlphaGo Zero's network: residual tower with a policy head and a value head.

    Attributes:
      in_planes: input planes (17: 8 positions x 2 colours + colour to play).
      blocks: residual blocks after the convolutional stem (19: the paper's "20 blocks"; 39 for
        its 40-block network; 2 is fine for tests).
      filters: channels of the tower (256).
      value_hidden: width of the value head's hidden layer (256).
      bn_momentum: decay of the running statistics (0.9).
      bn_epsilon: batch norm epsilon (1e-5).
      dtype: computation dtype (float32 or bfloat16); parameters and running statistics are
        float32, outputs always float32.

    Call: ``x`` ``[B, S, S, in_planes]``, ``train`` (use and update batch statistics; needs
    ``mutable=["batch_stats"]``) -> ``(logits float32[B, S*S + 1], value float32[B])``: policy
    logits (index ``row * S + col``, pass last) and the expected outcome in ``[-1, 1]`` for
    the player to move.
    """

    in_planes: int = 17
    blocks: int = 19
    filters: int = 256
    value_hidden: int = 256
    bn_momentum: float = 0.9
    bn_epsilon: float = 1e-5
    dtype: Dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jnp.ndarray, train: bool = False) -> tuple[jnp.ndarray, jnp.ndarray]:
        size = check_planes(x, self.in_planes, type(self).__name__)
        norm = _batch_norm(self, train)
        x = jnp.asarray(x, self.dtype)
        h = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="stem_conv")(x)
        h = nn.relu(norm(name="stem_bn")(h))
        for i in range(self.blocks):
            h = ResidualBlock(
                self.filters, self.bn_momentum, self.bn_epsilon, dtype=self.dtype, name=f"block{i}"
            )(h, train)

        p = nn.Conv(2, (1, 1), use_bias=False, dtype=self.dtype, name="policy_conv")(h)
        p = nn.relu(norm(name="policy_bn")(p))
        p = p.reshape(p.shape[:-3] + (size * size * 2,))
        logits = nn.Dense(size * size + 1, dtype=self.dtype, name="policy_fc")(p)

        v = nn.Conv(1, (1, 1), use_bias=False, dtype=self.dtype, name="value_conv")(h)
        v = nn.relu(norm(name="value_bn")(v))
        v = v.reshape(v.shape[:-3] + (size * size,))
        v = nn.relu(nn.Dense(self.value_hidden, dtype=self.dtype, name="value_fc")(v))
        v = nn.Dense(1, dtype=self.dtype, name="value_out")(v)[..., 0]
        return logits.astype(jnp.float32), jnp.tanh(v.astype(jnp.float32))


__all__ = ["DualResNet", "ResidualBlock"]
