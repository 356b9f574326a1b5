"""GRAVE-family searches as Go players: UCT, RAVE, GRAVE and MCPS (``search.grave``).

``AmafSearchPlayer`` runs one ``search.GraveSearch`` per move on a batch of one game: a fresh
tree from the current position (these searches keep no tree between moves), ``playouts``
random playouts, the most visited move. With a time budget it adds chunks of at most 16
playouts (``search.time_control.TIME_CHUNK``) until the budget is spent or the tree (``nodes``)
is full, through ``search.search_for`` as the PUCT players do. ``analyze`` (GTP ``lz-analyze``
and ``kata-analyze``) searches in chunks and reports the root's moves: visits, the mover's win
rate, the visit share as prior, the most visited line.

A move of fixed effort searches a tree of ``playouts + 1`` nodes; the larger tree of ``nodes``
is compiled the first time a time budget or an analysis needs it (a playout's cost grows with
the tree's capacity: XLA copies the per-node states on every playout).

    player = grave_player(playouts=300)               # Cazenave's GRAVE: ref 50, bias 1e-5
    player = mcps_player(playouts=300, window=10_000, rho=30)
    registry.make_player("mcps:playouts=300,rho=30")  # the same, by name

Moves are actions, as for every ``players.Player``: ``row * size + col``, ``size * size`` for
pass. The rules searched are ``position.play_game``'s (Go, positional superko); the playouts
and the tree never fill the mover's own one-point eyes (``GraveConfig.protect_eyes``), so a
search passes only when nothing else is left.

Layer: ``play``; composes ``search.grave`` and the ``players`` protocol.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import jax
import numpy as np

from alphago_jax.games.base import Game
from alphago_jax.play.analysis import AnalysisOptions, MoveInfo
from alphago_jax.play.players import Decision, LocalPlayer, batch1
from alphago_jax.play.search_player import search_decision
from alphago_jax.play.position import prepared
from alphago_jax.search import search_for
from alphago_jax.search.amaf import ROOT, AmafTree
from alphago_jax.search.grave import GraveConfig, GraveSearch


@functools.lru_cache(maxsize=32)
def _grave_search(game: Game, config: GraveConfig) -> GraveSearch:
    """One ``GraveSearch`` (and its compiled functions) per rules and settings."""
    return GraveSearch(game, config)


def root_analysis(tree: AmafTree, max_moves: int = 10, pv_length: int = 12) -> list[MoveInfo]:
    """The most visited moves at the root of game 0 of ``tree``, most visited first.

    Args:
      tree: an ``AmafTree`` (batch axis first; game 0 is read).

    Returns:
      ``MoveInfo`` rows: visits ``edge_n``, the root player's win rate (wins 1, draws 1/2)
      over them, the visit share as prior, and the most visited line from the move on.
    """
    edge_n = np.asarray(tree.edge_n[0])  # [C, A]
    edge_w = np.asarray(tree.edge_w[0])  # [C, A], black's score
    children = np.asarray(tree.children[0])  # [C, A]
    n, black = edge_n[ROOT], int(tree.to_play[0, ROOT]) > 0
    total = max(int(n.sum()), 1)
    rows = []
    for action in np.flatnonzero(n > 0):
        wins = edge_w[ROOT, action] if black else n[action] - edge_w[ROOT, action]
        pv, pv_visits, node = [int(action)], [int(n[action])], int(children[ROOT, action])
        while node >= 0 and len(pv) < pv_length and edge_n[node].max() > 0:
            best = int(np.argmax(edge_n[node]))
            pv.append(best)
            pv_visits.append(int(edge_n[node, best]))
            node = int(children[node, best])
        rows.append(MoveInfo(int(action), int(n[action]), float(wins / n[action]), float(n[action] / total),
                             tuple(pv), pv_visits=tuple(pv_visits)))
    rows.sort(key=lambda m: (-m.visits, -m.winrate, m.action))
    return rows[:max_moves]


class AmafSearchPlayer(LocalPlayer):
    """A Go player searching each move afresh with ``search.GraveSearch``.

    Args:
      config: the search (``algorithm`` one of ``"uct"``, ``"rave"``, ``"grave"``, ``"mcps"``);
        ``config.playouts`` per move without a time budget (with one, chunks of at most 16);
        ``config.capacity`` nodes bound a move searched for a time (and ``analyze``).
      seed: the random seed of the playouts.
      name: a short name (default the algorithm and its playouts, e.g. ``grave300``).

    Attributes:
      search: the ``GraveSearch`` of a fixed-effort move (``playouts + 1`` nodes), once a
        game is started; ``long_search()`` the one of ``config.capacity`` nodes.
    """

    can_analyze = True

    def __init__(self, config: GraveConfig, *, seed: int = 0, name: str | None = None):
        super().__init__(name or f"{config.algorithm}{config.playouts}")
        self.config = config
        self._seed = seed
        self._key = jax.random.PRNGKey(seed)
        self._timed_ready: set[GraveSearch] = set()  # searches whose timed move is compiled

    def reseed(self, seed: int) -> None:
        self._key = jax.random.fold_in(jax.random.PRNGKey(self._seed), seed)

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
        super()._new_game(size, komi, setup, first_player, handicap)
        lean = dataclasses.replace(self.config, tree_capacity=self.config.playouts + 1)
        self.search = _grave_search(self.pos.game, lean)

    def long_search(self) -> GraveSearch:
        """The search of ``config.capacity`` nodes (time budgets, analysis), compiled on first use."""
        self._require_game()
        return _grave_search(self.pos.game, self.config)

    def _next_key(self):
        self._key, k = jax.random.split(self._key)
        return k

    def _root(self, search: GraveSearch, colour) -> AmafTree:
        return search.init(batch1(prepared(self.pos.game, self.pos.state, colour)))

    def prepare_timed(self) -> None:
        """Compile ``long_search()`` (a timed move's search) now (``Player.prepare_timed``)."""
        super().prepare_timed()
        search = self.long_search()
        if search not in self._timed_ready:
            root = self._root(search, self.pos.to_play)
            jax.block_until_ready(search_for(search, None, root, jax.random.PRNGKey(0), 0.0)[0].actions)
            self._timed_ready.add(search)

    def _decide(self, colour, seconds) -> Decision:
        if seconds is None:
            search = self.search
            tree = search.simulate(None, self._root(search, colour), self._next_key(), self.config.playouts)
            out = search.result(tree, self._next_key())
        else:
            search = self.long_search()
            out, tree, _ = search_for(search, None, self._root(search, colour), self._next_key(), seconds)
        return search_decision(out, int(np.asarray(tree.playouts)[0]))

    def analyze(self, colour, report, stop, interval=1.0, options=None) -> None:
        """Search in chunks of ``config.playouts``, reporting the root's moves (``root_analysis``,
        at most ``options.max_moves``) after the first chunk and then every ``interval`` seconds,
        until ``stop()``."""
        options = options or AnalysisOptions()
        search = self.long_search()
        chunk = self.config.playouts
        tree = jax.block_until_ready(search.simulate(None, self._root(search, colour), self._next_key(), chunk))
        report(root_analysis(tree, options.max_moves))
        last = time.perf_counter()
        while not stop():
            if int(tree.num_nodes[0]) + chunk <= search.capacity:
                tree = jax.block_until_ready(search.simulate(None, tree, self._next_key(), chunk))
            else:
                time.sleep(min(interval, 0.02))  # the tree is full: keep answering, stop searching
            if time.perf_counter() - last >= interval:
                report(root_analysis(tree, options.max_moves))
                last = time.perf_counter()


def amaf_player(algorithm: str, playouts: int = 300, *, nodes: int | None = None, seed: int = 0,
                name: str | None = None, **options) -> AmafSearchPlayer:
    """A player of ``algorithm`` with ``playouts`` per move and ``GraveConfig`` ``options``
    (``ref``, ``bias``, ``c``, ``window``, ``rho``).

    Args:
      nodes: the tree's capacity when searching for a time or analysing (default
        ``8 * playouts + 1``: room for 8 chunks); a fixed-effort move uses ``playouts + 1``.

    Raises:
      ValueError: naming the bad setting.
    """
    if not isinstance(playouts, int) or playouts < 1:
        raise ValueError(f"playouts must be an integer >= 1, got {playouts!r}")
    config = GraveConfig(algorithm=algorithm, playouts=playouts, tree_capacity=nodes or 8 * playouts + 1,
                         **options)
    return AmafSearchPlayer(config, seed=seed, name=name)


def grave_player(playouts: int = 300, *, ref: int = 50, bias: float = 1e-5, nodes: int | None = None,
                 seed: int = 0, name: str | None = None) -> AmafSearchPlayer:
    """GRAVE (Cazenave 2015): AMAF statistics from the deepest node with more than ``ref``
    playouts, ``beta = n~ / (n~ + n + bias n~ n)``, no exploration term."""
    return amaf_player("grave", playouts, nodes=nodes, seed=seed, name=name, ref=ref, bias=bias)


def mcps_player(playouts: int = 300, *, ref: int = 50, window: int = 10_000, rho: int = 30,
                nodes: int | None = None, seed: int = 0, name: str | None = None) -> AmafSearchPlayer:
    """Monte Carlo Permutation Search (Cazenave 2025): GRAVE's statistics plus permutation statistics
    over a window of ``window`` playouts, frozen at ``rho`` playouts through a node."""
    return amaf_player("mcps", playouts, nodes=nodes, seed=seed, name=name, ref=ref, window=window, rho=rho)


__all__ = ["AmafSearchPlayer", "amaf_player", "grave_player", "mcps_player", "root_analysis"]
