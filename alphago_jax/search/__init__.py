"""Tree search over batches of games: PUCT and Gumbel search on mctx.

Layer: depends on ``games`` (and, through evaluators passed in, on ``features`` and ``nets``).
"""

from alphago_jax.search.puct import (
    Evaluator,
    SearchConfig,
    SearchOutput,
    make_search,
    mixed_evaluator,
    network_evaluator,
    rollout_evaluator,
)

__all__ = ["Evaluator", "SearchConfig", "SearchOutput", "make_search", "mixed_evaluator", "network_evaluator", "rollout_evaluator"]
