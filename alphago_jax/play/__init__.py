"""Playing Go: players, a GTP engine, matches, a human against a player.

- ``players`` (the ``Player`` protocol; random and raw-policy players), ``search_player`` (PUCT
  search with tree reuse), ``amaf_players`` (GRAVE, MCPS), ``alphago_player``, ``gtp_player``
  (an external GTP engine); ``registry`` makes players from specs such as ``mcts:sims=200``;
- ``position``: a game in progress; ``analysis``: search statistics in the GTP analysis forms;
- ``gtp`` (the protocol, the serve loop) and ``gtp_commands`` (``GTPEngine``): ``alphago-jax gtp``;
- ``arena``: matches (``alphago-jax arena``); ``terminal`` (``alphago-jax play``) and ``notebook``;
- ``tactics``: a 9x9 tactical suite and a player's score on it (``alphago-jax tactics``);
- ``commands``: those subcommands for ``alphago_jax.cli``.

Layer: above ``train`` and both training pipelines, below ``cli``. The names of ``__all__`` are
imported from their modules on first use, so that ``import alphago_jax.play`` stays cheap.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "players": ("RESIGN", "Decision", "Network", "Player", "PolicyPlayer", "RandomPlayer"),
    "search_player": ("mcts_player", "network_player"),
    "amaf_players": ("grave_player", "mcps_player"),
    "gtp_player": ("GTPPlayer",),
    "registry": ("known_players", "load_network", "make_player", "player_help", "shipped_network_path",
                 "untrained_network"),
    "arena": ("GameResult", "Match", "play_one_game", "run_match", "run_match_parallel"),
    "gtp": ("serve",),
    "gtp_commands": ("GTPEngine",),
    "terminal": ("play_terminal",),
    "notebook": ("NotebookGame",),
    "tactics": ("Problem", "load_suite", "solve", "report"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_MODULE_OF[name]}"), name)
