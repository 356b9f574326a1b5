"""Matches between two players: colours alternating, every game saved as SGF, a results table.

    with make_player("mcts:sims=200") as a, make_player("gnugo:level=1") as b:
        match = run_match(a, b, games=10, size=9, komi=7.5, out_dir="arena/")
    print(match.table)

How a game is played and scored (the same for internal players and external GTP engines):

- the game is kept by the arena on this project's rules (``position.Position``); each move is
  checked there before the other player hears of it, so an engine that plays an illegal
  move (by these rules: positional superko, no suicide) loses the game by forfeit (``B+F``);
- a player may resign (``B+R``); internal players resign below ``resign_below`` win rate;
- an external engine that fails (stops answering within its timeout, dies, answers something
  that is not a move, refuses a legal move) loses that game by forfeit too (``B+F``, how
  ``"engine failure"``, the reason in ``GameResult.reason``, the table and the SGF's comment);
  the engine is started afresh for the next game, and the match goes on;
- when both players pass in a row and either of them can clean up (an external engine that
  knows ``kgs-genmove_cleanup``), play goes on in a cleanup phase in which such engines
  capture the stones they consider dead rather than pass; the game ends at two passes in a
  row within the cleanup phase (the passes that opened it do not count);
- the game also ends at the rules' move limit (``position.MAX_MOVES_PER_POINT`` per point);
- each pair of games (the same players, colours swapped) starts from the same ``openings``
  random legal moves (default ``DEFAULT_OPENINGS``; ``match_openings``: no two pairs share an
  opening, up to the board's symmetries), so that deterministic players do not replay one game;
  every player is reseeded with the game's number before it (``Player.reseed``);
- a time per move (``seconds``) is the time of the internal players; external engines keep
  their own settings (``gtp_player``), and the arena measures every move's time (written in
  each move's SGF comment);
- a game that ends by passes or the move limit is scored by the project's Tromp-Taylor
  scorer (area with komi), never by either engine's own count; where GNU Go is installed, its
  own count (``final_score``) is recorded beside it (``GameResult.referee``).

The table (``train.evaluation.format_table``) gives wins, draws, losses, the win rate with its
95% Wilson interval and the Elo difference, from the first player's side; ``Match.summary``
adds the distinct games (and the result over them when some repeat), both players' seconds and
simulations per move, and the games where GNU Go's count names the other winner.
``results.md`` and the ``arena`` command print both.
"""

from __future__ import annotations

import dataclasses
import pathlib
import signal
import sys
import time
from typing import Callable, Iterator, Sequence

import numpy as np

from alphago_jax import sgf
from alphago_jax.features.symmetry import action_table
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient, GTPError, find_gnugo
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import IllegalMove, Position, colour_letter, play_game
from alphago_jax.train.evaluation import MatchResult, format_table


@dataclasses.dataclass(frozen=True)
class GameResult:
    """One finished game.

    Attributes:
      index: the game's number in the match, from 1.
      black, white: the players' names.
      winner: ``BLACK``, ``WHITE``, or 0 for a draw.
      result: the SGF result (``"B+3.5"``, ``"W+R"``, ``"B+F"``, ``"0"``).
      how: ``"score"``, ``"move limit"`` (scored), ``"resignation"``, ``"illegal move"`` or
        ``"engine failure"``.
      score: the Tromp-Taylor score (black - white - komi) of the final position.
      moves: the moves played (passes included).
      sgf_path: where the record was saved, or None.
      final_board: int8[N], the board at the end.
      simulations: the search simulations black and white ran over the game (0 for players
        that do not report them, such as external engines).
      decisions: the moves black and white chose (their ``genmove`` calls).
      seconds: the seconds black and white took over those decisions (measured by the arena).
      referee: GNU Go's own count of the final position (``final_score``, e.g. ``"B+2.5"``) for
        a game ended by passes or the move limit, where GNU Go was at hand; else None.
      actions: every move of the game in order (the opening's too): two games with the same
        black player and these actions are the same game.
      move_seconds: the seconds each of those moves took its player (None for the opening's).
      reason: for an engine failure, what went wrong (the engine's error); else None.
    """

    index: int
    black: str
    white: str
    winner: int
    result: str
    how: str
    score: float
    moves: int
    sgf_path: pathlib.Path | None = None
    final_board: np.ndarray | None = dataclasses.field(default=None, repr=False, compare=False)
    simulations: tuple[int, int] = (0, 0)
    decisions: tuple[int, int] = (0, 0)
    seconds: tuple[float, float] = (0.0, 0.0)
    referee: str | None = None
    actions: tuple[int, ...] = dataclasses.field(default=(), repr=False)
    move_seconds: tuple[float | None, ...] = dataclasses.field(default=(), repr=False)
    reason: str | None = None

    @property
    def referee_differs(self) -> bool:
        """GNU Go's count names another winner than the Tromp-Taylor count that decided."""
        return self.referee is not None and sgf.winner_of(self.referee) != self.winner


def _outcome(game: GameResult, player: str) -> int:
    """+1 / 0 / -1: the game's result for ``player``."""
    return 0 if game.winner == 0 else (1 if (game.winner == BLACK) == (game.black == player) else -1)


@dataclasses.dataclass(frozen=True)
class Match:
    """A finished match: the summary from the first player's side, every game, the table."""

    result: MatchResult
    games: tuple[GameResult, ...]

    @property
    def table(self) -> str:
        return format_table([self.result])

    @property
    def distinct_games(self) -> tuple[GameResult, ...]:
        """The games less repeats: the first game of each sequence of moves with the same black."""
        seen, distinct = set(), []
        for g in self.games:
            if (g.black, g.actions) not in seen:
                seen.add((g.black, g.actions))
                distinct.append(g)
        return tuple(distinct)

    @property
    def move_sequences(self) -> int:
        """The distinct sequences of moves, whoever played them. Two equal deterministic players
        (a network against itself with other heads) play a pair's two games alike with the
        colours swapped: two games by ``distinct_games``, one sequence here."""
        return len({g.actions for g in self.games})

    @property
    def distinct_result(self) -> MatchResult:
        """The result over ``distinct_games``, each game counted once."""
        player, opponent = self.result.player, self.result.opponent
        return MatchResult.from_outcomes(player, opponent, [_outcome(g, player) for g in self.distinct_games])

    def _totals(self, name: str, per_side: Callable[[GameResult], tuple]) -> tuple[float, int]:
        """``per_side(game)`` (black's, white's) summed over the sides the player called ``name``
        took, and the moves it chose there."""
        total = moves = 0
        for g in self.games:
            for side, player in enumerate((g.black, g.white)):
                if player == name:
                    total, moves = total + per_side(g)[side], moves + g.decisions[side]
        return total, moves

    def seconds_per_move(self, name: str) -> float | None:
        """The mean seconds per move of the player called ``name`` (its ``genmove`` calls, as
        measured by the arena); None when it made no move."""
        seconds, moves = self._totals(name, lambda g: g.seconds)
        return seconds / moves if moves else None

    @property
    def summary(self) -> str:
        """Lines under the table: distinct games, seconds and simulations per move, and the
        games where GNU Go's own count differs."""
        names = (self.result.player, self.result.opponent)
        distinct = self.distinct_games
        lines = [f"Distinct games: {len(distinct)} of {len(self.games)}."]
        if len(distinct) < len(self.games):
            r = self.distinct_result
            lo, hi = r.interval()
            lines[0] = lines[0][:-1] + (f"; over the distinct games {r.player} won {r.wins} of {r.games} "
                                        f"({r.win_rate:.3f}, 95% interval [{lo:.3f}, {hi:.3f}]).")
        if self.move_sequences < len(distinct):
            n = self.move_sequences
            lines[0] = lines[0][:-1] + (f"; {n} distinct sequence{'s' if n != 1 else ''} of moves (the same "
                                        "moves with the colours swapped count once).")
        per_move = [self.seconds_per_move(name) for name in names]
        lines.append("Seconds per move: " + ", ".join(
            f"{name} {s:.2f}" if s is not None else f"{name} none" for name, s in zip(names, per_move)) + ".")
        if self.effort:
            lines.append(self.effort)
        failed = [g for g in self.games if g.how == "engine failure"]
        if failed:
            lines.append("Engine failures (forfeits): " + "; ".join(f"game {g.index} ({g.reason})" for g in failed) + ".")
        counted = [g for g in self.games if g.referee is not None]
        if counted:
            differ = [g for g in counted if g.referee_differs]
            lines.append(f"GNU Go's own count (final_score) of the {len(counted)} scored games names the same winner "
                         f"in {len(counted) - len(differ)}" + (": it differs in " + ", ".join(
                             f"game {g.index} ({g.result}, GNU Go {g.referee})" for g in differ) if differ else "")
                         + ".")
        return "\n".join(lines) + "\n"

    def simulations_per_move(self, name: str) -> float | None:
        """The mean search simulations per move of the player called ``name`` over the match;
        None when it reported none (an external engine, a policy without search)."""
        sims, moves = self._totals(name, lambda g: g.simulations)
        return sims / moves if sims else None

    @property
    def effort(self) -> str:
        """One line: each player's mean simulations per move, as reported by its search; empty
        when neither player reports any."""
        names = (self.result.player, self.result.opponent)
        per_move = [self.simulations_per_move(name) for name in names]
        if per_move == [None, None]:
            return ""
        parts = [f"{name} {n:.1f}" if n is not None else f"{name} not reported" for name, n in zip(names, per_move)]
        return "Simulations per move: " + ", ".join(parts) + "."


def play_one_game(black: Player, white: Player, size: int = 9, komi: float = 7.5, *, seconds: float | None = None,
                  resign_below: float = 0.0, cleanup: bool = True, max_moves: int | None = None,
                  names: tuple[str, str] | None = None, opening: Sequence[int] = (),
                  on_move: Callable[[Position], None] | None = None) -> tuple[Position, GameResult]:
    """Play one game from the empty board; returns the final position and the result.

    Args:
      seconds: time per move for the internal players (None: their own fixed effort); external
        engines keep their own settings.
      resign_below: internal players resign below this estimated win rate (0: never).
      cleanup: after two passes, let players that can clean up capture dead stones first.
      max_moves: the game's move limit (default ``position.play_game``'s).
      names: the names to record (default the players' names).
      opening: moves played first, alternately from black, by neither player's choice.
      on_move: called with the position after every move.
    """
    black_name, white_name = names or (black.name, white.name)
    pos = _start_game(black, white, size, komi, max_moves, seconds, opening)
    players = {BLACK: black, WHITE: white}
    cleaning = False
    how = reason = None
    winner = 0
    passes = 0  # passes in a row, counted afresh when the cleanup phase opens
    sims, decisions, spent = {BLACK: 0, WHITE: 0}, {BLACK: 0, WHITE: 0}, {BLACK: 0.0, WHITE: 0.0}
    took_each: list[float | None] = [None] * len(pos.moves)
    while True:
        if pos.at_move_limit:
            how = "move limit"
            break
        colour = pos.to_play
        mover = players[colour]
        start = time.perf_counter()
        try:
            decision = mover.genmove(colour, seconds, cleanup=cleaning, resign_below=resign_below)
        except GTPError as e:
            how, winner, reason = "engine failure", -colour, f"{mover.name}: {e}"
            break
        took = time.perf_counter() - start
        sims[colour] += decision.simulations
        decisions[colour] += 1
        spent[colour] += took
        if decision.action == RESIGN:
            how, winner = "resignation", -colour
            break
        try:
            pos.play(colour, decision.action)
        except IllegalMove:
            how, winner = "illegal move", -colour
            break
        took_each.append(took)
        try:
            players[-colour].play(colour, decision.action)
        except (GTPError, ValueError) as e:  # the rules allowed the move: the listener failed
            how, winner, reason = "engine failure", colour, f"{players[-colour].name}: {e}"
            break
        if on_move is not None:
            on_move(pos)
        passes = passes + 1 if decision.action == pos.pass_action else 0
        if passes >= 2:
            if cleanup and not cleaning and any(p.can_cleanup for p in (black, white)):
                cleaning, passes = True, 0
                continue
            how = "score"
            break
    winner, result, score = _decided(pos, how, winner)
    return pos, GameResult(0, black_name, white_name, winner, result, how, score, len(pos.moves),
                           final_board=pos.board.copy(), simulations=(sims[BLACK], sims[WHITE]),
                           decisions=(decisions[BLACK], decisions[WHITE]), seconds=(spent[BLACK], spent[WHITE]),
                           actions=tuple(a for _, a in pos.moves), move_seconds=tuple(took_each),
                           reason=reason)


def _start_game(black: Player, white: Player, size: int, komi: float, max_moves: int | None,
                seconds: float | None, opening: Sequence[int]) -> Position:
    """A new game for both players, their moves compiled, ``opening`` played: its position."""
    pos = Position(play_game(size, komi, max_moves))
    for p in (black, white):
        p.new_game(size, komi)
        p.prepare(seconds)  # compilation outside the first move's time
    for action in opening:
        colour = pos.to_play
        pos.play(colour, action)
        for p in (black, white):
            p.play(colour, action)
    return pos


def _decided(pos: Position, how: str, winner: int) -> tuple[int, str, float]:
    """The winner, SGF result and Tromp-Taylor score of a game that ended ``how``: the score
    decides after passes or at the move limit, else ``winner`` won by resignation or forfeit."""
    score = pos.score()
    if how in ("score", "move limit"):
        return (BLACK if score > 0 else WHITE if score < 0 else 0), sgf.result_string(score), score
    return winner, f"{colour_letter(winner)}+{'R' if how == 'resignation' else 'F'}", score


def _names(player_name: str, opponent_name: str) -> tuple[str, str]:
    """The two names of a match, told apart when they are equal."""
    if player_name == opponent_name:
        return f"{player_name} (1)", f"{opponent_name} (2)"
    return player_name, opponent_name


DEFAULT_OPENINGS = 2
"""Random legal moves that each pair of match games starts from, unless told otherwise."""


def random_opening(size: int, komi: float, moves: int, seed: int) -> list[int]:
    """``moves`` uniformly random legal moves from the empty board (no passes), the same for the
    same seed."""
    pos = Position(play_game(size, komi))
    rng = np.random.default_rng((size, seed))
    for _ in range(moves):
        legal = np.flatnonzero(pos.legal_mask()[: pos.num_points])
        if not len(legal):
            break
        pos.play(pos.to_play, int(rng.choice(legal)))
    return [a for _, a in pos.moves]


def _canonical(actions: Sequence[int], size: int) -> tuple[int, ...]:
    """The least of the 8 images of a move sequence under the board's symmetries."""
    images = action_table(size)[:, np.asarray(actions, np.int64)] if len(actions) else np.zeros((8, 0), np.int64)
    return min(tuple(int(a) for a in row) for row in images)


def match_openings(size: int, komi: float, moves: int) -> Iterator[list[int]]:
    """The openings of a match's pairs of games, one per pair, without end: ``random_opening``
    with seeds 0, 1, ..., each skipped when an earlier pair's opening is the same up to the
    board's symmetries (while new ones still turn up: a board with fewer distinct openings than
    pairs repeats them)."""
    seen, seed, misses = set(), 0, 0
    while True:
        opening = random_opening(size, komi, moves, seed) if moves > 0 else []
        seed += 1
        key = _canonical(opening, size)
        if key in seen and misses < 200:
            misses += 1
            continue
        seen.add(key)
        misses = 0
        yield opening


def _games(games: int, openings: Iterator[list[int]], first: int = 1) -> Iterator[tuple[int, list[int]]]:
    """``(i, opening)`` for games ``first - 1`` to ``first + games - 2`` (from 0): games ``2k`` and
    ``2k + 1`` share pair ``k``'s opening, whichever game the match starts from."""
    opening: list[int] = []
    for i in range(first - 1 + games):
        if i % 2 == 0:
            opening = next(openings)
        if i >= first - 1:
            yield i, opening


REFEREE_TIMEOUT = 120.0
"""Seconds GNU Go may take to count a game (``final_score`` reads the board first) before the
game is left without its count."""


class Referee:
    """GNU Go's own count of finished games (``final_score`` after replaying their moves), on
    this project's rules; started on first use, restarted after a failure."""

    def __init__(self, binary: str):
        self.binary = binary
        self._client: GTPClient | None = None

    def count(self, size: int, komi: float, moves: Sequence[tuple[int, int]]) -> str | None:
        """GNU Go's result for the game of ``moves`` (``"B+2.5"``, ``"W+0.5"``, ``"0"``), or None
        when GNU Go could not count it."""
        commands = [f"boardsize {size}", "clear_board", f"komi {komi:g}"]
        commands += [f"play {colour_letter(c)} {grid.to_vertex(a, size)}" for c, a in moves]
        try:
            if self._client is None:
                self._client = GTPClient([self.binary, *GNUGO_RULES_ARGS], timeout=REFEREE_TIMEOUT)
            return self._client.send_many([*commands, "final_score"])[-1].strip().upper()
        except GTPError:
            self.close()  # a failed command leaves unread replies: start afresh next time
            return None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _referee(enabled: bool) -> Referee | None:
    """A GNU Go referee when asked for and GNU Go is installed."""
    binary = find_gnugo() if enabled else None
    return Referee(binary) if binary else None


def _match_game(i: int, player: Player, opponent: Player, names: tuple[str, str], size: int, komi: float,
                out: pathlib.Path | None, opening: Sequence[int] = (), referee: Referee | None = None,
                **rules) -> GameResult:
    """Game ``i`` (from 0) of a match, from ``opening``: ``player`` is black when ``i`` is even;
    both players reseeded with ``i``; counted by ``referee`` when scored; saved as
    ``game-<i + 1>.sgf`` in ``out``, each move's seconds in its comment."""
    a_black = i % 2 == 0
    black, white = (player, opponent) if a_black else (opponent, player)
    names = names if a_black else names[::-1]
    for p in (player, opponent):  # game i plays alike in one process or many
        p.reseed(i)
    pos, game = play_one_game(black, white, size, komi, names=names, opening=opening, **rules)
    if referee is not None and game.how in ("score", "move limit"):
        game = dataclasses.replace(game, referee=referee.count(size, komi, pos.moves))
    path = None
    if out is not None:
        path = out / f"game-{i + 1:03d}.sgf"
        comments = tuple("" if t is None else f"{t:.2f} s" for t in game.move_seconds)
        record = pos.record(game.result, black_name=names[0], white_name=names[1], comments=comments)
        sgf.save(dataclasses.replace(record, comment=f"forfeit: {game.reason}" if game.reason else None), path)
    return dataclasses.replace(game, index=i + 1, sgf_path=path)


def _finish(games: list[GameResult], names: tuple[str, str], size: int, komi: float, seconds: float | None,
            out: pathlib.Path | None, planned: int | None = None) -> Match:
    """The match of the games played so far; its ``results.md`` written to ``out``. Called after
    every game with the match's ``planned`` number of games, so that a match stopped part way keeps
    its table, seconds and simulations per move; and once at the end."""
    games = sorted(games, key=lambda g: g.index)
    match = Match(MatchResult.from_outcomes(names[0], names[1], [_outcome(g, names[0]) for g in games]),
                  tuple(games))
    if out is not None:
        (out / "results.md").write_text(_report(match, size, komi, seconds, planned))
    return match


def _output_dir(out_dir) -> pathlib.Path | None:
    out = pathlib.Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    return out


def run_match(player: Player, opponent: Player, games: int, size: int = 9, komi: float = 7.5, *,
              seconds: float | None = None, resign_below: float = 0.0, cleanup: bool = True,
              max_moves: int | None = None, openings: int = DEFAULT_OPENINGS, referee: bool = True,
              out_dir=None, progress: bool = True, on_game: Callable[[GameResult], None] | None = None,
              first: int = 1) -> Match:
    """Play ``games`` games, ``player`` taking black in the odd-numbered ones (1st, 3rd, ...).

    Args:
      openings: random legal moves that each pair of games starts from (``match_openings``).
      first: the number of the first game: games ``first``, ``first + 1``, ... of a longer match,
        with its colours, openings and record names (to go on with a match that stopped).
      referee: record GNU Go's own count of each scored game, where GNU Go is installed.
      out_dir: where to save each game (``game-001.sgf`` ...) and ``results.md`` (rewritten after each
        game, so that a stopped match keeps its report so far); None: not saved.
      progress: show a progress bar (tqdm, on stderr).
      on_game: called with each finished game.
      The rest: as ``play_one_game``.
    """
    if games < 1 or first < 1:
        raise ValueError(f"games must be at least 1, and so must the first game's number: got {games} and {first}")
    names = _names(player.name, opponent.name)
    out = _output_dir(out_dir)
    rules = dict(seconds=seconds, resign_below=resign_below, cleanup=cleanup, max_moves=max_moves)
    from tqdm import tqdm

    results = []
    judge = _referee(referee)
    try:
        with tqdm(total=games, desc=f"{names[0]} vs {names[1]}", unit="game", disable=not progress,
                  file=sys.stderr) as bar:
            for i, opening in _games(games, match_openings(size, komi, openings), first):
                game = _match_game(i, player, opponent, names, size, komi, out, opening, judge, **rules)
                results.append(game)
                _finish(results, names, size, komi, seconds, out, planned=games)
                if on_game is not None:
                    on_game(game)
                wins = sum(_outcome(g, names[0]) > 0 for g in results)
                bar.set_postfix_str(f"{names[0]} {wins}/{len(results)}, last {game.result}")
                bar.update()
    finally:
        if judge is not None:
            judge.close()
    return _finish(results, names, size, komi, seconds, out)


_WORKER: dict = {}


def _die_with_parent() -> None:
    """On Linux, SIGKILL to this worker when the match's process ends, even killed (its engines,
    started through ``setpriv --pdeathsig``, follow it)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _start_worker(player_spec: str, opponent_spec: str, referee: bool, args: tuple) -> None:
    """Pool initializer: each process builds both players (and its referee) once, for all its games."""
    from alphago_jax.play.registry import make_player

    _die_with_parent()

    player, opponent = make_player(player_spec), make_player(opponent_spec)
    _WORKER.update(player=player, opponent=opponent, names=_names(player.name, opponent.name), args=args,
                   referee=_referee(referee))


def _worker_game(job: tuple[int, list[int]]) -> GameResult:
    i, opening = job
    w = _WORKER
    size, komi, out, rules = w["args"]
    return _match_game(i, w["player"], w["opponent"], w["names"], size, komi, out, opening, w["referee"], **rules)


def run_match_parallel(player_spec: str, opponent_spec: str, games: int, processes: int, size: int = 9,
                       komi: float = 7.5, *, seconds: float | None = None, resign_below: float = 0.0,
                       cleanup: bool = True, max_moves: int | None = None, openings: int = DEFAULT_OPENINGS,
                       referee: bool = True, out_dir=None, progress: bool = True,
                       on_game: Callable[[GameResult], None] | None = None, first: int = 1) -> Match:
    """``run_match`` with the games shared among ``processes`` worker processes, each holding its
    own pair of players made from the specs (``registry.make_player``). Game ``i`` is played as
    in ``run_match`` (the same colours, opening, seeds and SGF name); with a time per move, each
    process has that time per move, so the players' effort shrinks when the processes outnumber
    the cores.
    """
    if games < 1 or processes < 1 or first < 1:
        raise ValueError(f"games and processes must be at least 1, and so must the first game's number: got "
                         f"{games}, {processes} and {first}")
    import multiprocessing

    from tqdm import tqdm

    out = _output_dir(out_dir)
    rules = dict(seconds=seconds, resign_below=resign_below, cleanup=cleanup, max_moves=max_moves)
    results = []
    context = multiprocessing.get_context("spawn")  # JAX does not survive fork
    init = (player_spec, opponent_spec, referee, (size, komi, out, rules))
    with context.Pool(processes, _start_worker, init) as pool, \
            tqdm(total=games, desc="match", unit="game", disable=not progress, file=sys.stderr) as bar:
        for game in pool.imap_unordered(_worker_game, _games(games, match_openings(size, komi, openings), first)):
            results.append(game)
            _finish(results, _first_names(results[0]), size, komi, seconds, out, planned=games)
            if on_game is not None:
                on_game(game)
            bar.set_postfix_str(f"last {game.result}")
            bar.update()
    return _finish(results, _first_names(results[0]), size, komi, seconds, out)


def _first_names(game: GameResult) -> tuple[str, str]:
    """(the match's first player, its opponent), from any game: the first player is black in the
    odd-numbered games."""
    return (game.black, game.white) if game.index % 2 else (game.white, game.black)


def _report(match: Match, size: int, komi: float, seconds: float | None, planned: int | None = None) -> str:
    effort = (f"{seconds:g} s per move for the internal players" if seconds is not None
              else "each player's own fixed effort per move")
    played = len(match.games)
    so_far = ([f"Played so far: {played} of {planned} games (this report is rewritten after each game).", ""]
              if planned is not None and played < planned else [])
    lines = [f"# {match.result.player} vs {match.result.opponent}", "",
             f"{size}x{size} Go, komi {komi:g}, Tromp-Taylor scoring, {effort}; external engines at their "
             "own settings.", "", *so_far, match.table, match.summary,
             "| game | black | white | result | how | moves | s/move B | s/move W | GNU Go's count | record |",
             "|---:|---|---|---|---|---:|---:|---:|---|---|"]
    for g in match.games:
        per_move = [f"{t / n:.2f}" if n else "" for t, n in zip(g.seconds, g.decisions)]
        how = f"{g.how}: {g.reason}".replace("|", "/") if g.reason else g.how
        lines.append(f"| {g.index} | {g.black} | {g.white} | {g.result} | {how} | {g.moves} | {per_move[0]} | "
                     f"{per_move[1]} | {g.referee or ''} | {g.sgf_path.name if g.sgf_path else ''} |")
    return "\n".join(lines) + "\n"
