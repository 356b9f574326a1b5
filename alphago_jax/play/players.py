"""Players: anything that can follow a game of Go and choose moves.

The ``Player`` protocol is what the GTP engine, the arena and terminal play drive::

    player.new_game(size=9, komi=7.5)            # or with setup stones (handicap, SGF)
    player.play(BLACK, 40)                       # a move by either colour, kept in sync
    decision = player.genmove(WHITE, seconds=1)  # choose a move (and play it: commit=True)
    player.undo()                                # take back the last move
    player.analyze(WHITE, report, stop, 0.5)     # live analysis (search players; GTP lz-/kata-analyze)

Implementations here run inside this process on the JAX rules (``LocalPlayer``):

- ``RandomPlayer``: uniformly random legal moves (pass included);
- ``PolicyPlayer``: a network's raw policy, the most probable legal move;
- ``SearchPlayer``: PUCT search with tree reuse between moves (the subtree of each move
  played, by either side, is kept): pure-rollout MCTS (``mcts_player``) or a network with
  search (``network_player``); a fixed number of simulations per move, or a time budget.

``gtp_player.GTPPlayer`` drives an external engine (GNU Go) over GTP; ``registry`` builds
players from names such as ``mcts:sims=200``.

Moves are actions: a point ``row * size + col`` (row 0 the top edge), ``size * size`` for
pass, and ``RESIGN``.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import math
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games.base import BLACK, Game
from alphago_jax.games.history import WithHistory
from alphago_jax.play.analysis import AnalysisOptions, MoveInfo, tree_analysis
from alphago_jax.play.position import Position, play_game, prepared
from alphago_jax.search import SearchConfig, TreeSearch, make_search, network_evaluator, rollout_evaluator, search_for
from alphago_jax.search.time_control import time_chunk
from alphago_jax.search.tree import ROOT

RESIGN = -1
"""The action of a player that resigns."""


@dataclasses.dataclass(frozen=True)
class Decision:
    """A chosen move.

    Attributes:
      action: a point, pass (``size * size``) or ``RESIGN``.
      winrate: the mover's estimated chance of winning in [0, 1], None when unknown.
      simulations: the search's simulations for this move (0 without search).
    """

    action: int
    winrate: float | None = None
    simulations: int = 0


class Player(abc.ABC):
    """A Go player that follows one game at a time.

    Subclasses implement ``_new_game``, ``_play`` and ``genmove``. The base class remembers the
    game's settings and moves, so that ``undo`` can replay the game from its start.

    Attributes:
      name: a short name for tables and SGF records.
      can_cleanup: ``genmove(cleanup=True)`` differs from a plain ``genmove`` (the player
        then captures dead stones before passing: GTP's ``kgs-genmove_cleanup``).
      can_analyze: ``analyze`` reports live statistics.
      can_restrict_analysis: ``analyze`` takes ``AnalysisOptions.allowed`` (GTP ``avoid`` and
        ``allow``).
    """

    name: str = "player"
    can_cleanup: bool = False
    can_analyze: bool = False
    can_restrict_analysis: bool = False

    @property
    def analysis_heads(self) -> tuple[bool, bool]:
        """``(ownership, score)``: whether ``analyze`` with ``AnalysisOptions(heads=True)`` reports
        the predicted ownership, and moves' scores, in the current game (a network with those heads)."""
        return False, False

    def new_game(self, size: int, komi: float, setup=None, first_player: int = BLACK, handicap: int = 0) -> None:
        """Start a game on a ``size`` x ``size`` board, from ``setup`` stones (int8[N]) if given.

        Raises:
          ValueError: if the player cannot play this board size or setup.
        """
        self._new_game(size, komi, setup, first_player, handicap)
        self._settings = (size, komi, setup, first_player, handicap)
        self._moves: list[tuple[int, int]] = []

    def play(self, colour: int, action: int) -> None:
        """Follow a move by ``colour`` (the opponent's, or one set up by a controller).

        Raises:
          ValueError: if the move is illegal (``position.IllegalMove``); nothing changes.
        """
        self._play(colour, action)
        self._moves.append((colour, action))

    @abc.abstractmethod
    def genmove(self, colour: int, seconds: float | None = None, *, commit: bool = True, cleanup: bool = False,
                resign_below: float = 0.0) -> Decision:
        """Choose a move for ``colour``.

        Args:
          seconds: the time to spend; None: the player's own fixed effort (e.g. simulations).
          commit: play the move (not for ``RESIGN``); False only looks (GTP ``reg_genmove``).
          cleanup: capture dead stones before passing (GTP ``kgs-genmove_cleanup``).
          resign_below: resign when the estimated win rate is below this.
        """

    def undo(self) -> None:
        """Take back the last move (by replaying the game without it).

        Raises:
          ValueError: when no move has been played.
        """
        if not getattr(self, "_moves", None):
            raise ValueError("no move to undo")
        moves = self._moves[:-1]
        self.new_game(*self._settings)
        for colour, action in moves:
            self.play(colour, action)

    def analyze(self, colour: int, report: Callable[..., None], stop: Callable[[], bool],
                interval: float = 1.0, options: AnalysisOptions | None = None) -> None:
        """Think about the position for ``colour``, calling ``report`` with the best moves at least
        once and then about every ``interval`` seconds, until ``stop()`` is true.

        ``report(moves)`` gets ``MoveInfo`` rows, best first; with ``options.heads`` and a player
        whose ``analysis_heads`` has the ownership, ``report(moves, ownership)`` also gets
        float32[size * size] in [-1, 1], +1 owned by ``colour`` (index ``row * size + col``).
        ``options`` (default ``AnalysisOptions()``) bounds the moves reported; ``allowed`` only
        for players with ``can_restrict_analysis``.

        Raises:
          NotImplementedError: for players without analysis.
        """
        raise NotImplementedError(f"player {self.name!r} has no analysis")

    def prepare(self, seconds: float | None = None) -> None:
        """Compile now what ``genmove(colour, seconds)`` runs in the current game, so that the
        first move is as fast as the later ones: a move of the player's own fixed effort
        (``seconds`` None: ``prepare_fixed``) or a timed move (``prepare_timed``).

        Controllers call it once the board size and komi are known (GTP's ``boardsize``,
        ``komi``, ``clear_board``; the start of a terminal or notebook game), before any clock
        runs. Changes no state and draws nothing from the player's random stream; cheap once
        done for a board size and komi.
        """
        if seconds is None:
            self.prepare_fixed()
        else:
            self.prepare_timed()

    def prepare_fixed(self) -> None:
        """Compile now what ``genmove`` without a time budget runs in the current game
        (``prepare``); players that compile nothing do nothing."""

    def prepare_timed(self) -> None:
        """Compile now what ``genmove`` with a time budget runs in the current game (a player
        that compiles its search on first use), so that the first timed move spends its budget
        searching and a controller's clock does not pay for compilation. Changes no state and
        draws nothing from the player's random stream; cheap once done for a board size."""

    def close(self) -> None:
        """Release what the player holds (processes, devices)."""

    def reseed(self, seed: int) -> None:
        """Restart the player's random stream from ``seed`` mixed with its own seed (players of a
        parallel match start each game from its number); players without one ignore it."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @abc.abstractmethod
    def _new_game(self, size, komi, setup, first_player, handicap) -> None: ...

    @abc.abstractmethod
    def _play(self, colour: int, action: int) -> None: ...


class BySizePlayer(Player):
    """One player per board size: ``makers[size]()`` on the sizes it names, ``fallback()`` on the
    others, each made when first needed and kept. Before the first game it is the player of
    the first size named."""

    def __init__(self, makers: dict[int, Callable[[], Player]], fallback: Callable[[], Player]):
        self._makers, self._fallback, self._built = dict(makers), fallback, {}
        self._current = self._player(next(iter(self._makers))) if self._makers else None

    def _player(self, size: int) -> Player:
        key = size if size in self._makers else None
        if key not in self._built:
            self._built[key] = self._makers[key]() if key is not None else self._fallback()
        return self._built[key]

    @property
    def current(self) -> Player:
        if self._current is None:
            self._current = self._player(-1)
        return self._current

    name = property(lambda self: self.current.name)
    can_cleanup = property(lambda self: self.current.can_cleanup)
    can_analyze = property(lambda self: self.current.can_analyze)
    can_restrict_analysis = property(lambda self: self.current.can_restrict_analysis)
    analysis_heads = property(lambda self: self.current.analysis_heads)

    def new_game(self, size: int, komi: float, setup=None, first_player: int = BLACK, handicap: int = 0) -> None:
        player = self._player(size)
        player.new_game(size, komi, setup, first_player, handicap)
        self._current = player

    def play(self, colour: int, action: int) -> None:
        self.current.play(colour, action)

    def genmove(self, colour, seconds=None, **kwargs) -> Decision:
        return self.current.genmove(colour, seconds, **kwargs)

    def undo(self) -> None:
        self.current.undo()

    def analyze(self, colour, report, stop, interval=1.0, options=None) -> None:
        self.current.analyze(colour, report, stop, interval, options)

    def prepare_fixed(self) -> None:
        self.current.prepare_fixed()

    def prepare_timed(self) -> None:
        self.current.prepare_timed()

    def reseed(self, seed: int) -> None:
        for player in self._built.values():
            player.reseed(seed)

    def close(self) -> None:
        for player in self._built.values():
            player.close()

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:  # new_game delegates
        raise NotImplementedError

    def _play(self, colour, action) -> None:  # play delegates
        raise NotImplementedError


class LocalPlayer(Player):
    """A player on this project's JAX rules: keeps a ``Position`` (``self.pos``).

    Subclasses implement ``_decide``; undo is a pop of the kept states. Every local player
    can analyze: without search, one look at its choice (its policy's priors).

    Args:
      history: boards the state keeps for network input planes (``WithHistory``); 0 for
        plain Go states.
    """

    can_analyze = True

    def __init__(self, name: str, history: int = 0):
        self.name = name
        self.history = history
        self.pos: Position | None = None

    def make_game(self, size: int, komi: float) -> Game:
        """The rules this player searches with (``position.play_game``, with history if asked)."""
        game = play_game(size, komi)
        return WithHistory(game, boards=self.history) if self.history else game

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
        self.pos = Position(self.make_game(size, komi), setup, first_player, handicap)
        self._reset()

    def _play(self, colour: int, action: int) -> None:
        self._require_game().play(colour, action)

    def prepare_fixed(self) -> None:
        """Compile the position's step (``Player.prepare_fixed``); subclasses add their search."""
        self._require_game().compile()

    def prepare_timed(self) -> None:
        """Compile the position's step (``Player.prepare_timed``); subclasses add their search."""
        self._require_game().compile()

    def undo(self) -> None:
        pos = self._require_game()
        pos.undo()
        self._moves.pop()
        self._reset()

    def genmove(self, colour: int, seconds: float | None = None, *, commit: bool = True, cleanup: bool = False,
                resign_below: float = 0.0) -> Decision:
        del cleanup  # the same move: these players play by area scoring, dead stones count as alive
        pos = self._require_game()
        if pos.at_move_limit:
            return Decision(pos.pass_action)
        decision = self._decide(colour, seconds)
        if decision.winrate is not None and decision.winrate < resign_below:
            return dataclasses.replace(decision, action=RESIGN)
        if commit and decision.action != RESIGN:
            self.play(colour, decision.action)
        return decision

    def analyze(self, colour, report, stop, interval=1.0, options=None) -> None:
        """One report of the moves' priors (players without search), then wait for ``stop``."""
        report(self._snapshot(colour))
        while not stop():
            time.sleep(min(interval, 0.02))

    @abc.abstractmethod
    def _decide(self, colour: int, seconds: float | None) -> Decision: ...

    def _snapshot(self, colour: int) -> list[MoveInfo]:
        """A one-look analysis: the chosen move, without search."""
        d = self._decide(colour, None)
        w = 0.5 if d.winrate is None else d.winrate
        return [MoveInfo(d.action, 1, w, 1.0, (d.action,))]

    def _reset(self) -> None:
        """Called after a new game and an undo (drop anything kept about the old position)."""

    def _require_game(self) -> Position:
        if self.pos is None:
            raise ValueError(f"player {self.name!r}: no game started (new_game first)")
        return self.pos


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


def _batch1(state):
    """A batch of one game (numpy leaves: no eager device operations)."""
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[None], state)


# ----------------------------------------------------------------------------------- random

class RandomPlayer(LocalPlayer):
    """Uniformly random legal moves, pass included (no network, no search)."""

    def __init__(self, seed: int = 0, name: str = "random"):
        super().__init__(name)
        self._seed = seed
        self._rng = np.random.default_rng(seed)

    def reseed(self, seed: int) -> None:
        self._rng = np.random.default_rng((self._seed, seed))

    def _decide(self, colour, seconds) -> Decision:
        legal = np.flatnonzero(self.pos.legal_mask(colour))
        return Decision(int(self._rng.choice(legal)))


# ----------------------------------------------------------------------------------- networks

@dataclasses.dataclass(frozen=True)
class Network:
    """A network as the players use it.

    Attributes:
      apply: ``(variables, planes float32[B, S, S, C]) -> (logits float32[B, S*S + 1], value
        float32[B])``, the value for the player to move in [-1, 1].
      planes: one state -> float32[S, S, C] input planes (e.g. ``features.zero_planes``).
      variables: ``size -> variables`` for a board size; raises ``ValueError`` for a size the
        network cannot play.
      history: boards the states must keep for ``planes`` (``WithHistory``; 8 for Zero's planes).
      name: a short name.
      key: what ``apply`` and ``planes`` compute, written the same in every process (e.g. the
        module's repr and the planes' name): a search player of the network then keeps its
        compiled programs between runs (``compile_cache.kept``). None: it compiles them in
        each process (from JAX's cache, after tracing).
      aux: ``(variables, planes float32[B, S, S, C]) -> nets.DualOutput``, every head of a network
        with KataGo's auxiliary heads (ownership float32[B, S*S], score float32[B], None for a head
        it lacks), for analysis (GTP ``kata-analyze``); None for a network without them.
    """

    apply: Callable[[Any, jnp.ndarray], tuple[jnp.ndarray, jnp.ndarray]]
    planes: Callable[[Any], jnp.ndarray]
    variables: Callable[[int], Any]
    history: int = 8
    name: str = "net"
    aux: Callable[[Any, jnp.ndarray], Any] | None = None
    key: str | None = None


class PolicyPlayer(LocalPlayer):
    """A network's raw policy: the legal move with the largest logit (no search)."""

    def __init__(self, network: Network, name: str | None = None):
        super().__init__(name or f"policy({network.name})", history=network.history)
        self.network = network
        planes = jax.vmap(network.planes)
        self._forward = jax.jit(lambda v, s: network.apply(v, planes(s)))

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
        self._variables = self.network.variables(size)
        super()._new_game(size, komi, setup, first_player, handicap)

    def _outputs(self, colour):
        state = prepared(self.pos.game, self.pos.state, colour)
        logits, value = self._forward(self._variables, _batch1(state))
        legal = np.asarray(state.legal)
        return np.where(legal, np.asarray(logits, np.float64)[0], -np.inf), float(np.asarray(value)[0])

    def prepare_fixed(self) -> None:
        """Compile the network's forward pass and the position's step (``Player.prepare_fixed``)."""
        super().prepare_fixed()
        self._outputs(self.pos.to_play)

    def prepare_timed(self) -> None:
        """The same as ``prepare_fixed``: a timed move is the same forward pass."""
        self.prepare_fixed()

    def _decide(self, colour, seconds) -> Decision:
        logits, value = self._outputs(colour)
        return Decision(int(np.argmax(logits)), (value + 1) / 2)

    def _snapshot(self, colour) -> list[MoveInfo]:
        logits, value = self._outputs(colour)
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        top = np.argsort(-probs, kind="stable")[:10]
        return [MoveInfo(int(a), 1, (value + 1) / 2, float(probs[a]), (int(a),)) for a in top if probs[a] > 0]


# ------------------------------------------------------------------------------------ search

class SearchPlayer(LocalPlayer):
    """PUCT search (``search.TreeSearch``) with the tree kept between moves.

    Without a time budget a move runs ``config.num_simulations`` simulations on top of the
    reused subtree; with one it searches in chunks of ``chunk`` simulations (``search_for``: a
    chunk starts only while it is expected to end within the budget) until the budget is spent
    or the tree (``config.tree_capacity`` nodes) is full.

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
    """

    can_analyze = True
    can_restrict_analysis = True

    def __init__(self, evaluator: Callable[[Game], Callable], params: Callable[[int], Any] | None,
                 config: SearchConfig, *, name: str = "search", history: int = 0, seed: int = 0,
                 chunk: int | None = None, heads: Network | None = None, evaluator_key: str | None = None):
        if config.algorithm != "puct":
            raise ValueError(f"a search player needs algorithm 'puct', got {config.algorithm!r}")
        chunk = chunk or time_chunk(config)
        if chunk % config.leaf_batch or chunk > config.num_simulations:
            raise ValueError(f"chunk must be a multiple of leaf_batch ({config.leaf_batch}) and at most "
                             f"num_simulations ({config.num_simulations}), got {chunk}")
        super().__init__(name, history)
        self.config, self.chunk = config, chunk
        self._evaluator, self._params_for, self._evaluator_key = evaluator, params, evaluator_key
        self._seed = seed
        self._key = jax.random.PRNGKey(seed)
        self.tree = None
        self._tree_at = None  # (moves played, colour to move) of the tree's root
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
        self.tree, self._tree_at = None, None

    def reseed(self, seed: int) -> None:
        self._key = jax.random.fold_in(jax.random.PRNGKey(self._seed), seed)

    def _next_key(self):
        self._key, k = jax.random.split(self._key)
        return k

    def _root(self, colour):
        """The tree to search for ``colour``: the kept one if its root is this position."""
        if self.tree is not None and self._tree_at == (len(self.pos.moves), colour):
            return self.tree
        return self.search.init(_batch1(prepared(self.pos.game, self.pos.state, colour)))

    def _keep(self, tree, colour) -> None:
        self.tree, self._tree_at = tree, (len(self.pos.moves), colour)

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
        tree = self.search.init(_batch1(prepared(self.pos.game, self.pos.state, self.pos.to_play)))
        if timed:
            out, tree, _ = search_for(self.search, self._params, tree, key, 0.0, self.chunk)
        else:
            key, k = jax.random.split(key)  # what ``_next_key`` runs, eagerly
            tree = self.search.start(self._params, tree, k)
            tree = self.search.simulate(self._params, tree, k, self.config.num_simulations)
            out = self.search.result(tree, k)
        jax.block_until_ready(self.search.advance(tree, out.actions))
        self._ready.add((self.search, timed))

    def _decide(self, colour, seconds) -> Decision:
        tree = self._root(colour)
        if seconds is None:
            tree = self.search.start(self._params, tree, self._next_key())
            tree = self.search.simulate(self._params, tree, self._next_key(), self.config.num_simulations)
            out, sims = self.search.result(tree, self._next_key()), self.config.num_simulations
        else:
            out, tree, sims = search_for(self.search, self._params, tree, self._next_key(), seconds, self.chunk)
        self._keep(tree, colour)
        return search_decision(out, sims)

    def _play(self, colour: int, action: int) -> None:
        reuse = self.tree is not None and self._tree_at == (len(self.pos.moves), colour)
        super()._play(colour, action)
        if reuse and not bool(self.pos.state.terminal):
            self._keep(self.search.advance(self.tree, np.asarray([action], np.int32)), -colour)
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
                                 _batch1(self.pos.state))
            self._head_kinds = (getattr(out, "ownership", None) is not None, getattr(out, "score", None) is not None)
        return self._head_kinds

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
            root = self.search.init(_batch1(prepared(self.pos.game, self.pos.state, colour)))
        else:
            root = self._root(colour)
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
            self._keep(tree, colour)

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
"""Leaves a network player evaluates per network call (``SearchConfig.leaf_batch``), by default.

One position at a time leaves a CPU's vector units and threads mostly idle: a batch of 8
costs little more than one, so a move searched for a time runs about 3.5 times the
simulations on a 2-core CPU (docs/benchmarks.md, "Simulations per move"); larger batches add
little there. Virtual loss keeps the 8 descents apart."""

NETWORK_TIME_CHUNK = 64
"""Simulations per jitted call of a network player's timed move, by default (at most 8 rounds
of ``leaf_batch`` leaves, at least ``search.time_control.time_chunk``): each call dispatches and
copies the whole tree, which at 16 simulations costs about a tenth of the search on a CPU."""

NETWORK_NODES_PER_SIMULATION = 32
"""A network player's tree holds ``32 * sims + 1`` nodes by default (``nodes``). A reused
subtree may fill all but ``sims`` of them, so a tree of ``8 * sims + 1`` nodes cut timed moves
of a fast search short (to 200 simulations, against 900 that fit in the second); about 5 kB a
node on 9x9 (33 MB for 200 simulations)."""


def play_search_config(simulations: int, nodes: int | None = None, c_puct: float = 1.25,
                       leaf_batch: int = 1) -> SearchConfig:
    """Search settings for play: the most visited move, no root noise, room to reuse the tree."""
    return SearchConfig(num_simulations=simulations, temperature=0.0, dirichlet_fraction=0.0, c_puct=c_puct,
                        leaf_batch=leaf_batch, tree_capacity=nodes or 8 * simulations + 1)


def mcts_player(simulations: int = 200, *, nodes: int | None = None, c_puct: float = 1.25, seed: int = 0,
                name: str | None = None) -> SearchPlayer:
    """Pure Monte Carlo tree search: uniform priors, random playouts to the end of the game."""
    return SearchPlayer(rollout_evaluator, None, play_search_config(simulations, nodes, c_puct),
                        name=name or f"mcts{simulations}", seed=seed)


def network_player(network: Network, simulations: int = 200, *, nodes: int | None = None, c_puct: float = 1.25,
                   symmetries: str = "none", leaf_batch: int | None = None, chunk: int | None = None, seed: int = 0,
                   name: str | None = None) -> SearchPlayer:
    """A network's policy and value guiding PUCT search (AlphaGo Zero's player).

    Args:
      nodes: the tree's capacity (default ``NETWORK_NODES_PER_SIMULATION * simulations + 1``).
      leaf_batch: leaves per network call; it must divide ``simulations``. Default: the
        greatest common divisor of ``NETWORK_LEAF_BATCH`` and ``simulations``.
      chunk: simulations per call of a timed move (``SearchPlayer``). Default
        ``NETWORK_TIME_CHUNK`` (at most 8 rounds of ``leaf_batch``, at least
        ``time_control.time_chunk``, at most ``simulations``).
    """
    if leaf_batch is None:
        leaf_batch = math.gcd(NETWORK_LEAF_BATCH, simulations)
    config = play_search_config(simulations, nodes or NETWORK_NODES_PER_SIMULATION * simulations + 1, c_puct,
                                leaf_batch)
    if chunk is None:
        rounds = min(NETWORK_TIME_CHUNK, 8 * leaf_batch) // leaf_batch
        chunk = min(simulations, max(time_chunk(config), rounds * leaf_batch))
    evaluator = network_evaluator(network.apply, network.planes, symmetries)
    evaluator_key = None if network.key is None else f"network({network.key}, symmetries={symmetries!r})"
    return SearchPlayer(lambda game: evaluator, network.variables, config, chunk=chunk, evaluator_key=evaluator_key,
                        name=name or f"{network.name}-search{simulations}", history=network.history, seed=seed,
                        heads=network if network.aux is not None else None)
