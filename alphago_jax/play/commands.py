"""The command-line subcommands of play: ``gtp``, ``arena``, ``play`` and ``tactics``.

``add_commands(subparsers)`` adds them to the ``alphago-jax`` parser; each sets
``run=handler``, a function ``args -> exit status``. Heavy imports wait inside the handlers,
so ``alphago-jax --help`` stays fast. A bad player name or option raises ``ValueError``, which
``alphago_jax.cli.main`` prints as a clear error.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading

DEFAULT_PLAYER = "default"
"""The player of ``gtp`` and ``play`` when none is named: the shipped networks on 9x9 and 19x19,
pure MCTS on other sizes."""

DEFAULT_OPENINGS = 2  # arena.DEFAULT_OPENINGS, written here so that parsing the command line imports no JAX
TACTICS_CATEGORIES = ("capture-to-save", "capturing-race", "ladder", "snapback", "net", "throw-in", "connect",
                      "life-and-death", "cleanup")  # tactics.CATEGORIES, likewise

PLAYER_HELP = ("a player: default (the shipped 9x9 and 19x19 networks; pure MCTS on other sizes), random, "
               "mcts[:sims=N,nodes=N,c_puct=X,seed=N], net[:net=SOURCE,sims=N,...], checkpoint:PATH[,sims=N], "
               "policy[:net=SOURCE], alphago[:dir=DIR,sims=N,lam=X], grave[:playouts=N], mcps[:playouts=N], "
               "gnugo[:level=N], katago[:visits=N,size=N] (after alphago-jax katago install), "
               "gtp:COMMAND LINE (an external engine, or just its path and arguments)")


def _colour(text: str) -> int:
    from alphago_jax.play.position import parse_colour

    try:
        return parse_colour(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _player(spec: str):
    """A player from its spec; an engine that cannot start is a clear error too."""
    from alphago_jax.gtp_client import GTPError
    from alphago_jax.play.registry import make_player

    try:
        return make_player(spec)
    except GTPError as e:
        raise ValueError(str(e)) from None


def run_gtp(args) -> int:
    """``alphago-jax gtp``: a GTP engine on stdin/stdout."""
    from alphago_jax.play.gtp import serve
    from alphago_jax.play.gtp_commands import GTPEngine

    with _player(args.player) as player:
        engine = GTPEngine(player, size=args.size, komi=args.komi, resign_threshold=args.resign,
                           move_time=args.time, name=args.name)
        return serve(engine)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


@contextlib.contextmanager
def _terminate_as_interrupt():
    """SIGTERM raises KeyboardInterrupt, as Ctrl-C does, so that a terminated match still stops
    its worker processes and engines on the way out rather than leaving them running."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread may set handlers
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_arena(args) -> int:
    """``alphago-jax arena``: a match between two players, its games saved, its table printed.
    Interrupted (Ctrl-C or SIGTERM), it stops its workers and engines and returns 130; the games
    already finished stay saved."""
    from alphago_jax.play.arena import run_match, run_match_parallel
    from alphago_jax.gtp_client import GTPError

    options = dict(seconds=args.time, resign_below=args.resign, cleanup=not args.no_cleanup, max_moves=args.max_moves,
                   openings=args.openings, referee=not args.no_referee, out_dir=args.out,
                   progress=not args.no_progress, first=args.first_game)
    with _terminate_as_interrupt(), _player(args.player) as a, _player(args.opponent) as b:  # bad specs fail here
        try:
            if args.parallel > 1:
                match = run_match_parallel(args.player, args.opponent, args.games, args.parallel, args.size,
                                           args.komi, **options)
            else:
                match = run_match(a, b, args.games, args.size, args.komi, **options)
        except GTPError as e:
            raise ValueError(f"an external engine failed: {e}") from None
        except KeyboardInterrupt:
            saved = f"; the finished games are in {args.out}" if args.out else ""
            print(f"alphago-jax arena: interrupted{saved}", file=sys.stderr)
            return 130
    print(match.table, end="")
    print(match.summary, end="")
    for g in match.games:
        print(f"game {g.index}: {g.black} (B) vs {g.white} (W): {g.result} by {g.how} after {g.moves} moves"
              + (f", {g.sgf_path}" if g.sgf_path else ""))
    return 0


def run_play(args) -> int:
    """``alphago-jax play``: a human against the engine in the terminal."""
    from alphago_jax.play.terminal import play_terminal

    with _player(args.player) as player:
        play_terminal(player, size=args.size, komi=args.komi, human=args.colour, seconds=args.time,
                      resign_below=args.resign, sgf_path=args.sgf)
    return 0


def run_tactics(args) -> int:
    """``alphago-jax tactics``: the 9x9 tactical suite (``play.tactics``) for each player, the
    table of solved positions per category printed with the players side by side."""
    from alphago_jax.play import tactics

    problems = tactics.select(tactics.load_suite(args.suite), args.category, args.position)
    if args.sgf:
        paths = tactics.write_sgfs(problems, args.sgf)
        print(f"wrote {len(paths)} SGF files to {args.sgf}", file=sys.stderr)
    columns = {}
    for i, spec in enumerate(args.players or [DEFAULT_PLAYER]):
        print(f"tactics: {spec} on {len(problems)} positions", file=sys.stderr)
        with _player(spec) as player:
            columns[spec if spec not in columns else f"{spec} #{i + 1}"] = tactics.solve(player, problems, args.time)
    print(tactics.report(columns), end="")
    return 0


def _add_tactics(subparsers) -> None:
    tactics = subparsers.add_parser(
        "tactics", help="score players on a suite of 9x9 tactical positions, per category",
        description="Ask each player for its move in every position of a 9x9 tactical suite (captures, races, "
                    "ladders, snapbacks, nets, throw-ins, connections, life and death, cleanup of dead stones) "
                    "and print the positions solved per category, players side by side, then each player's "
                    "failed positions with the move played.")
    tactics.add_argument("players", nargs="*", metavar="PLAYER",
                         help=f"{PLAYER_HELP} (default {DEFAULT_PLAYER}); several give columns")
    tactics.add_argument("--time", type=float, default=None, metavar="SECONDS",
                         help="seconds per move of the internal players (default: their own fixed effort)")
    tactics.add_argument("--suite", default=None, metavar="FILE",
                         help="a suite file in the shipped format (default alphago_jax/data/tactics_9x9.toml)")
    tactics.add_argument("--category", action="extend", nargs="+", default=[], metavar="NAME",
                         choices=TACTICS_CATEGORIES, help=f"only these categories: {', '.join(TACTICS_CATEGORIES)}")
    tactics.add_argument("--position", action="extend", nargs="+", default=[], metavar="NAME",
                         help="only the positions of these names")
    tactics.add_argument("--sgf", default=None, metavar="DIR",
                         help="also write each position to DIR as SGF (stones, player to move, right moves in "
                              "the comment and marked with triangles)")
    tactics.set_defaults(run=run_tactics)


def _game_options(p: argparse.ArgumentParser, size: int) -> None:
    p.add_argument("--size", type=int, default=size, help=f"board size, 2 to 19 (default {size})")
    p.add_argument("--komi", type=float, default=7.5, help="points given to white (default 7.5)")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS",
                   help="seconds per move of the internal players (default: their own fixed effort, e.g. "
                        "their simulations); external engines keep their own settings (gtp:...,time=S gives one a clock)")


def add_commands(subparsers) -> None:
    """Add ``gtp``, ``arena``, ``play`` and ``tactics`` to an ``argparse`` subparsers object."""
    gtp = subparsers.add_parser(
        "gtp", help="run a GTP v2 engine on stdin/stdout (for Sabaki, GoGui, match runners)",
        description="A GTP v2 engine on stdin/stdout, with live analysis in Leela Zero's lz-analyze and KataGo's "
                    "kata-analyze forms (ownership and score from a network's auxiliary heads). "
                    "Controllers set the board size, komi and clocks with GTP commands.")
    gtp.add_argument("--player", default=DEFAULT_PLAYER, help=f"{PLAYER_HELP} (default {DEFAULT_PLAYER})")
    _game_options(gtp, 19)
    gtp.add_argument("--resign", type=float, default=0.05, metavar="WINRATE",
                     help="resign below this estimated win rate, 0 never (default 0.05)")
    gtp.add_argument("--name", default="alphago-jax", help="the engine's GTP name (default alphago-jax)")
    gtp.set_defaults(run=run_gtp)

    arena = subparsers.add_parser(
        "arena", help="play a match between two players and print wins, win rate, interval and Elo",
        description="A match between two players (internal, or external GTP engines such as "
                    "'gnugo:level=10' or '/usr/games/gnugo --mode gtp --level 1', which play at their own "
                    "settings), colours alternating, pairs of games from distinct random openings, every game "
                    "saved as SGF with each move's time, scored by Tromp-Taylor area after both pass (with a "
                    "cleanup phase for engines that know kgs-genmove_cleanup), GNU Go's own count beside it.")
    arena.add_argument("player", help=PLAYER_HELP)
    arena.add_argument("opponent", help="the other player, same forms")
    arena.add_argument("--games", type=int, default=10, help="games to play (default 10)")
    _game_options(arena, 9)
    arena.add_argument("--resign", type=float, default=0.0, metavar="WINRATE",
                       help="internal players resign below this estimated win rate (default 0: never)")
    arena.add_argument("--max-moves", type=int, default=None, help="move limit per game (default 3 per point)")
    arena.add_argument("--out", default="arena", help="directory for the SGF records and results.md, rewritten after each game (default arena)")
    arena.add_argument("--no-cleanup", action="store_true", help="end at the first two passes, no cleanup phase")
    arena.add_argument("--openings", type=int, default=DEFAULT_OPENINGS, metavar="K",
                       help="each pair of games (colours swapped) starts from the same K random legal moves, no "
                            "two pairs alike, so that deterministic players do not repeat one game "
                            f"(default {DEFAULT_OPENINGS}; 0: every game from the empty board)")
    arena.add_argument("--no-referee", action="store_true",
                       help="do not record GNU Go's own count (final_score) of each scored game beside ours")
    arena.add_argument("--parallel", type=int, default=1, metavar="N",
                       help="play the games in N processes at once, each with its own players (default 1); "
                            "with --time each process has that time per move")
    arena.add_argument("--first-game", type=int, default=1, metavar="N",
                       help="number the games from N: games N, N+1, ... of a longer match, with its colours, "
                            "openings and record names, to go on with a match that stopped (default 1)")
    arena.add_argument("--no-progress", action="store_true", help="no progress bar")
    arena.set_defaults(run=run_arena)

    play = subparsers.add_parser("play", help="play against the engine in the terminal",
                                 description="Play a game against the engine in the terminal.")
    play.add_argument("--player", default=DEFAULT_PLAYER, help=f"{PLAYER_HELP} (default {DEFAULT_PLAYER})")
    _game_options(play, 9)
    play.add_argument("--colour", "--color", type=_colour, default=1,
                      help="your colour: black or white (default black)")
    play.add_argument("--resign", type=float, default=0.05, metavar="WINRATE",
                      help="the engine resigns below this estimated win rate, 0 never (default 0.05)")
    play.add_argument("--sgf", default=None, metavar="PATH", help="save the game to this SGF file")
    play.set_defaults(run=run_play)
    _add_tactics(subparsers)
