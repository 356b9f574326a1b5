"""Does each tactical position's right move decide the game? GNU Go plays it out and counts.

For every position of the 9x9 tactical suite (``alphago_jax/data/tactics_9x9.toml``), GNU Go 3.8
(``--level``, the project's rules flags) is given the position, the mover's right move is played,
and GNU Go then plays both colours until two passes; its ``final_score`` at the position's komi
is the result for the mover. With ``--report`` (the text of ``alphago-jax tactics``), the move a
player chose in each position it failed is played out the same way, so the two outcomes can be
compared: a player that maximises its chance of winning has no reason to prefer a right move that
leaves the game lost (or won) as it was.

    alphago-jax tactics default --time 1 > tactics.txt
    python experiments/tactics_outcomes.py --report tactics.txt --player default
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import re
import sys

from alphago_jax import sgf
from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient, find_gnugo
from alphago_jax.play import tactics


def played_moves(report: str, player: str) -> dict[str, str]:
    """``{position name: move played}`` of ``player``'s failed positions in an ``alphago-jax
    tactics`` report (its ``failed (PLAYER)`` section, or the single ``failed`` one)."""
    moves, inside = {}, False
    for line in report.splitlines():
        if line.startswith("failed"):
            inside = line.startswith((f"failed ({player})", "failed:"))
            continue
        m = re.match(r"\s+(\S+) \[[^]]*\]: played ([^;\s]+)", line)
        if inside and m:
            moves[m.group(1)] = m.group(2)
    return moves


def play_out(binary: str, level: int, problem: tactics.Problem, move: str, max_moves: int = 160) -> float | None:
    """The final margin for the mover (points, komi included; + won) when ``move`` is played in
    ``problem`` and GNU Go at ``level`` plays both colours to two passes; None if a side
    resigned or the game reached ``max_moves``."""
    engine = GTPClient([binary, *GNUGO_RULES_ARGS, "--level", str(level)])
    try:
        engine.send_many(problem.gtp_commands())
        other = "white" if problem.colour == "black" else "black"
        engine.send(f"play {problem.colour} {move}")
        passes = 0
        for i in range(max_moves):
            vertex = engine.send(f"genmove {(other, problem.colour)[i % 2]}").lower()
            if vertex == "resign":
                return None
            passes = passes + 1 if vertex == "pass" else 0
            if passes == 2:
                score = engine.send("final_score").upper()
                winner = sgf.winner_of(score)  # "B+2.5", "W+0.5" or "0"
                return winner * problem.to_play * float(score[2:]) if winner else 0.0
        return None
    finally:
        engine.close()


def add_suite_arguments(ap: argparse.ArgumentParser, positions_help: str) -> None:
    """The suite file and position options these scripts share."""
    ap.add_argument("--suite", default=None, help="a suite file (default alphago_jax/data/tactics_9x9.toml)")
    ap.add_argument("--positions", nargs="*", help=positions_help)


def gnugo_and_problems(args: argparse.Namespace) -> tuple[str, list[tactics.Problem]]:
    """GNU Go's path and the suite's problems named by ``--positions`` (all of them without it);
    exits with a message if GNU Go is not installed or a name is not in the suite."""
    binary = find_gnugo()
    if binary is None:
        sys.exit("GNU Go is not installed (apt-get install -y gnugo)")
    try:
        return binary, tactics.select(tactics.load_suite(args.suite), names=args.positions)
    except ValueError as e:
        sys.exit(str(e))


def _task(args):
    return play_out(*args)


def _signed(x: float | None) -> str:
    return "-" if x is None else f"{x:+.1f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", help="an `alphago-jax tactics` report: also play out the moves chosen in it")
    ap.add_argument("--player", default="default", help="the report's column whose failed moves to play out")
    ap.add_argument("--level", type=int, default=10, help="GNU Go's level for the play-outs (default 10)")
    ap.add_argument("--workers", type=int, default=2, help="play-outs at once (default 2)")
    add_suite_arguments(ap, "only these positions (default: the whole suite)")
    args = ap.parse_args(argv)
    binary, problems = gnugo_and_problems(args)
    played = {}
    if args.report:
        with open(args.report) as f:
            played = {k: v for k, v in played_moves(f.read(), args.player).items() if v not in ("error", "resign")}
        if not played:
            sys.exit(f"{args.report}: no failed positions of {args.player!r}")
    tasks = [(binary, args.level, p, p.right[0]) for p in problems]
    tasks += [(binary, args.level, p, played[p.name]) for p in problems if p.name in played]
    with multiprocessing.get_context("spawn").Pool(args.workers) as pool:
        margins = pool.map(_task, tasks)
    right, chosen = dict(zip([p.name for p in problems], margins)), dict(zip(
        [p.name for p in problems if p.name in played], margins[len(problems):]))
    print(f"GNU Go level {args.level} plays each position out after the move; the mover's margin\n")
    print(f"{'category':16s} {'position':30s} {'mover':6s} {'right':>6s} {'margin':>7s}"
          + (f"  {args.player + ' played':>16s} {'margin':>7s}" if played else ""))
    counts = collections.Counter()
    for p in problems:
        r = right[p.name]
        counts["right move wins"] += r is not None and r > 0
        line = f"{p.category:16s} {p.name:30s} {p.colour:6s} {p.right[0]:>6s} {_signed(r):>7s}"
        if p.name in played:
            c = chosen[p.name]
            counts["failed"] += 1
            counts["failed, same outcome"] += r is not None and c is not None and (r > 0) == (c > 0)
            counts["failed, right wins, played loses"] += r is not None and c is not None and r > 0 >= c
            line += f"  {played[p.name]:>16s} {_signed(c):>7s}"
        print(line)
    print(f"\nthe right move wins the game: {counts['right move wins']} of {len(problems)}")
    if played:
        print(f"{args.player}'s {counts['failed']} failed positions: its move leaves the game's outcome as the "
              f"right move does in {counts['failed, same outcome']}; the right move wins and its move loses in "
              f"{counts['failed, right wins, played loses']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
