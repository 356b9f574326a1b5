"""Matches against GNU Go: the network's strength measured against a program nobody here wrote.

    match = GnuGoMatch(config.game, search_mover(eval_search))      # once per run (jit inside)
    out = match(variables, key, games=20, level=1)                  # G = 20 games, G / 2 each colour
    MatchResult.from_outcomes("zero", "gnugo", out.outcomes)

How the G games are played (the arena's rules, ``play.arena``, on the training job's batch):

- game ``i`` has the network as black when ``i`` is even (``selfplay.play_match``'s order), and
  its own GNU Go process (``gtp_client.gnugo_player_args``: GTP mode at the chosen level,
  Chinese rules, positional superko, suicide forbidden, the run's komi), seeded per game
  (``set_random_seed``) so that games with the same colours do not all repeat one game;
- all games advance in lockstep, one ply at a time: every unfinished game has the same colour to
  move, so at each ply the network moves in one half of the games (one batched call of the
  mover on G / 2 states) while the GNU Go processes of the other half think in parallel threads;
  each engine hears the network's last move in the same write as its next ``genmove``;
- the game is kept on this project's rules (the run's ``Go`` with history, stepped in one jitted
  batch): a GNU Go move those rules forbid loses that game (as the arena's forfeit); passing is
  always legal for GNU Go (``Go.pass_after`` only keeps the network from passing early);
- when both players pass in a row for the first time, the game is reopened (``Go.resume``) for a
  cleanup phase in which GNU Go answers ``kgs-genmove_cleanup``: it captures the stones it
  considers dead rather than passing, so that they do not count as its own under area scoring;
  an engine without that command (KataGo) answers a plain ``genmove``, as its own area scoring
  already has it capture what it needs to; the network keeps playing its usual moves; the next
  two passes in a row end the game;
- a game also ends at the rules' move limit (``max_moves``) or when GNU Go resigns;
- a game ended by passes or the move limit is scored by the JAX rules (Tromp-Taylor area with
  komi), never by GNU Go's count.

Every GNU Go process is closed when the match ends, whatever happened. A GNU Go that cannot be
started, dies, refuses one of the network's moves, answers nonsense or says nothing for
``ENGINE_TIMEOUT`` seconds raises ``GTPError`` naming the game and the move.

Layer: ``train``; uses ``games``, the package's GTP client (``alphago_jax.gtp_client``) and the
``Mover`` of ``zero.selfplay``, never ``play``.
"""

from __future__ import annotations

import concurrent.futures
import pathlib
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.history import WithHistory
from alphago_jax.gtp_client import GTPClient, GTPError, find_gnugo, gnugo_player_args, is_gnugo
from alphago_jax.zero.selfplay import Mover

ENDINGS = ("score", "move limit", "resignation", "illegal move")
"""How a game can end (``GnuGoOutput.endings``), as in the arena: two passes in a row after the
cleanup phase, the rules' move limit (both scored), GNU Go's resignation, an illegal GNU Go move."""


ENGINE_TIMEOUT = 300.0
"""Seconds a GNU Go process may take to answer one command (a level-10 move on 19x19 takes a few)
before it counts as hung: the match then fails with ``GTPError`` naming the game and move."""


class GnuGoOutput(NamedTuple):
    """The G games of a match against GNU Go (numpy), T = the rules' ``max_moves``.

    Attributes:
      outcomes: float32[G], +1 / 0 / -1: the network's result (``MatchResult.from_outcomes``).
        Game ``i`` has the network as black when ``i`` is even.
      moves: int32[G, T], the actions played in order (passes are ``size * size``), -1 after the
        end; colours alternate from black, also through the cleanup phase.
      scores: float32[G], the Tromp-Taylor score of each final position (black - white - komi).
      endings: G of ``ENDINGS``.
      cleanup: bool[G], whether the game went through a cleanup phase.
      level: GNU Go's level.
    """

    outcomes: np.ndarray
    moves: np.ndarray
    scores: np.ndarray
    endings: tuple[str, ...]
    cleanup: np.ndarray
    level: int


def _inner(states):
    """The Go states of ``states`` (``HistoryState``s hold them in ``inner``)."""
    return states.inner if hasattr(states, "inner") else states


def _with_inner(states, inner):
    return states.replace(inner=inner) if hasattr(states, "inner") else inner


def _where(mask, new, old):
    """Per game (``mask``: bool[G]) the leaves of ``new``, else those of ``old``."""
    return jax.tree_util.tree_map(lambda a, b: jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b),
                                  new, old)


def _on_one_device(tree):
    """``tree``'s arrays on one local device: the match runs on the first process's first
    device, whatever mesh the run's (replicated) parameters are spread over."""
    return jax.tree_util.tree_map(lambda x: x.addressable_data(0) if isinstance(x, jax.Array) else x, tree)


class GnuGoMatch:
    """Matches of a mover (the network's evaluation search) against GNU Go on ``game``'s rules.

    Build it once: its jitted programs (the mover on G / 2 games, the rules' step for G games)
    compile on the first match of each G and are reused by later ones.

    Args:
      game: the rules, ``Go`` or ``WithHistory(Go)`` (the network's states); its komi is the
        match's komi, its ``max_moves`` the move limit (cleanup phase included).
      mover: ``(params, states, key) -> int32[B]``, the moves of the evaluated player in a batch
        of states (``selfplay.search_mover(make_search(game, evaluator, eval_search))``).
    """

    def __init__(self, game, mover: Mover):
        self.game = game
        go = game.game if isinstance(game, WithHistory) else game
        self.go = go
        self.size = go.size
        self.komi = float(go.komi)
        self.max_moves = go.max_moves

        def moves(params, states, column, key):
            # Games [2p, 2p + 1] are pair p; the network is to move in column ``column`` of every pair.
            half = jax.tree_util.tree_map(
                lambda x: jax.lax.dynamic_index_in_dim(x.reshape((-1, 2) + x.shape[1:]), column, 1, keepdims=False),
                states)
            return mover(params, half, key)

        def advance(states, actions, live, engine, cleaned):
            inner = _inner(states)
            n = go.num_points
            # Tromp-Taylor lets a player pass at any time: GNU Go's pass is never a forfeit.
            can_pass = inner.legal[:, n] | (engine & ~inner.terminal)
            opened = _with_inner(states, inner.replace(legal=inner.legal.at[:, n].set(can_pass)))
            stepped = jax.vmap(game.step)(opened, actions)
            after = _inner(stepped)
            reopen = live & ~cleaned & after.terminal & (after.passes >= 2)  # the first two passes in a row
            after = _where(reopen, jax.vmap(go.resume)(after), after)
            stepped = _where(live, _with_inner(stepped, after), states)
            return stepped, cleaned | reopen, _inner(stepped).terminal

        def final(states):
            return jax.vmap(game.score)(states), jax.vmap(game.returns)(states), _inner(states).loser

        self._moves = jax.jit(moves)
        self._advance = jax.jit(advance)
        self._final = jax.jit(final)

    def __call__(self, params, key, *, games: int, level: int, gnugo: str | None = None,
                 command: list[str] | None = None) -> GnuGoOutput:
        """Play ``games`` games (even; half with each colour) against GNU Go at ``level``, or
        against another GTP engine (``command``: its command line, e.g. ``KataGo.command()``).

        Args:
          params: the mover's parameters (the network's variables).
          key: a PRNG key (uint32[2]): the mover's keys and GNU Go's seeds.
          games: G, an even number >= 2.
          level: GNU Go's ``--level`` (0 is the weakest and fastest; 10, its default, the strongest).
          gnugo: the GNU Go binary (default ``find_gnugo()``).
          command: another engine's command line; ``level`` is then only the output's label.

        Raises:
          GTPError: naming the game and move: GNU Go is missing, cannot start, dies, refuses a
            move of the network or answers a ``genmove`` with something that is not a move.
          ValueError: an odd or too small ``games``.
        """
        if not isinstance(games, (int, np.integer)) or games < 2 or games % 2:
            raise ValueError(f"games must be an even number >= 2, got {games!r}")
        if command is None:
            binary = gnugo or find_gnugo()
            if binary is None:
                raise GTPError("GNU Go is not installed (apt-get install -y gnugo)")
            command = gnugo_command(binary, level, self.size, self.komi)
        params = _on_one_device(params)
        key = _on_one_device(key) if isinstance(key, jax.Array) else jnp.asarray(key, jnp.uint32)
        k_seed, k_moves = jax.random.split(key)
        seeds = np.asarray(jax.random.randint(k_seed, (games,), 0, 1 << 30))
        engines: list[GTPClient] = []
        name = "GNU Go" if is_gnugo(command) else pathlib.Path(command[0]).name  # in errors
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=games // 2, thread_name_prefix="gnugo")
        try:
            for i in range(games):
                engines.append(_start(command, self.size, self.komi, int(seeds[i]), i))
            knows = engines[0].send("list_commands").split()
            cleanup = "kgs-genmove_cleanup" if "kgs-genmove_cleanup" in knows else "genmove"
            return self._play(params, k_moves, engines, pool, level, cleanup, name)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            for engine in engines:  # a dead or busy engine is killed by close()
                engine.close()

    def _play(self, params, key, engines: list[GTPClient], pool, level: int, cleanup: str,
              name: str) -> GnuGoOutput:
        g, n, size = len(engines), self.size * self.size, self.size
        net_black = np.arange(g) % 2 == 0  # game 2p: the network is black
        state = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (g,) + x.shape), self.game.init())
        moves = np.full((g, self.max_moves), -1, np.int32)
        resigned = np.zeros(g, bool)
        over = np.zeros(g, bool)
        cleaned = jnp.zeros(g, bool)
        told = [[] for _ in range(g)]  # the network's moves an engine has yet to hear
        for t in range(self.max_moves):
            if over.all():
                break
            colour = BLACK if t % 2 == 0 else WHITE
            letter = "B" if colour == BLACK else "W"
            network = net_black == (colour == BLACK)  # bool[G]: the network is to move
            cleaning = np.asarray(cleaned)
            asked = {}
            for i in np.flatnonzero(~network & ~over):
                command = f"{cleanup} {letter}" if cleaning[i] else f"genmove {letter}"
                asked[i] = pool.submit(_ask, engines[i], told[i] + [command], name, i, t)
                told[i] = []
            # While GNU Go thinks: the network's moves in its G / 2 games, one batched call.
            net_actions = np.asarray(self._moves(params, state, jnp.int32(t % 2), jax.random.fold_in(key, t)))
            actions = np.full(g, n, np.int32)
            actions[network] = net_actions
            for i, future in asked.items():
                reply = future.result()
                if reply == "resign":
                    resigned[i] = over[i] = True
                    continue
                try:
                    actions[i] = grid.from_vertex(reply, size)
                except ValueError:
                    raise GTPError(f"{name} (game {i + 1}, move {t + 1}) answered {reply!r}, "
                                   "not a move") from None
            live = ~over
            for i in np.flatnonzero(network & live):
                told[i].append(f"play {letter} {grid.to_vertex(int(actions[i]), size)}")
            moves[live, t] = actions[live]
            state, cleaned, terminal = self._advance(state, jnp.asarray(actions), jnp.asarray(live),
                                                     jnp.asarray(~network), cleaned)
            over |= np.asarray(terminal)
        scores, returns, loser = (np.asarray(x) for x in self._final(state))
        outcomes = np.where(net_black, returns[:, 0], returns[:, 1]).astype(np.float32)
        outcomes[resigned] = 1.0  # the network never resigns here
        count = (moves >= 0).sum(axis=1)
        endings = tuple(
            "resignation" if resigned[i] else "illegal move" if loser[i] != 0
            else "move limit" if count[i] >= self.max_moves and not _two_passes(moves[i, : count[i]], n)
            else "score" for i in range(g))
        return GnuGoOutput(outcomes, moves, scores.astype(np.float32), endings, np.asarray(cleaned), int(level))


def _two_passes(actions: np.ndarray, pass_action: int) -> bool:
    return len(actions) >= 2 and actions[-1] == pass_action and actions[-2] == pass_action


def gnugo_command(binary: str, level: int, size: int, komi: float) -> list[str]:
    """GNU Go's command line as a match's opponent: the project's rules, ``level``, the board."""
    return [binary, *gnugo_player_args(level, size, komi)]


def _start(command: list[str], size: int, komi: float, seed: int, i: int) -> GTPClient:
    """The engine of game ``i`` (GNU Go seeded), on an empty ``size`` x ``size`` board with ``komi``."""
    try:
        engine = GTPClient(command, timeout=ENGINE_TIMEOUT)
    except GTPError as e:
        raise GTPError(f"the engine of game {i + 1}: {e}") from None
    seeded = [f"set_random_seed {seed}"] if is_gnugo(command) else []  # other engines may not know it
    try:
        engine.send_many([f"boardsize {size}", "clear_board", f"komi {komi:g}", *seeded])
    except GTPError as e:
        engine.close()
        raise GTPError(f"{command[0]} for game {i + 1} did not start a {size}x{size} game: {e}") from None
    return engine


def _ask(engine: GTPClient, commands: list[str], name: str, i: int, t: int) -> str:
    """The reply to the last of ``commands`` (the network's moves, then a genmove), lower case."""
    try:
        return engine.send_many(commands)[-1].strip().lower()
    except GTPError as e:
        raise GTPError(f"{name} (game {i + 1}, move {t + 1}): {e}") from None


__all__ = ["ENDINGS", "GnuGoMatch", "GnuGoOutput"]
