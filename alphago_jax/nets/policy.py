"""AlphaGo's policy network (the SL and RL policies of Silver et al. 2016, "Mastering the game of
Go with deep neural networks and tree search") and its convolutional trunk.

At the defaults (19x19, 48 input planes)::

    x: [B, 19, 19, 48]
    conv 5x5, 192 filters, ReLU                         1 layer    5*5*48*192 + 192   =   230,592
    conv 3x3, 192 filters, ReLU                        11 layers  (3*3*192*192 + 192) * 11 = 3,651,648
    conv 1x1, 1 filter (no bias)                                   1*1*192*1          =       192
    position-dependent bias, one per point                         19*19              =       361
    pass logit (one learned scalar)                                                   =         1
    -> logits [B, 19*19 + 1]                                                    total   3,882,794

The output layer is the paper's "1 filter of kernel size 1x1 with a different bias for each
position" (``position_bias=False``: one shared bias instead, 360 parameters fewer). The paper's
network has no pass output; here a learned pass logit (initialised to 0) follows the 361 point
logits, so that the policy covers every Go action (pass last).
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax.numpy as jnp

Dtype = Any


def check_planes(x: jnp.ndarray, in_planes: int, who: str) -> int:
    """Validate ``[..., S, S, in_planes]`` input (at trace time); return the board side ``S``."""
    if x.ndim < 4 or x.shape[-3] != x.shape[-2]:
        raise ValueError(f"{who}: expected input [batch, size, size, planes], got shape {x.shape}")
    if x.shape[-1] != in_planes:
        raise ValueError(f"{who}: expected {in_planes} input planes, got {x.shape[-1]} (shape {x.shape})")
    return x.shape[-2]


def trunk_of(net) -> "ConvTrunk":
    """The ``ConvTrunk`` (named ``trunk``) of a network's own attributes, for its compact ``__call__``."""
    return ConvTrunk(
        in_planes=net.in_planes,
        filters=net.filters,
        layers=net.trunk_layers,
        first_kernel=net.first_kernel,
        kernel=net.kernel,
        dtype=net.dtype,
        name="trunk",
    )


class ConvTrunk(nn.Module):
    """AlphaGo's trunk: ``layers`` same-padded convolutions with bias, each followed by ReLU.

    Attributes:
      in_planes: input planes (48 for the policy network, 49 for the value network).
      filters: channels of every layer (192 in the paper's match version).
      layers: number of convolutions (12: hidden layers 1 to 12 of the paper).
      first_kernel: kernel side of the first layer (5).
      kernel: kernel side of the other layers (3).
      dtype: computation dtype (float32, or bfloat16 for speed); parameters stay float32.

    Call: ``[B, S, S, in_planes]`` (any float dtype) -> ``[B, S, S, filters]`` in ``dtype``.
    """

    in_planes: int = 48
    filters: int = 192
    layers: int = 12
    first_kernel: int = 5
    kernel: int = 3
    dtype: Dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        check_planes(x, self.in_planes, type(self).__name__)
        x = jnp.asarray(x, self.dtype)
        for i in range(self.layers):
            k = self.first_kernel if i == 0 else self.kernel
            x = nn.Conv(self.filters, (k, k), padding="SAME", dtype=self.dtype, name=f"conv{i}")(x)
            x = nn.relu(x)
        return x


class PolicyNet(nn.Module):
    """AlphaGo's SL/RL policy network: convolutional trunk, 1x1 output conv, pass logit.

    Attributes:
      in_planes: input planes (48: AlphaGo's feature planes).
      filters: trunk channels (192).
      trunk_layers: trunk convolutions (12); with the 1x1 output conv, the paper's 13 layers.
      first_kernel: first layer's kernel side (5).
      kernel: other trunk layers' kernel side (3).
      position_bias: one output bias per point (the paper; default) rather than one shared bias.
      dtype: computation dtype (float32 or bfloat16); parameters and logits are float32.

    Call: ``x`` ``[B, S, S, in_planes]`` -> logits ``float32[B, S*S + 1]`` (index
    ``row * S + col``, pass last). Softmax outside, e.g. ``masked_softmax(logits, legal)``.
    """

    in_planes: int = 48
    filters: int = 192
    trunk_layers: int = 12
    first_kernel: int = 5
    kernel: int = 3
    position_bias: bool = True
    dtype: Dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        size = check_planes(x, self.in_planes, type(self).__name__)
        h = trunk_of(self)(x)
        h = nn.Conv(1, (1, 1), use_bias=not self.position_bias, dtype=self.dtype, name="head")(h)
        logits = h.reshape(h.shape[:-3] + (size * size,)).astype(jnp.float32)
        if self.position_bias:
            logits = logits + self.param("position_bias", nn.initializers.zeros_init(), (size * size,), jnp.float32)
        pass_logit = self.param("pass_logit", nn.initializers.zeros_init(), (), jnp.float32)
        pass_col = jnp.broadcast_to(pass_logit, logits.shape[:-1] + (1,))
        return jnp.concatenate([logits, pass_col], axis=-1)


def masked_softmax(logits: jnp.ndarray, mask: jnp.ndarray | None = None, temperature: float = 1.0) -> jnp.ndarray:
    """float32 ``[..., A]``: softmax of ``logits / temperature`` over the actions of the optional
    bool ``mask`` ``[..., A]`` (exactly 0 elsewhere; all zeros, never NaN, where none is True)."""
    z = jnp.asarray(logits, jnp.float32) / temperature
    if mask is None:
        return nn.softmax(z, axis=-1)
    z = jnp.where(mask, z, jnp.finfo(jnp.float32).min)
    return jnp.where(mask, nn.softmax(z, axis=-1), 0.0)


__all__ = ["ConvTrunk", "PolicyNet", "check_planes", "masked_softmax"]
