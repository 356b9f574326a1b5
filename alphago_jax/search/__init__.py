"""Tree search over batches of games: PUCT with tree reuse and leaf batching, mctx's searches, and
the playout searches UCT, RAVE, GRAVE and MCPS.

``make_search(game, evaluator, config)`` gives one jit-compiled searched move for a batch of
games, ``(params, states, key) -> SearchOutput``: AlphaGo's PUCT on a tree kept between moves
(``TreeSearch``, the default ``algorithm="puct"``), mctx's ``"muzero"`` or ``"gumbel"``
(``make_mctx_search``), or, given a ``GraveConfig``, the playout searches of general game playing
(``GraveSearch``; no evaluator). Evaluators say what a leaf is worth: random or rollout-policy
playouts, a network, or AlphaGo's mixture of both; ``tactical_evaluator`` adds a capture
reader's moves to a prior. ``search_for`` runs a search for a time budget.

Layer: depends on ``games`` and ``features`` (and, through evaluators passed in, on ``nets``).
"""

from alphago_jax.search import amaf, mcps
from alphago_jax.search.config import SearchConfig, SearchOutput, choose_moves
from alphago_jax.search.evaluators import (
    SYMMETRIES,
    Evaluator,
    RootedEvaluator,
    mixed_evaluator,
    network_evaluator,
    policy_rollout_evaluator,
    rollout_evaluator,
    score_utility_apply,
    tactical_evaluator,
    tactical_moves,
)
from alphago_jax.search.factory import make_search
from alphago_jax.search.grave import GraveConfig, GraveSearch, make_grave_search
from alphago_jax.search.puct import make_mctx_search
from alphago_jax.search.time_control import move_budget, search_for
from alphago_jax.search.tree import SearchTree, TreeSearch

__all__ = [
    "SYMMETRIES",
    "Evaluator",
    "GraveConfig",
    "GraveSearch",
    "RootedEvaluator",
    "SearchConfig",
    "SearchOutput",
    "SearchTree",
    "TreeSearch",
    "amaf",
    "choose_moves",
    "make_grave_search",
    "make_mctx_search",
    "make_search",
    "mcps",
    "mixed_evaluator",
    "move_budget",
    "network_evaluator",
    "policy_rollout_evaluator",
    "rollout_evaluator",
    "score_utility_apply",
    "search_for",
    "tactical_evaluator",
    "tactical_moves",
]
