"""Network inputs computed from game states, and the board's symmetries.

``alphago_planes`` (``alphago``) gives AlphaGo's 48 input planes (49 for the value network),
``zero_planes`` (``zero``) AlphaGo Zero's 17 (``zero.liberty_planes``: 23, with liberties),
each float32 ``[size, size, planes]`` of one unbatched ``games.history.WithHistory`` state
(``jax.vmap`` them for a batch); ``symmetry`` maps planes, boards, policies and actions
through the 8 symmetries of the square board.
"""

from alphago_jax.features import alphago, symmetry, zero
from alphago_jax.features.alphago import alphago_planes
from alphago_jax.features.zero import zero_planes

__all__ = ["alphago", "alphago_planes", "symmetry", "zero", "zero_planes"]
