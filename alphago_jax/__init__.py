"""alphago_jax: AlphaGo, AlphaGo Zero, GRAVE and MCPS as pure, batched JAX functions.

Data flows one way, and nothing lower imports anything higher:
``games`` (rules) -> ``features`` (network inputs) -> ``nets`` (Flax networks) -> ``search``
(PUCT, mctx, GRAVE and MCPS) -> ``train`` (the shared training machinery) -> the training
pipelines, ``alphago`` (AlphaGo 2016) beside AlphaGo Zero (``zero``) -> ``play``
(players, GTP, arena) -> ``cli``. ``sgf`` reads and writes game records.
``tests/test_imports.py`` holds the order.
"""

from alphago_jax import features, games, nets, search, sgf

__version__ = "0.1.0"
__all__ = ["features", "games", "nets", "search", "sgf", "__version__"]
