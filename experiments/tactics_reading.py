"""Are each tactical position's right moves exactly the moves GNU Go's reading finds?

For every position of the 9x9 tactical suite (``alphago_jax/data/tactics_9x9.toml``) that names
a ``target`` (a stone of the string at stake), each legal move of the mover is played on GNU Go
3.8 and its reading is asked about the target's string: for the opponent's string, whether it can
still be defended (``defend``); for the mover's own, whether it can still be attacked
(``attack``). In the life-and-death category the owl reading answers instead (``owl_defend``,
``owl_attack``), as there the question is a group's life. The moves after which the opponent's
string is lost, or the mover's string safe, should be the suite's right moves, no more and no
fewer.

    python experiments/tactics_reading.py                      # every position with a target
    python experiments/tactics_reading.py --positions net-head ladder-block
"""

from __future__ import annotations

import argparse
import sys

from alphago_jax.games import grid
from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient, GTPError
from alphago_jax.play import tactics
from tactics_outcomes import add_suite_arguments, gnugo_and_problems  # this directory's sibling


def _settled(engine: GTPClient, problem: tactics.Problem) -> bool:
    """Whether, with the opponent to move, GNU Go's reading finds the target's string lost (the
    opponent's string) or safe (the mover's)."""
    colour = engine.send(f"color {problem.target}")
    if colour == "empty":  # the move captured it (only the opponent's string can be)
        return True
    mine = colour == problem.colour
    verb = ("attack" if mine else "defend") if problem.category != "life-and-death" else (
        "owl_attack" if mine else "owl_defend")
    return engine.send(f"{verb} {problem.target}").split()[0] == "0"


def reading_moves(engine: GTPClient, problem: tactics.Problem) -> list[str]:
    """The mover's moves, in board order, after which GNU Go's reading settles the target's string
    (``_settled``). ``engine``: a GNU Go client; the position is set up on it here."""
    engine.send_many(problem.gtp_commands())
    moves = []
    for point in range(tactics.SIZE * tactics.SIZE):
        vertex = grid.to_vertex(point, tactics.SIZE)
        try:
            engine.send(f"play {problem.colour} {vertex}")
        except GTPError:  # occupied, suicide or ko
            continue
        try:
            if _settled(engine, problem):
                moves.append(vertex)
        finally:
            engine.send("undo")
    return moves


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_suite_arguments(ap, "only these positions (default: all with a target)")
    binary, problems = gnugo_and_problems(ap.parse_args(argv))
    problems = [p for p in problems if p.target]
    if not problems:
        sys.exit("no position with a target among those asked for")
    print("GNU Go's reading after each move of the mover: the moves that settle the target's string\n")
    print(f"{'category':16s} {'position':30s} {'target':>6s}  {'GNU Go':18s} {'right':18s}")
    differ = 0
    with GTPClient([binary, *GNUGO_RULES_ARGS, "--level", "10"]) as engine:
        for p in problems:
            found = reading_moves(engine, p)
            same = set(found) == set(p.right)
            differ += not same
            print(f"{p.category:16s} {p.name:30s} {p.target:>6s}  {' '.join(found) or '-':18s} "
                  f"{' '.join(p.right):18s}{'' if same else '  DIFFERS'}")
    print(f"\nthe same moves in {len(problems) - differ} of {len(problems)} positions")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
