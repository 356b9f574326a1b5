"""Tree search over batches of games: PUCT with tree reuse and leaf batching, mctx's searches, and
the playout searches UCT, RAVE, GRAVE and MCPS.

``make_search(game, evaluator, config)`` gives one jit-compiled searched move for a batch of
games, ``(params, states, key) -> SearchOutput``:

- ``algorithm="puct"`` (default): ``tree.TreeSearch``, AlphaGo's PUCT on a tree kept between
  moves (``run`` / ``step`` / ``advance`` for tree reuse, ``leaf_batch`` leaves per evaluator
  call with virtual loss, ``time_control.search_for`` for a time budget);
- ``algorithm="muzero"`` / ``"gumbel"``: mctx's ``muzero_policy`` / ``gumbel_muzero_policy``;
- a ``GraveConfig`` instead of a ``SearchConfig``: ``grave.GraveSearch``, the playout searches
  of general game playing, UCT, RAVE, GRAVE and MCPS (Monte Carlo Permutation Search), with
  AMAF statistics keyed by ``game.move_code`` and MCPS's permutation statistics over bitsets
  (``mcps``); they need no evaluator (``make_grave_search(game, config)``).

Evaluators (``evaluators``) say what a leaf is worth: random or rollout-policy playouts, a
network (with symmetry averaging), or AlphaGo's mixture of both.

Layer: depends on ``games`` and ``features`` (and, through evaluators passed in, on ``nets``).
"""

from alphago_jax.games.base import Game
from alphago_jax.search.config import SearchConfig, SearchOutput, choose_moves
from alphago_jax.search.evaluators import (
    Evaluator,
    mixed_evaluator,
    network_evaluator,
    policy_rollout_evaluator,
    rollout_evaluator,
)
from alphago_jax.search.grave import GraveConfig, GraveSearch, make_grave_search
from alphago_jax.search.puct import make_mctx_search
from alphago_jax.search.time_control import move_budget, search_for
from alphago_jax.search.tree import SearchTree, TreeSearch


def make_search(game: Game, evaluator: Evaluator | None, config: SearchConfig | GraveConfig = SearchConfig(),
                evaluator_key: str | None = None):
    """The searched move ``(params, states, key) -> SearchOutput`` for ``config.algorithm``.

    For ``"puct"`` the result is a ``TreeSearch``, whose other members search from a kept tree
    (and keep their compiled programs between processes when ``evaluator_key`` names the
    evaluator); for a ``GraveConfig`` a ``GraveSearch`` (``evaluator`` is ignored: its playouts
    are its own).
    """
    if isinstance(config, GraveConfig):
        return make_grave_search(game, config)
    if config.algorithm == "puct":
        return TreeSearch(game, evaluator, config, evaluator_key)
    return make_mctx_search(game, evaluator, config)


__all__ = [
    "Evaluator",
    "GraveConfig",
    "GraveSearch",
    "SearchConfig",
    "SearchOutput",
    "SearchTree",
    "TreeSearch",
    "choose_moves",
    "make_grave_search",
    "make_mctx_search",
    "make_search",
    "mixed_evaluator",
    "move_budget",
    "network_evaluator",
    "policy_rollout_evaluator",
    "rollout_evaluator",
    "search_for",
]
