"""AlphaGo's policy network (SL and RL policy; Silver et al. 2016, seed 001) and its trunk.

Architecture at the defaults (19x19, 48 input planes)::

    x: [B, 19, 19, 48]
    conv 5x5, 192 filters, ReLU                         1 layer    5*5*48*192 + 192   =   230,592
    conv 3x3, 192 filters, ReLU                        11 layers  (3*3*192*192 + 192) * 11 = 3,651,648
    conv 1x1, 1 filter (no bias)                                   1*1*192*1          =       192
    position-dependent bias, one per point                         19*19              =       361
    pass logit (one learned scalar)                                                   =         1
    -> logits [B, 19*19 + 1]                                                    total   3,882,794

The paper's output layer "convolves 1 filter of kernel size 1x1 with a different bias for each
position"; that is the default (``position_bias=True``). Against seed 001's table (first conv
230,592; middle convs; output conv 193 = 192 weights + one shared bias) the extra parameters are
exactly: 360 (361 per-point biases replace the one shared bias) + 1 (the pass logit) = 361.
With ``position_bias=False`` the 1x1 conv has one shared bias as in the seed's table, and the
only extra parameter is the pass logit.

Note: seed 001 prints the 11 middle layers as 3,633,792, but its own formula
``(3*3*192*192 + 192) * 11`` is 3,651,648 (3,633,792 is not a multiple of any 3x3 192->192
layer count); this module follows the formula.

The paper's network has no pass output; here the pass logit is one learned scalar (initialised
to 0) appended after the 361 point logits, so that the policy covers every Go action
(``game.num_actions = S*S + 1``, pass last).
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
    """The ``ConvTrunk`` submodule (named ``trunk``) configured by a network's own attributes
    (``in_planes``, ``filters``, ``trunk_layers``, ``first_kernel``, ``kernel``, ``dtype``).
    Call it inside the network's compact ``__call__``."""
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
    """The convolutional trunk of AlphaGo's policy and value networks.

    ``layers`` same-padded convolutions, each followed by ReLU: the first with a
    ``first_kernel`` square kernel, the others with ``kernel``; every one with ``filters``
    output channels and a bias.

    Attributes:
      in_planes: input planes (48 for the policy network, 49 for the value network).
      filters: channels of every layer (192 in the paper's match version).
      layers: number of convolutions (12: hidden layers 1 to 12 of the paper).
      first_kernel: kernel side of the first layer (5).
      kernel: kernel side of the other layers (3).
      dtype: computation dtype (float32, or bfloat16 for speed); parameters stay float32.

    Input ``[B, S, S, in_planes]`` (any float dtype); output ``[B, S, S, filters]`` in ``dtype``.
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
      dtype: computation dtype of the trunk and output conv (float32 or bfloat16); parameters
        are float32 and the returned logits are always float32.

    Parameters beyond seed 001's count (see the module docstring): ``pass_logit`` (1) and, with
    ``position_bias``, ``position_bias`` [S*S] in place of the output conv's single bias (+S*S-1).

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
    """Softmax over actions restricted to ``mask``.

    Args:
      logits: ``[..., A]`` float.
      mask: optional bool ``[..., A]``; masked-out actions get probability exactly 0.
      temperature: logits are divided by it before the softmax.

    Returns:
      float32 ``[..., A]`` probabilities summing to 1 where the mask has a True entry; all
      zeros where it has none (e.g. a finished game), never NaN.
    """
    z = jnp.asarray(logits, jnp.float32) / temperature
    if mask is None:
        return nn.softmax(z, axis=-1)
    z = jnp.where(mask, z, jnp.finfo(jnp.float32).min)
    return jnp.where(mask, nn.softmax(z, axis=-1), 0.0)


__all__ = ["ConvTrunk", "PolicyNet", "check_planes", "masked_softmax"]
