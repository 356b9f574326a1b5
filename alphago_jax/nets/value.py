"""AlphaGo's value network (Silver et al. 2016, "Mastering the game of Go with deep neural
networks and tree search").

At the defaults (19x19, 49 input planes: AlphaGo's 48 plus the player colour)::

    x: [B, 19, 19, 49]
    conv 5x5, 192 filters, ReLU                         1 layer    5*5*49*192 + 192   =   235,392
    conv 3x3, 192 filters, ReLU                        11 layers  (3*3*192*192 + 192) * 11 = 3,651,648
    conv 1x1, 1 filter (one shared bias)                           1*1*192*1 + 1      =       193
    flatten 361 -> fully connected 256, ReLU                       361*256 + 256      =    92,672
    fully connected 1, tanh                                        256*1 + 1          =       257
    -> value [B] in [-1, 1]                                                      total   3,980,162

The 1x1 conv feeds the fully connected layer without a ReLU; there is no position-dependent
bias and no pass output. The value is for the player to move (whose colour is the 49th plane):
+1 means that player wins.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from alphago_jax.nets.policy import Dtype, check_planes, trunk_of


class ValueNet(nn.Module):
    """AlphaGo's value network: the policy network's trunk, 1x1 conv, FC 256, ReLU, FC 1, tanh.

    Attributes:
      in_planes: input planes (49: AlphaGo's 48 plus the player-colour plane).
      filters: trunk channels (192).
      trunk_layers: trunk convolutions (12: the paper's hidden layers 1 to 12).
      first_kernel: first layer's kernel side (5).
      kernel: other trunk layers' kernel side (3).
      hidden: width of the fully connected hidden layer (256).
      dtype: computation dtype (float32 or bfloat16); parameters and value are float32.

    Call: ``x`` ``[B, S, S, in_planes]`` -> ``float32[B]`` in ``[-1, 1]``, the outcome expected
    for the player to move.
    """

    in_planes: int = 49
    filters: int = 192
    trunk_layers: int = 12
    first_kernel: int = 5
    kernel: int = 3
    hidden: int = 256
    dtype: Dtype = jnp.float32

    @nn.compact
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        size = check_planes(x, self.in_planes, type(self).__name__)
        h = trunk_of(self)(x)
        h = nn.Conv(1, (1, 1), dtype=self.dtype, name="head")(h)
        h = h.reshape(h.shape[:-3] + (size * size,))
        h = nn.relu(nn.Dense(self.hidden, dtype=self.dtype, name="fc")(h))
        v = nn.Dense(1, dtype=self.dtype, name="out")(h)
        return jnp.tanh(v[..., 0].astype(jnp.float32))


__all__ = ["ValueNet"]
