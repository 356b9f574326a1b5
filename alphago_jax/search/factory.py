"""``make_search``: the searched move of a search configuration."""

from __future__ import annotations

from typing import TYPE_CHECKING

from alphago_jax.search.config import SearchConfig
from alphago_jax.search.evaluators import Evaluator
from alphago_jax.search.grave import GraveConfig, make_grave_search
from alphago_jax.search.puct import make_mctx_search
from alphago_jax.search.tree import TreeSearch

if TYPE_CHECKING:
    from alphago_jax.games.base import Game


def make_search(game: Game, evaluator: Evaluator | None, config: SearchConfig | GraveConfig = SearchConfig(),
                evaluator_key: str | None = None):
    """The searched move ``(params, states, key) -> SearchOutput`` of ``config``: a ``TreeSearch``
    for ``"puct"`` (its compiled programs kept between processes when ``evaluator_key`` names the
    evaluator), a ``GraveSearch`` for a ``GraveConfig`` (``evaluator`` ignored)."""
    if isinstance(config, GraveConfig):
        return make_grave_search(game, config)
    if config.algorithm == "puct":
        return TreeSearch(game, evaluator, config, evaluator_key)
    return make_mctx_search(game, evaluator, config)


__all__ = ["make_search"]
