"""Network inputs computed from game states, and the board's symmetries.

- ``symmetry``: the 8 dihedral maps of the square board for planes, flat boards, policy vectors
  and actions, their inverses and composition, and batched random symmetries.
"""

from alphago_jax.features import symmetry

__all__ = ["symmetry"]
