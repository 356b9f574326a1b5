"""alphago_jax: AlphaGo, AlphaGo Zero, GRAVE and MCPS as pure JAX functions.

Data flows one way: ``games`` -> ``features`` -> ``nets`` -> ``search`` -> ``train`` / ``play``.
"""

from alphago_jax import games

__version__ = "0.1.0"
__all__ = ["games", "__version__"]
