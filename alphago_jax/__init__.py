"""alphago_jax: AlphaGo, AlphaGo Zero, GRAVE and MCPS as pure, batched JAX functions.

Data flows one way, and nothing lower imports anything higher:
``games`` (rules) -> ``features`` (network inputs) -> ``nets`` (Flax networks) -> ``search``
(mctx PUCT / Gumbel) -> training and play. ``sgf`` reads and writes game records.
"""

from alphago_jax import features, games, nets, search, sgf

__version__ = "0.1.0"
__all__ = ["features", "games", "nets", "search", "sgf", "__version__"]
