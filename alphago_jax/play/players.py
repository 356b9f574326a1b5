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
- ``Network``: a network as a player sees it (variables, input planes, policy and value).

``search_player.SearchPlayer`` adds PUCT search with tree reuse between moves: pure-rollout
MCTS (``mcts_player``) or a network with search (``network_player``).

``gtp_player.GTPPlayer`` drives an external engine (GNU Go) over GTP; ``registry`` builds
players from names such as ``mcts:sims=200``.

Moves are actions: a point ``row * size + col`` (row 0 the top edge), ``size * size`` for
pass, and ``RESIGN``.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games.base import BLACK, Game
from alphago_jax.games.history import WithHistory
from alphago_jax.play.analysis import AnalysisOptions, MoveInfo
from alphago_jax.play.position import Position, play_game, prepared

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

    def ownership(self) -> np.ndarray | None:
        """float32[N] in [-1, 1]: the predicted final owner of each point of the current
        position, +1 black (a network's ownership head); None for a player without one."""
        return None

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
        """Compile now what ``genmove(colour, seconds)`` runs in the current game: a move of the
        player's own fixed effort (``seconds`` None: ``prepare_fixed``) or a timed move
        (``prepare_timed``). Changes no state and draws nothing from the player's random stream."""
        if seconds is None:
            self.prepare_fixed()
        else:
            self.prepare_timed()

    def prepare_fixed(self) -> None:
        """Compile now what ``genmove`` without a time budget runs in the current game
        (``prepare``); players that compile nothing do nothing."""

    def prepare_timed(self) -> None:
        """Compile now what ``genmove`` with a time budget runs in the current game (``prepare``)."""

    def close(self) -> None:
        """Release what the player holds (processes, devices)."""

    def reseed(self, seed: int) -> None:
        """Restart the player's random stream from ``seed`` mixed with its own seed (the arena
        starts each game from its number); players without one ignore it."""

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

    def ownership(self) -> np.ndarray | None:
        return self.current.ownership()

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
        pos = self._require_game()
        if pos.at_move_limit:
            return Decision(pos.pass_action)
        decision = self._decide(colour, seconds)
        if cleanup and decision.action == pos.pass_action:
            decision = self._clean_up(colour, seconds, decision)
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

    def _clean_up(self, colour: int, seconds: float | None, passing: Decision) -> Decision:
        """The move of a cleanup phase where ``_decide`` chose to pass (``passing``): a player
        with ``can_cleanup`` captures dead stones first; by default it passes (area scoring
        counts the stones on the board as they stand)."""
        return passing

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


def batch1(state):
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
        logits, value = self._forward(self._variables, batch1(state))
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
