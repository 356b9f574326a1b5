"""Search players: PUCT search with tree reuse between moves, on a network or on rollouts.

``SearchPlayer`` keeps one search tree per game and reuses the subtree of each move played, by
either side; a move is a fixed number of simulations or a time budget, searched in chunks.
``mcts_player`` searches with random rollouts, ``network_player`` with a ``players.Network``
(priors and values from the network, ``NETWORK_LEAF_BATCH`` leaves per call). With ``threads``
a player searches that many trees of the position side by side, one thread each, and plays the
move of their summed root visits (root parallelisation). Search players analyse live (GTP
``lz-analyze``/``kata-analyze``): visits, win rates, principal variations, and the network's
ownership and score heads.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import functools
import math
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games.base import Game
from alphago_jax.play.analysis import AnalysisOptions, tree_analysis
from alphago_jax.play.dead_stones import cleanup_points, dead_stones
from alphago_jax.play.players import Decision, LocalPlayer, Network, batch1
from alphago_jax.play.position import prepared
from alphago_jax.search import (RootedEvaluator, SearchConfig, TreeSearch, make_search, mixed_evaluator,
                                network_evaluator, rollout_evaluator, score_utility_apply, search_for,
                                tactical_evaluator)
from alphago_jax.search.time_control import time_chunk
from alphago_jax.search.tree import ROOT


@functools.lru_cache(maxsize=32)
def _search(evaluator: Callable[[Game], Callable], game: Game, config: SearchConfig,
            evaluator_key: str | None = None) -> TreeSearch:
    """One ``TreeSearch`` (and its compiled functions) per evaluator, rules and settings."""
    return make_search(game, evaluator(game), config, evaluator_key)


def search_decision(out, simulations: int) -> Decision:
    """The ``Decision`` of a batch-of-one search output (read on the host: indexing the device
    arrays would compile small operations on a game's first move)."""
    action, value = np.asarray(out.actions)[0], np.asarray(out.root_value)[0]
    return Decision(int(action), float((value + 1) / 2), simulations)


# ------------------------------------------------------------------------------------ search

class SearchPlayer(LocalPlayer):
    """PUCT search (``search.TreeSearch``) with the tree kept between moves.

    Without a time budget a move runs ``config.num_simulations`` simulations on top of the
    reused subtree; with one it searches in chunks of ``chunk`` simulations (``search_for``: a
    chunk starts only while it is expected to end within the budget) until the budget is spent
    or the tree (``config.tree_capacity`` nodes) is full.

    With ``threads`` > 1 a move searches ``threads`` trees of the position at once, each in a
    thread of its own with its own random stream and as above, and plays the move of their
    summed root visits (``TreeSearch.merged_result``; Chaslot, Winands and van den Herik 2008,
    "Parallel Monte-Carlo Tree Search"). XLA runs a small network on one core of a CPU, and
    jitted calls from several threads run at once, so on a CPU of ``threads`` cores a timed move
    reads about ``threads`` times the simulations (docs/benchmarks.md; on 2 cores, 1.86 times,
    yet 22 of 40 games at 1 s a move against one tree: each of two trees reads only as deep as
    its share, docs/results.md, "Both cores for one game"). The trees differ only
    through the evaluator's randomness (playouts, random symmetries): a deterministic evaluator
    would grow the same tree ``threads`` times. Each tree is kept between moves; analysis
    (``analyze``) and the cleanup search use the first alone. ``Decision.simulations`` counts
    the simulations of all the trees.

    Args:
      evaluator: ``game -> search.Evaluator`` (e.g. ``search.rollout_evaluator``).
      params: the evaluator's parameters: ``size -> params`` (None for rollouts).
      config: the search settings (temperature 0 and no root noise for play).
      history: boards the states keep (network planes), 0 for plain Go.
      seed: the search's random seed.
      chunk: simulations per jitted call of a timed move, a multiple of ``leaf_batch`` and at
        most ``num_simulations`` (default ``search.time_control.time_chunk(config)``, 16).
        Longer chunks cost less per simulation (each call dispatches and copies the tree) but
        leave up to one chunk's time of the budget unused.
      heads: the network whose ``aux`` heads (ownership, score) ``analyze`` reads with
        ``AnalysisOptions(heads=True)``; its variables are ``params``. None: no heads.
      evaluator_key: what ``evaluator`` computes, the same in every process (``Network.key``):
        the search then keeps its compiled programs between runs. None: not kept.
      threads: trees searched side by side in a move (at least 1).
    """

    can_analyze = True
    can_restrict_analysis = True

    def __init__(self, evaluator: Callable[[Game], Callable], params: Callable[[int], Any] | None,
                 config: SearchConfig, *, name: str = "search", history: int = 0, seed: int = 0,
                 chunk: int | None = None, heads: Network | None = None, evaluator_key: str | None = None,
                 threads: int = 1):
        if config.algorithm != "puct":
            raise ValueError(f"a search player needs algorithm 'puct', got {config.algorithm!r}")
        chunk = chunk or time_chunk(config)
        if chunk % config.leaf_batch or chunk > config.num_simulations:
            raise ValueError(f"chunk must be a multiple of leaf_batch ({config.leaf_batch}) and at most "
                             f"num_simulations ({config.num_simulations}), got {chunk}")
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        super().__init__(name, history)
        self.config, self.chunk, self.threads = config, chunk, threads
        self._pool = concurrent.futures.ThreadPoolExecutor(threads, "search") if threads > 1 else None
        self._evaluator, self._params_for, self._evaluator_key = evaluator, params, evaluator_key
        self._seed = seed
        self._key = jax.random.PRNGKey(seed)
        self.trees: list | None = None  # one per thread
        self._tree_at = None  # (moves played, colour to move) of the trees' root
        self._ready: set[tuple[TreeSearch, bool]] = set()  # (search, timed) whose move is compiled
        if heads is not None and heads.aux is None:
            raise ValueError(f"network {heads.name!r} has no auxiliary heads (Network.aux) to analyse with")
        self._heads_network = heads
        self._heads_program = _heads_program(heads) if heads is not None else None
        self._head_kinds: tuple[bool, bool] | None = None

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
        self._params = self._params_for(size) if self._params_for is not None else None
        super()._new_game(size, komi, setup, first_player, handicap)
        self.search = _search(self._evaluator, self.pos.game, self.config, self._evaluator_key)
        self._head_kinds = None

    def _reset(self) -> None:
        self.trees, self._tree_at = None, None

    @property
    def tree(self):
        """The first kept tree (the one analysis searches), or None."""
        return None if self.trees is None else self.trees[0]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        super().close()

    def reseed(self, seed: int) -> None:
        self._key = jax.random.fold_in(jax.random.PRNGKey(self._seed), seed)

    def _next_key(self):
        self._key, k = jax.random.split(self._key)
        return k

    def _roots(self, colour) -> list:
        """The ``threads`` trees to search for ``colour``: the kept ones if their root is this position."""
        if self.trees is not None and self._tree_at == (len(self.pos.moves), colour):
            return self.trees
        return [self.search.init(batch1(prepared(self.pos.game, self.pos.state, colour)))] * self.threads

    def _keep(self, trees: list, colour) -> None:
        self.trees, self._tree_at = trees, (len(self.pos.moves), colour)

    def prepare_fixed(self) -> None:
        """Compile a move of ``config.num_simulations`` simulations (``start``, ``simulate``,
        ``result``), the tree's advance and the key splits, by searching the current position
        once on a throwaway tree (``Player.prepare_fixed``). Costs about one move's search."""
        super().prepare_fixed()
        self._warm_up(timed=False)

    def prepare_timed(self) -> None:
        """Compile a timed move's chunk, its result and the tree's advance, on a throwaway tree
        (``Player.prepare_timed``)."""
        super().prepare_timed()
        self._warm_up(timed=True)

    def _warm_up(self, timed: bool) -> None:
        """Run the search program a move runs (timed: one chunk of ``search_for``; else the
        fixed effort) on the current position, once per search and kind: the same jitted
        functions at the same shapes as ``genmove``'s, so that its first call finds them
        compiled (or read from the persistent compilation cache)."""
        if (self.search, timed) in self._ready:
            return
        key = jax.random.PRNGKey(0)  # not the player's stream: preparing changes no game
        tree = self.search.init(batch1(prepared(self.pos.game, self.pos.state, self.pos.to_play)))
        if timed:
            out, tree, _ = search_for(self.search, self._params, tree, key, 0.0, self.chunk)
        else:
            key, k = jax.random.split(key)  # what ``_next_key`` runs, eagerly
            tree = self.search.start(self._params, tree, k)
            tree = self.search.simulate(self._params, tree, k, self.config.num_simulations)
            out = self.search.result(tree, k)
        jax.block_until_ready(self.search.advance(tree, out.actions))
        if self.threads > 1:
            jax.block_until_ready(self.search.merged_result((tree,) * self.threads, key))
        self._ready.add((self.search, timed))

    def _decide(self, colour, seconds) -> Decision:
        trees = self._roots(colour)
        if self._pool is None:
            tree = trees[0]
            if seconds is None:
                tree = self.search.start(self._params, tree, self._next_key())
                tree = self.search.simulate(self._params, tree, self._next_key(), self.config.num_simulations)
                out, sims = self.search.result(tree, self._next_key()), self.config.num_simulations
            else:
                out, tree, sims = search_for(self.search, self._params, tree, self._next_key(), seconds, self.chunk)
            self._keep([tree], colour)
            return search_decision(out, sims)
        searched = list(self._pool.map(functools.partial(self._search_one, seconds),
                                       trees, [self._next_key() for _ in trees]))
        trees = [tree for tree, _ in searched]
        self._keep(trees, colour)
        out = self.search.merged_result(tuple(trees), self._next_key())
        return search_decision(out, sum(sims for _, sims in searched))

    def _search_one(self, seconds, tree, key):
        """``(tree, simulations)``: one thread's share of a move, as ``_decide`` searches one tree."""
        if seconds is not None:
            _, tree, sims = search_for(self.search, self._params, tree, key, seconds, self.chunk)
            return tree, sims
        k_start, k_sim = jax.random.split(key)
        tree = self.search.start(self._params, tree, k_start)
        sims = self.config.num_simulations
        return jax.block_until_ready(self.search.simulate(self._params, tree, k_sim, sims)), sims

    def _play(self, colour: int, action: int) -> None:
        reuse = self.trees is not None and self._tree_at == (len(self.pos.moves), colour)
        super()._play(colour, action)
        if reuse and not bool(self.pos.state.terminal):
            actions = np.asarray([action], np.int32)
            self._keep([self.search.advance(tree, actions) for tree in self.trees], -colour)
        else:
            self._reset()

    @property
    def analysis_heads(self) -> tuple[bool, bool]:
        """``(ownership, score)`` heads of the network given as ``heads`` (``Player.analysis_heads``),
        read from the shapes of its outputs on the current game."""
        if self._heads_network is None or self.pos is None:
            return False, False
        if self._head_kinds is None:
            net = self._heads_network
            out = jax.eval_shape(lambda v, s: net.aux(v, jax.vmap(net.planes)(s)), self._params,
                                 batch1(self.pos.state))
            self._head_kinds = (getattr(out, "ownership", None) is not None, getattr(out, "score", None) is not None)
        return self._head_kinds

    @property
    def can_cleanup(self) -> bool:
        """A network with an ownership head cleans up (``_clean_up``)."""
        return self.analysis_heads[0] if self.pos is not None else self._heads_network is not None

    def ownership(self) -> np.ndarray | None:
        """The ownership head's map of the current position, +1 black (``Player.ownership``)."""
        if not self.analysis_heads[0]:
            return None
        colour = self.pos.to_play
        root = self.search.init(batch1(prepared(self.pos.game, self.pos.state, colour)))
        own, _ = self._heads_program(self._params, root.states, np.full(HEADS_BATCH, ROOT, np.int32))
        return np.asarray(own)[0] * colour  # the head speaks for the player to move

    def _clean_up(self, colour, seconds, passing) -> Decision:
        """Rather than pass, capture the opponent's stones the ownership head calls dead
        (``dead_stones``): a search restricted to their liberties (``cleanup_points``), the
        same effort as a move. Passes when there are none, or when the best such move's win
        rate falls more than ``CLEANUP_TOLERANCE`` below passing's (stones the head misjudges,
        in seki for one, are left alone)."""
        own = self.ownership()
        if own is None:
            return passing
        pos = self.pos
        dead = dead_stones(pos.board, own, pos.size)
        allowed = np.zeros(pos.num_points + 1, bool)
        allowed[:-1] = cleanup_points(pos.board, dead, colour, pos.size) & pos.legal_mask(colour)[:-1]
        if not allowed.any():
            return passing
        tree = self.search.init(batch1(prepared(pos.game, pos.state, colour)))
        tree = _restrict_root(self.search.start(self._params, tree, self._next_key()), allowed)
        sims = self.config.num_simulations if seconds is None else self.chunk
        out = self.search.result(self.search.simulate(self._params, tree, self._next_key(), sims), self._next_key())
        self._reset()  # the restricted tree is not the position's: the next move searches afresh
        decision = search_decision(out, sims)
        if passing.winrate is not None and decision.winrate < passing.winrate - CLEANUP_TOLERANCE:
            return passing
        return decision

    def analyze(self, colour, report, stop, interval=1.0, options=None) -> None:
        """Search in chunks of ``num_simulations``, reporting the root's moves every ``interval``
        seconds (and after the first chunk), until ``stop()``; the tree is kept for the next move.

        With ``options.allowed`` the search starts from a fresh root whose moves outside it are
        masked (and that tree is not kept: a later move searches every legal move). With
        ``options.heads`` and a network with heads, each visited move's ``score`` is the score
        head's margin after it (the ownership head's when there is no score head: the predicted
        area, komi counted) and unvisited moves get the position's own; the ownership is the
        network's at the root and after each reported visited move, averaged with weights 1
        and the moves' visits (KataGo averages over the whole search tree)."""
        options = options or AnalysisOptions()
        self._require_game()
        chunk = self.config.num_simulations
        restricted = options.allowed is not None
        if restricted:
            allowed = np.asarray(options.allowed, bool)
            if allowed.shape != (self.pos.num_points + 1,):
                raise ValueError(f"allowed must be bool[{self.pos.num_points + 1}], got shape {allowed.shape}")
            root = self.search.init(batch1(prepared(self.pos.game, self.pos.state, colour)))
        else:
            others = self._roots(colour)
            root, others = others[0], others[1:]
        tree = self.search.start(self._params, root, self._next_key())
        if restricted:
            tree = _restrict_root(tree, allowed)
        tree = jax.block_until_ready(self.search.simulate(self._params, tree, self._next_key(), chunk))
        self._report(tree, colour, report, options)
        last = time.perf_counter()
        while not stop():
            if int(tree.num_nodes[0]) + chunk <= self.search.capacity:
                tree = jax.block_until_ready(self.search.simulate(self._params, tree, self._next_key(), chunk))
            else:
                time.sleep(min(interval, 0.02))  # the tree is full: keep answering, stop searching
            if time.perf_counter() - last >= interval:
                self._report(tree, colour, report, options)
                last = time.perf_counter()
        if not restricted:
            self._keep([tree, *others], colour)

    def _report(self, tree, colour: int, report, options: AnalysisOptions) -> None:
        """``report`` the root's moves of ``tree`` (with the heads' scores and ownership if asked)."""
        moves = tree_analysis(tree, options.max_moves, min_moves=options.min_moves)
        has_ownership, has_score = self.analysis_heads if options.heads else (False, False)
        if not (has_ownership or has_score):
            report(moves)
            return
        visited = [m for m in moves if m.visits > 0]
        kids = np.asarray(tree.children[0, ROOT])
        nodes = np.asarray([ROOT] + [int(kids[m.action]) for m in visited], np.int32)
        own, score = [], []
        for i in range(0, len(nodes), HEADS_BATCH):  # fixed batches: one compiled shape
            batch = np.full(HEADS_BATCH, ROOT, np.int32)
            part = nodes[i:i + HEADS_BATCH]
            batch[:len(part)] = part
            o, sc = self._heads_program(self._params, tree.states, batch)
            own.append(np.asarray(o)[:len(part)])
            score.append(np.asarray(sc)[:len(part)])
        own, score = np.concatenate(own), np.concatenate(score)
        own[1:], score[1:] = -own[1:], -score[1:]  # a child's heads speak for the opponent: the root player's view
        if not has_score:  # the predicted area margin, komi counted for the root player
            score = own.sum(axis=-1) - self._settings[1] * colour
        at = {m.action: float(score[1 + i]) for i, m in enumerate(visited)}
        moves = [dataclasses.replace(m, score=at.get(m.action, float(score[0]))) for m in moves]
        if not has_ownership:
            report(moves)
            return
        weights = np.asarray([1.0] + [m.visits for m in visited], np.float64)
        report(moves, (weights[:, None] * own).sum(axis=0) / weights.sum())


CLEANUP_TOLERANCE = 0.2
"""How much win rate a cleanup move may cost against passing (``SearchPlayer._clean_up``)."""

HEADS_BATCH = 16
"""Tree nodes per call of a search player's analysis heads: the root and up to 15 moves."""


def _heads_program(network: Network) -> Callable:
    """``(variables, tree states [1, C, ...], nodes int32[K]) -> (ownership float32[K, N], score
    float32[K])``: ``network.aux`` on the states of ``nodes`` of game 0, each for its player to
    move (zeros for a head the network lacks), jitted."""
    planes = jax.vmap(network.planes)

    def run(variables, states, nodes):
        picked = jax.tree_util.tree_map(lambda x: x[0, nodes], states)
        x = planes(picked)
        out = network.aux(variables, x)
        k, points = nodes.shape[0], x.shape[1] * x.shape[2]
        ownership = getattr(out, "ownership", None)
        score = getattr(out, "score", None)
        return (jnp.zeros((k, points), jnp.float32) if ownership is None else ownership,
                jnp.zeros((k,), jnp.float32) if score is None else score)

    return jax.jit(run)


@jax.jit
def _restrict_root(tree, allowed):
    """``tree`` (a started ``SearchTree``) with its roots' moves outside ``allowed`` (bool[A])
    made illegal and the prior renormalised over the rest."""
    legal = tree.legal[:, ROOT] & allowed[None]
    prior = jnp.where(legal, tree.prior[:, ROOT], 0.0)
    prior = prior / jnp.maximum(jnp.sum(prior, axis=-1, keepdims=True), 1e-30)
    return tree.replace(legal=tree.legal.at[:, ROOT].set(legal), prior=tree.prior.at[:, ROOT].set(prior))


NETWORK_LEAF_BATCH = 8
"""Leaves a network player evaluates per network call (``SearchConfig.leaf_batch``), by default;
virtual loss keeps their descents apart (docs/benchmarks.md, "Simulations per move")."""

NETWORK_TIME_CHUNK = 64
"""Simulations per jitted call of a network player's timed move, by default (at most 8 rounds
of ``leaf_batch`` leaves, at least ``search.time_control.time_chunk``): each call copies the tree."""

NETWORK_NODES_PER_SIMULATION = 32
"""A network player's tree holds ``32 * sims + 1`` nodes by default (``nodes``): room for a
reused subtree and a timed move's simulations beyond ``sims``."""


def play_search_config(simulations: int, nodes: int | None = None, c_puct: float = 1.25,
                       leaf_batch: int = 1) -> SearchConfig:
    """Search settings for play: the most visited move, no root noise, room to reuse the tree."""
    return SearchConfig(num_simulations=simulations, temperature=0.0, dirichlet_fraction=0.0, c_puct=c_puct,
                        leaf_batch=leaf_batch, tree_capacity=nodes or 8 * simulations + 1)


def mcts_player(simulations: int = 200, *, nodes: int | None = None, c_puct: float = 1.25, seed: int = 0,
                threads: int = 1, name: str | None = None) -> SearchPlayer:
    """Pure Monte Carlo tree search: uniform priors, random playouts to the end of the game
    (``threads`` trees side by side: ``SearchPlayer``)."""
    return SearchPlayer(rollout_evaluator, None, play_search_config(simulations, nodes, c_puct),
                        name=name or f"mcts{simulations}{_threads_suffix(threads)}", seed=seed, threads=threads)


def _threads_suffix(threads: int) -> str:
    return f"-threads{threads}" if threads > 1 else ""


def network_player(network: Network, simulations: int = 200, *, nodes: int | None = None, c_puct: float = 1.25,
                   symmetries: str | None = None, leaf_batch: int | None = None, chunk: int | None = None,
                   seed: int = 0, lam: float = 0.0, score: float = 0.0, tactics: float = 0.0,
                   root_tactics: float | None = None, threads: int = 1, name: str | None = None) -> SearchPlayer:
    """A network's policy and value guiding PUCT search (AlphaGo Zero's player).

    Args:
      nodes: the tree's capacity (default ``NETWORK_NODES_PER_SIMULATION * simulations + 1``).
      lam: AlphaGo's mixing: a leaf is valued ``(1 - lam) v + lam z``, ``v`` the network's value
        and ``z`` the outcome of one random playout that keeps the player's own eyes (under
        simple ko); 0, the default, plays no playouts.
      score: the weight of the score head's margin in each leaf's value (``search.score_utility_apply``:
        KataGo's score utility, so that a won or lost game is still played for points); 0, the
        default, searches on the value alone. It needs a network with a score head; the win
        rates the player reports (``Decision.winrate``, analysis) are then the utility's.
      tactics: the share of each node's prior given to the capture reader's moves
        (``search.tactical_evaluator``: saving a string by capturing and ladder captures at every
        node, nets at the root); 0, the default, searches on the network's prior alone.
      root_tactics: the reader's share of the root's prior alone (default ``tactics``): a smaller
        share keeps the root's visits, and so the move chosen, nearer the network's, while the
        tree below still reads the reader's moves (docs/results.md, "The root's share apart").
      leaf_batch: leaves per network call; it must divide ``simulations``. Default: the
        greatest common divisor of ``NETWORK_LEAF_BATCH`` and ``simulations``.
      chunk: simulations per call of a timed move (``SearchPlayer``). Default
        ``NETWORK_TIME_CHUNK`` (at most 8 rounds of ``leaf_batch``, at least
        ``time_control.time_chunk``, at most ``simulations``).
      symmetries: ``search.network_evaluator``'s; default ``"none"``, and ``"random"`` with
        ``threads`` > 1, which needs it (the trees differ by their random symmetries).
      threads: trees searched side by side, one thread each (``SearchPlayer``); on a CPU, up to
        its cores.
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam}")
    symmetries = symmetries or ("random" if threads > 1 else "none")
    if threads > 1 and symmetries != "random":
        raise ValueError(f"threads={threads} needs symmetries 'random', got {symmetries!r}: the trees differ only "
                         "by the network's random symmetries, and would all be the same")
    if leaf_batch is None:
        leaf_batch = math.gcd(NETWORK_LEAF_BATCH, simulations)
    config = play_search_config(simulations, nodes or NETWORK_NODES_PER_SIMULATION * simulations + 1, c_puct,
                                leaf_batch)
    if chunk is None:
        rounds = min(NETWORK_TIME_CHUNK, 8 * leaf_batch) // leaf_batch
        chunk = min(simulations, max(time_chunk(config), rounds * leaf_batch))
    apply, key = network.apply, network.key
    if score:
        if network.aux is None:
            raise ValueError(f"score={score}: network {network.name} has no score head")
        apply, key = score_utility_apply(network.aux, score), key and f"score_utility({key}, {score!r})"
    evaluator = network_evaluator(apply, network.planes, symmetries)
    evaluator_key = None if key is None else f"network({key}, symmetries={symmetries!r})"
    root_tactics = tactics if root_tactics is None else root_tactics
    for option, weight in (("tactics", tactics), ("root_tactics", root_tactics)):
        if not 0.0 <= weight < 1.0:
            raise ValueError(f"{option} must be in [0, 1), got {weight}")
    evaluator_of = functools.partial(_guided, evaluator, lam, tactics, root_tactics)
    if lam:
        evaluator_key = evaluator_key and f"mixed({evaluator_key}, playouts, lam={lam!r})"
    if tactics or root_tactics:
        evaluator_key = evaluator_key and f"tactical({evaluator_key}, {tactics!r}, root={root_tactics!r})"
    mixed = (f"-lam{lam:g}" if lam else "") + (f"-score{score:g}" if score else "") + \
        (f"-tactics{tactics:g}" if tactics else "") + \
        (f"-root{root_tactics:g}" if root_tactics != tactics else "") + _threads_suffix(threads)
    return SearchPlayer(evaluator_of, network.variables, config, chunk=chunk, evaluator_key=evaluator_key,
                        name=name or f"{network.name}-search{simulations}{mixed}", history=network.history,
                        seed=seed, heads=network if network.aux is not None else None, threads=threads)


def _guided(evaluator, lam: float, tactics: float, root_tactics: float, game: Game):
    """``game -> Evaluator``: ``evaluator``, its value mixed with eye-keeping playouts' (``lam``),
    its prior with the capture reader's moves (``tactics`` below the root, ``root_tactics`` at it,
    where alone nets are read)."""
    if lam:
        evaluator = mixed_evaluator(evaluator, rollout_evaluator(game, keep_eyes=True, simple_ko=True), lam)
    if not (tactics or root_tactics):
        return evaluator
    return RootedEvaluator(leaf=tactical_evaluator(evaluator, game.size, tactics, nets=False),
                           root=tactical_evaluator(evaluator, game.size, root_tactics, nets=True))
