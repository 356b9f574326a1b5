"""AlphaGo Zero's dual-head residual network (Silver et al. 2017, "Mastering the game of Go
without human knowledge"), with KataGo's optional additions.

At the defaults (the paper's 20-block network: a convolutional block + 19 residual blocks)::

    x: [B, S, S, 17]
    stem:      conv 3x3 F, BN, ReLU
    block x N: conv 3x3 F, BN, ReLU, conv 3x3 F, BN, + skip, ReLU
    policy:    conv 1x1 2, BN, ReLU, flatten, FC S*S+1           -> logits [B, S*S + 1]
    value:     conv 1x1 1, BN, ReLU, flatten, FC 256, ReLU, FC 1, tanh   -> value [B]

Convolutions followed by batch norm have no bias; the fully connected layers have one. At 19x19
that is 22,827,877 parameters (plus 19,974 running statistics in ``batch_stats``)::

    variables = net.init(key, x)                          # {"params", "batch_stats"}
    (logits, v), upd = net.apply(variables, x, train=True, mutable=["batch_stats"])
    logits, v = net.apply({**variables, **upd}, x)        # train=False: running statistics

KataGo's additions (Wu 2019, "Accelerating Self-Play Learning in Go"), each off by default:
``global_pool`` (``GlobalPoolBlock`` in every third block from the last), the ``ownership``
(conv 1x1, tanh -> ``[B, S*S]``) and ``score`` (FC 1 on the value head's hidden layer, times S)
heads, and ``size_agnostic`` heads (1x1 convolutions and pooled features, so that one set of
parameters plays every board size). With an auxiliary head on, the call returns a
``DualOutput``; ``policy_value`` takes ``(logits, value)`` out of either form.
"""

from __future__ import annotations

import functools
from typing import Callable, NamedTuple

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


def _board_max(x: jnp.ndarray) -> jnp.ndarray:
    """``[B, S, S, C]`` -> ``[B, C]``: the maximum over the board, as a gather at the argmax.

    Why: ``jnp.max``'s gradient divides by the number of points equal to the maximum, and XLA
    may recompute the input with other rounding so that none does (0 / 0, NaN gradients).
    """
    flat = x.reshape(x.shape[:-3] + (-1, x.shape[-1]))
    at = jnp.argmax(flat, axis=-2, keepdims=True)
    return jnp.take_along_axis(flat, at, axis=-2)[..., 0, :]


def _pool(x: jnp.ndarray, width_scaled: bool) -> jnp.ndarray:
    """``[B, S, S, C]`` -> ``[B, 2C]`` (mean, max over the board) or, ``width_scaled``, ``[B, 3C]``
    (mean, mean * (S - 14) / 10, max: KataGo's feature that tells the board's size)."""
    mean = jnp.mean(x, axis=(-3, -2))
    parts = [mean, mean * ((x.shape[-2] - 14) / 10)] if width_scaled else [mean]
    return jnp.concatenate([*parts, _board_max(x)], axis=-1)


class GlobalPoolBlock(nn.Module):
    """A residual block with KataGo's global pooling bias. ``[B, S, S, F]`` -> same.

    conv 3x3 F split into F - G regular and G pooled channels; the pooled ones (BN, ReLU, mean and
    max over the board, plus with ``width_scaled`` the mean scaled by the board width) go through
    an FC layer into a bias on the regular ones; then BN, ReLU, conv 3x3 (F - G -> F), BN, add the
    input, ReLU. The pooled values see the whole board at once, which 3x3 convolutions cannot.
    """

    filters: int
    pooled: int
    bn_momentum: float = 0.9
    bn_epsilon: float = 1e-5
    dtype: Dtype = jnp.float32
    width_scaled: bool = False

    @nn.compact
    def __call__(self, x: jnp.ndarray, train: bool) -> jnp.ndarray:
        if not 1 <= self.pooled < self.filters:
            raise ValueError(f"GlobalPoolBlock: pooled channels must be in [1, filters), got {self.pooled} of "
                             f"{self.filters}")
        norm = _batch_norm(self, train)
        h = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="conv0")(x)
        regular, pooled = h[..., : self.filters - self.pooled], h[..., self.filters - self.pooled:]
        g = _pool(nn.relu(norm(name="bn_pool")(pooled)), self.width_scaled)
        bias = nn.Dense(self.filters - self.pooled, use_bias=False, dtype=self.dtype, name="pool_fc")(g)
        h = nn.relu(norm(name="bn0")(regular + bias[..., None, None, :]))
        h = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="conv1")(h)
        h = norm(name="bn1")(h)
        return nn.relu(x + h)


class DualOutput(NamedTuple):
    """``DualResNet``'s outputs when an auxiliary head is on (float32; None for a head that is off).

    Attributes:
      logits: float32[B, S*S + 1], policy logits (index ``row * S + col``, pass last).
      value: float32[B], the expected outcome in ``[-1, 1]`` for the player to move.
      ownership: float32[B, S*S] in ``[-1, 1]``, each point's final Tromp-Taylor owner, +1 the
        player to move; or None.
      score: float32[B], the final area margin in points (komi included) for the player to move;
        or None.
    """

    logits: jnp.ndarray
    value: jnp.ndarray
    ownership: jnp.ndarray | None = None
    score: jnp.ndarray | None = None


def policy_value(outputs) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(logits, value)`` of ``DualResNet``'s outputs: the plain pair or a ``DualOutput``."""
    return outputs[0], outputs[1]


def policy_value_apply(net: nn.Module) -> Callable:
    """``(variables, planes) -> (logits, value)``: ``net.apply`` in eval mode, auxiliary heads dropped
    (under jit, not computed)."""
    return lambda variables, planes: policy_value(net.apply(variables, planes))


class DualResNet(nn.Module):
    """AlphaGo Zero's network: residual tower with a policy head and a value head.

    Attributes:
      in_planes: input planes (17: 8 positions x 2 colours + colour to play).
      blocks: residual blocks after the stem (19: the paper's "20 blocks"; 39 for its 40 blocks).
      filters: channels of the tower (256).
      value_hidden: width of the value head's hidden layer (256).
      bn_momentum: decay of the running statistics (0.9).
      bn_epsilon: batch norm epsilon (1e-5).
      dtype: computation dtype (float32 or bfloat16); parameters, statistics and outputs are float32.
      ownership: KataGo's ownership head (see ``DualOutput``).
      score: KataGo's score-margin head (see ``DualOutput``).
      global_pool: KataGo's global pooling bias in every third block counting back from the last;
        needs ``filters >= 2``.
      size_agnostic: KataGo's fully convolutional heads, whose shapes do not depend on the board;
        implies ``global_pool``.

    Call: ``x`` ``[B, S, S, in_planes]``, ``train`` (batch statistics, with
    ``mutable=["batch_stats"]``) -> ``(logits float32[B, S*S + 1], value float32[B])``, logits
    indexed ``row * S + col`` with pass last and the value in ``[-1, 1]`` for the player to move;
    a ``DualOutput`` with ``ownership`` or ``score`` on.
    """

    in_planes: int = 17
    blocks: int = 19
    filters: int = 256
    value_hidden: int = 256
    bn_momentum: float = 0.9
    bn_epsilon: float = 1e-5
    dtype: Dtype = jnp.float32
    ownership: bool = False
    score: bool = False
    global_pool: bool = False
    size_agnostic: bool = False

    @property
    def has_aux(self) -> bool:
        """Whether an auxiliary head is on (the call then returns a ``DualOutput``)."""
        return self.ownership or self.score

    def pools(self, block: int) -> bool:
        """Whether residual block ``block`` (0-based) has the global pooling bias."""
        return (self.global_pool or self.size_agnostic) and (self.blocks - 1 - block) % 3 == 0

    @nn.compact
    def __call__(self, x: jnp.ndarray, train: bool = False):
        size = check_planes(x, self.in_planes, type(self).__name__)
        norm = _batch_norm(self, train)
        x = jnp.asarray(x, self.dtype)
        h = nn.Conv(self.filters, (3, 3), padding="SAME", use_bias=False, dtype=self.dtype, name="stem_conv")(x)
        h = nn.relu(norm(name="stem_bn")(h))
        for i in range(self.blocks):
            if self.pools(i):
                h = GlobalPoolBlock(self.filters, max(1, self.filters // 4), self.bn_momentum, self.bn_epsilon,
                                    dtype=self.dtype, width_scaled=self.size_agnostic, name=f"block{i}")(h, train)
            else:
                h = ResidualBlock(
                    self.filters, self.bn_momentum, self.bn_epsilon, dtype=self.dtype, name=f"block{i}"
                )(h, train)

        heads = self._pooled_heads if self.size_agnostic else self._sized_heads
        logits, v, hidden = heads(h, size, norm)
        logits, value = logits.astype(jnp.float32), jnp.tanh(v.astype(jnp.float32))
        if not self.has_aux:
            return logits, value

        ownership = score = None
        if self.ownership:
            o = nn.Conv(1, (1, 1), dtype=self.dtype, name="ownership_conv")(h)
            ownership = jnp.tanh(o.reshape(o.shape[:-3] + (size * size,)).astype(jnp.float32))
        if self.score:
            # From the value head's hidden layer, as in KataGo; times S so the layer's output stays
            # near +-1 while margins reach +-S*S.
            sc = nn.Dense(1, dtype=self.dtype, name="score_out")(hidden)[..., 0]
            score = sc.astype(jnp.float32) * size
        return DualOutput(logits, value, ownership, score)

    def _sized_heads(self, h, size: int, norm):
        """AlphaGo Zero's heads: fully connected layers over the S*S points."""
        p = nn.Conv(2, (1, 1), use_bias=False, dtype=self.dtype, name="policy_conv")(h)
        p = nn.relu(norm(name="policy_bn")(p))
        p = p.reshape(p.shape[:-3] + (size * size * 2,))
        logits = nn.Dense(size * size + 1, dtype=self.dtype, name="policy_fc")(p)
        v = nn.Conv(1, (1, 1), use_bias=False, dtype=self.dtype, name="value_conv")(h)
        v = nn.relu(norm(name="value_bn")(v))
        v = v.reshape(v.shape[:-3] + (size * size,))
        hidden = nn.relu(nn.Dense(self.value_hidden, dtype=self.dtype, name="value_fc")(v))
        return logits, nn.Dense(1, dtype=self.dtype, name="value_out")(hidden)[..., 0], hidden

    def _pooled_heads(self, h, size: int, norm):
        """KataGo's heads: per point, conv 1x1 P and conv 1x1 G, the G channels pooled (mean, mean
        * (S - 14) / 10, max) into a bias on P, then BN, ReLU, conv 1x1 -> one logit; the pooled G
        -> FC 1 -> the pass logit; value: conv 1x1 V, BN, ReLU, pooled, FC, ReLU, FC 1."""
        c = max(2, self.filters // 8)
        p = nn.Conv(c, (1, 1), use_bias=False, dtype=self.dtype, name="policy_conv")(h)
        g = nn.Conv(c, (1, 1), use_bias=False, dtype=self.dtype, name="policy_pool_conv")(h)
        g = _pool(nn.relu(norm(name="policy_pool_bn")(g)), True)
        p = p + nn.Dense(c, use_bias=False, dtype=self.dtype, name="policy_pool_fc")(g)[..., None, None, :]
        p = nn.relu(norm(name="policy_bn")(p))
        points = nn.Conv(1, (1, 1), dtype=self.dtype, name="policy_out")(p).reshape(p.shape[:-3] + (size * size,))
        passing = nn.Dense(1, dtype=self.dtype, name="pass_out")(g)
        logits = jnp.concatenate([points, passing], axis=-1)
        v = nn.Conv(c, (1, 1), use_bias=False, dtype=self.dtype, name="value_conv")(h)
        v = _pool(nn.relu(norm(name="value_bn")(v)), True)
        hidden = nn.relu(nn.Dense(self.value_hidden, dtype=self.dtype, name="value_fc")(v))
        return logits, nn.Dense(1, dtype=self.dtype, name="value_out")(hidden)[..., 0], hidden


__all__ = ["DualOutput", "DualResNet", "GlobalPoolBlock", "ResidualBlock", "policy_value", "policy_value_apply"]
