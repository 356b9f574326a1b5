"""Matches between two players: colours alternating, every game saved as SGF, a results table.

    with make_player("mcts:sims=200") as a, make_player("gtp:/usr/games/gnugo --mode gtp --level 1") as b:
        match = run_match(a, b, games=10, size=9, komi=7.5, out_dir="arena/")
    print(match.table)

How a game is played and scored (the same for internal players and external GTP engines):

- the game is kept by the arena on this project's rules (``position.Position``); each move is
  checked there before the other player hears of it, so an engine that plays an illegal
  move (by these rules: positional superko, no suicide) loses the game by forfeit (``B+F``);
- a player may resign (``B+R``); internal players resign below ``resign_below`` win rate;
- when both players pass in a row and either of them can clean up (an external engine that
  knows ``kgs-genmove_cleanup``), play goes on in a cleanup phase in which such engines
  capture the stones they consider dead rather than pass; the game ends at the next two
  passes in a row;
- the game also ends at the rules' move limit (``position.MAX_MOVES_PER_POINT`` per point);
- with ``openings = k``, each pair of games (the same players, colours swapped) starts from
  the same k random legal moves (``random_opening``), so that players whose fixed-effort search
  is deterministic do not replay one game over and over;
- a game that ends by passes or the move limit is scored by the project's Tromp-Taylor
  scorer (area with komi), never by either engine's own count.

The table (``train.evaluation.format_table``) gives wins, draws, losses, the win rate with its
95% Wilson interval and the Elo difference, from the first player's side.
``Match.effort`` states each player's mean search simulations per move, which a time per move
leaves to the machine and its load; ``results.md`` and the ``arena`` command print it.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys
from typing import Callable, Sequence

import numpy as np

from alphago_jax import sgf
from alphago_jax.games.base import BLACK, WHITE
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
      how: ``"score"``, ``"move limit"`` (scored), ``"resignation"`` or ``"illegal move"``.
      score: the Tromp-Taylor score (black - white - komi) of the final position.
      moves: the moves played (passes included).
      sgf_path: where the record was saved, or None.
      final_board: int8[N], the board at the end.
      simulations: the search simulations black and white ran over the game (0 for players
        that do not report them, such as external engines).
      decisions: the moves black and white chose (their ``genmove`` calls).
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


@dataclasses.dataclass(frozen=True)
class Match:
    """A finished match: the summary from the first player's side, every game, the table."""

    result: MatchResult
    games: tuple[GameResult, ...]

    @property
    def table(self) -> str:
        return format_table([self.result])

    def simulations_per_move(self, name: str) -> float | None:
        """The mean search simulations per move of the player called ``name`` over the match;
        None when it reported none (an external engine, a policy without search)."""
        sims = moves = 0
        for g in self.games:
            for side, player in enumerate((g.black, g.white)):
                if player == name:
                    sims, moves = sims + g.simulations[side], moves + g.decisions[side]
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
      seconds: time per move for both players (None: their own fixed effort).
      resign_below: internal players resign below this estimated win rate (0: never).
      cleanup: after two passes, let players that can clean up capture dead stones first.
      max_moves: the game's move limit (default ``position.play_game``'s).
      names: the names to record (default the players' names).
      opening: moves played first, alternately from black, by neither player's choice.
      on_move: called with the position after every move.
    """
    pos = Position(play_game(size, komi, max_moves))
    black_name, white_name = names or (black.name, white.name)
    for p in (black, white):
        p.new_game(size, komi)
        p.prepare(seconds)  # compilation outside the first move's time
    players = {BLACK: black, WHITE: white}
    for action in opening:
        colour = pos.to_play
        pos.play(colour, action)
        for p in (black, white):
            p.play(colour, action)
    cleaning = False
    how = None
    winner = 0
    sims, decisions = {BLACK: 0, WHITE: 0}, {BLACK: 0, WHITE: 0}
    while True:
        if pos.at_move_limit:
            how = "move limit"
            break
        colour = pos.to_play
        mover = players[colour]
        decision = mover.genmove(colour, seconds, cleanup=cleaning, resign_below=resign_below)
        sims[colour] += decision.simulations
        decisions[colour] += 1
        if decision.action == RESIGN:
            how, winner = "resignation", -colour
            break
        try:
            pos.play(colour, decision.action)
        except IllegalMove:
            how, winner = "illegal move", -colour
            break
        players[-colour].play(colour, decision.action)
        if on_move is not None:
            on_move(pos)
        if pos.consecutive_passes >= 2:
            if cleanup and not cleaning and any(p.can_cleanup for p in (black, white)):
                cleaning = True
                continue
            how = "score"
            break
    score = pos.score()
    if how in ("score", "move limit"):
        winner = BLACK if score > 0 else WHITE if score < 0 else 0
        result = sgf.result_string(score)
    else:
        result = f"{colour_letter(winner)}+{'R' if how == 'resignation' else 'F'}"
    return pos, GameResult(0, black_name, white_name, winner, result, how, score, len(pos.moves),
                           final_board=pos.board.copy(), simulations=(sims[BLACK], sims[WHITE]),
                           decisions=(decisions[BLACK], decisions[WHITE]))


def _names(player_name: str, opponent_name: str) -> tuple[str, str]:
    """The two names of a match, told apart when they are equal."""
    if player_name == opponent_name:
        return f"{player_name} (1)", f"{opponent_name} (2)"
    return player_name, opponent_name


def random_opening(size: int, komi: float, moves: int, seed: int) -> list[int]:
    """``moves`` uniformly random legal moves from the empty board (no passes), the same for the
    same seed: the opening of a pair of match games."""
    pos = Position(play_game(size, komi))
    rng = np.random.default_rng((size, seed))
    for _ in range(moves):
        legal = np.flatnonzero(pos.legal_mask()[: pos.num_points])
        if not len(legal):
            break
        pos.play(pos.to_play, int(rng.choice(legal)))
    return [a for _, a in pos.moves]


def _match_game(i: int, player: Player, opponent: Player, names: tuple[str, str], size: int, komi: float,
                out: pathlib.Path | None, openings: int = 0, **rules) -> GameResult:
    """Game ``i`` (from 0) of a match: ``player`` is black when ``i`` is even; saved as
    ``game-<i + 1>.sgf`` in ``out``. Games ``2k`` and ``2k + 1`` start from the same
    ``openings`` random moves."""
    a_black = i % 2 == 0
    black, white = (player, opponent) if a_black else (opponent, player)
    names = names if a_black else names[::-1]
    opening = random_opening(size, komi, openings, i // 2) if openings else ()
    pos, game = play_one_game(black, white, size, komi, names=names, opening=opening, **rules)
    path = None
    if out is not None:
        path = out / f"game-{i + 1:03d}.sgf"
        sgf.save(pos.record(game.result, black_name=names[0], white_name=names[1]), path)
    return dataclasses.replace(game, index=i + 1, sgf_path=path)


def _finish(games: list[GameResult], names: tuple[str, str], size: int, komi: float, seconds: float | None,
            out: pathlib.Path | None) -> Match:
    games = sorted(games, key=lambda g: g.index)
    outcomes = [0 if g.winner == 0 else (1 if (g.winner == BLACK) == (g.black == names[0]) else -1) for g in games]
    match = Match(MatchResult.from_outcomes(names[0], names[1], outcomes), tuple(games))
    if out is not None:
        (out / "results.md").write_text(_report(match, size, komi, seconds))
    return match


def _output_dir(out_dir) -> pathlib.Path | None:
    out = pathlib.Path(out_dir) if out_dir is not None else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    return out


def run_match(player: Player, opponent: Player, games: int, size: int = 9, komi: float = 7.5, *,
              seconds: float | None = None, resign_below: float = 0.0, cleanup: bool = True,
              max_moves: int | None = None, openings: int = 0, out_dir=None, progress: bool = True,
              on_game: Callable[[GameResult], None] | None = None) -> Match:
    """Play ``games`` games, ``player`` taking black in the odd-numbered ones (1st, 3rd, ...).

    Args:
      out_dir: where to save each game (``game-001.sgf`` ...) and ``results.md``; None: not saved.
      progress: show a progress bar (tqdm, on stderr).
      on_game: called with each finished game.
      openings: random legal moves that each pair of games starts from (``random_opening``).
      The rest: as ``play_one_game``.
    """
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    names = _names(player.name, opponent.name)
    out = _output_dir(out_dir)
    rules = dict(seconds=seconds, resign_below=resign_below, cleanup=cleanup, max_moves=max_moves, openings=openings)
    from tqdm import tqdm

    results = []
    with tqdm(total=games, desc=f"{names[0]} vs {names[1]}", unit="game", disable=not progress, file=sys.stderr) as bar:
        for i in range(games):
            game = _match_game(i, player, opponent, names, size, komi, out, **rules)
            results.append(game)
            if on_game is not None:
                on_game(game)
            wins = sum(g.winner != 0 and (g.winner == BLACK) == (g.black == names[0]) for g in results)
            bar.set_postfix_str(f"{names[0]} {wins}/{len(results)}, last {game.result}")
            bar.update()
    return _finish(results, names, size, komi, seconds, out)


_WORKER: dict = {}


def _start_worker(player_spec: str, opponent_spec: str, args: tuple) -> None:
    """Pool initializer: each process builds both players once, for all its games."""
    from alphago_jax.play.registry import make_player

    player, opponent = make_player(player_spec), make_player(opponent_spec)
    _WORKER.update(player=player, opponent=opponent, names=_names(player.name, opponent.name), args=args)


def _worker_game(i: int) -> GameResult:
    w = _WORKER
    size, komi, out, rules = w["args"]
    for player in (w["player"], w["opponent"]):  # each game its own random stream, whichever process
        player.reseed(i)
    return _match_game(i, w["player"], w["opponent"], w["names"], size, komi, out, **rules)


def run_match_parallel(player_spec: str, opponent_spec: str, games: int, processes: int, size: int = 9,
                       komi: float = 7.5, *, seconds: float | None = None, resign_below: float = 0.0,
                       cleanup: bool = True, max_moves: int | None = None, openings: int = 0, out_dir=None,
                       progress: bool = True, on_game: Callable[[GameResult], None] | None = None) -> Match:
    """``run_match`` with the games shared among ``processes`` worker processes, each holding its
    own pair of players made from the specs (``registry.make_player``). Game ``i`` is played as
    in ``run_match`` (the same colours, the same SGF name), both players reseeded with ``i``
    (``Player.reseed``) so that the processes do not repeat each other; with a time per move, each process
    has that time per move, so the players' effort shrinks when the processes outnumber the cores.
    """
    if games < 1 or processes < 1:
        raise ValueError(f"games and processes must be at least 1, got {games} and {processes}")
    import multiprocessing

    from tqdm import tqdm

    out = _output_dir(out_dir)
    rules = dict(seconds=seconds, resign_below=resign_below, cleanup=cleanup, max_moves=max_moves, openings=openings)
    results = []
    context = multiprocessing.get_context("spawn")  # JAX does not survive fork
    with context.Pool(processes, _start_worker, (player_spec, opponent_spec, (size, komi, out, rules))) as pool, \
            tqdm(total=games, desc="match", unit="game", disable=not progress, file=sys.stderr) as bar:
        for game in pool.imap_unordered(_worker_game, range(games)):
            results.append(game)
            if on_game is not None:
                on_game(game)
            bar.set_postfix_str(f"last {game.result}")
            bar.update()
    names = (results[0].black, results[0].white) if results[0].index % 2 else (results[0].white, results[0].black)
    return _finish(results, names, size, komi, seconds, out)


def _report(match: Match, size: int, komi: float, seconds: float | None) -> str:
    effort = f"{seconds:g} s per move" if seconds is not None else "each player's own fixed effort per move"
    lines = [f"# {match.result.player} vs {match.result.opponent}", "",
             f"{size}x{size} Go, komi {komi:g}, Tromp-Taylor scoring, {effort}. {match.effort}".rstrip(), "",
             match.table,
             "| game | black | white | result | how | moves | record |", "|---:|---|---|---|---|---:|---|"]
    for g in match.games:
        lines.append(f"| {g.index} | {g.black} | {g.white} | {g.result} | {g.how} | {g.moves} | "
                     f"{g.sgf_path.name if g.sgf_path else ''} |")
    return "\n".join(lines) + "\n"
