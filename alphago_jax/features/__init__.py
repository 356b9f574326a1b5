"""Network inputs computed from game states, and the board's symmetries.

- ``alphago``: AlphaGo's 48 input planes (49 for the value network), ``alphago_planes(state)``.
- ``zero``: AlphaGo Zero's 17 input planes, ``zero_planes(state)``.
- ``symmetry``: the 8 dihedral maps of the square board for planes, flat boards, policy vectors
  and actions, their inverses and composition, and batched random symmetries.

The plane functions take one unbatched ``games.history.WithHistory`` state (``jax.vmap`` them
for a batch) and return float32 ``[size, size, planes]``.
"""

from alphago_jax.features import alphago, symmetry, zero
from alphago_jax.features.alphago import alphago_planes
from alphago_jax.features.zero import zero_planes

__all__ = ["alphago", "alphago_planes", "symmetry", "zero", "zero_planes"]
