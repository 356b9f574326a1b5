"""Dead stones at the end of finished games: a player's ownership head against GNU Go's judgement.

GNU Go 3.8 (level 10) reads each record of a folder (``loadsgf``; ``--played-out``: only those
that end in two passes) and answers ``final_status_list dead`` and ``final_score``; the player
(default: the shipped network of the record's size) follows the same moves and names its dead
stones from its ownership head (``play.dead_stones``, what the GTP engine's ``final_status_list
dead`` answers). The table gives, over the games:

- the games whose two sets of dead stones are the same;
- GNU Go's dead stones the player also calls dead, and the player's that GNU Go calls alive;
- the winner by the board as it stands (Tromp-Taylor: every stone alive), and by the player's
  count with its dead stones taken off (GTP ``final_score``), each against GNU Go's count.

    python experiments/dead_stones_vs_gnugo.py                       # 200 GNU Go self-play games
    python experiments/dead_stones_vs_gnugo.py --games 50 --player checkpoint:run/network.msgpack
    python experiments/dead_stones_vs_gnugo.py --records gnugo19 --played-out --games 40
    python experiments/dead_stones_vs_gnugo.py --smoke               # 3 games, 8 simulations
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.gtp_client import GTPClient, find_gnugo, gnugo_player_args
from alphago_jax.play.dead_stones import DEAD_BELOW, dead_stones
from alphago_jax.play.position import Position, play_game
from alphago_jax.play.registry import make_player

RECORDS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "gnugo-9x9-selfplay"


def _vertices(reply: str, size: int) -> set[int]:
    return {grid.from_vertex(v, size) for v in reply.split()}


def _played_out(record: sgf.GameRecord) -> bool:
    """Whether the game ended in two passes (not a resignation): its dead stones are on the board."""
    return [a for _, a in record.moves[-2:]] == [record.size * record.size] * 2


def _winner(score: float) -> int:
    return int(np.sign(score))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=pathlib.Path, default=RECORDS, help="a folder of finished SGF games (any board size)")
    ap.add_argument("--games", type=int, default=200, help="the first N records (default 200)")
    ap.add_argument("--played-out", action="store_true",
                    help="only the records that end in two passes (resigned games left out)")
    ap.add_argument("--player", default="default", help="a player spec with an ownership head (default: shipped)")
    ap.add_argument("--threshold", type=float, default=DEAD_BELOW,
                    help=f"a chain is dead below minus this mean ownership (default {DEAD_BELOW}, the engine's)")
    ap.add_argument("--smoke", action="store_true", help="3 games, 8 simulations (CI-sized)")
    args = ap.parse_args()
    if args.smoke:
        args.games, args.player = 3, "default:sims=8"
    gnugo = find_gnugo()
    if gnugo is None:
        sys.exit("GNU Go is not installed (apt-get install -y gnugo)")
    paths = [p for p in sorted(args.records.glob("*.sgf")) if not args.played_out or _played_out(sgf.load(p))]
    paths = paths[: args.games]
    if not paths:
        sys.exit(f"{args.records}: no SGF records{' that end in two passes' if args.played_out else ''}")
    t0 = time.perf_counter()
    same = both = theirs = ours_only = tt_right = ours_right = 0
    with make_player(args.player) as player:
        for path in paths:
            record = sgf.load(path)
            size, komi = record.size, record.komi
            engine = GTPClient([gnugo, *gnugo_player_args(10, size, komi)], timeout=120)
            try:
                engine.send(f"loadsgf {path}")
                gnugo_dead = _vertices(engine.send("final_status_list dead"), size)
                gnugo_winner = sgf.winner_of(engine.send("final_score"))
            finally:
                engine.close()
            pos = Position(play_game(size, komi))
            player.new_game(size, komi)
            for colour, action in record.moves:
                pos.play(colour, action)
                player.play(colour, action)
            ownership = player.ownership()
            if ownership is None:
                sys.exit(f"player {args.player!r} has no ownership head")
            dead = dead_stones(pos.board, ownership, size, args.threshold)
            ours = set(np.flatnonzero(dead).tolist())
            same += ours == gnugo_dead
            both += len(ours & gnugo_dead)
            theirs += len(gnugo_dead)
            ours_only += len(ours - gnugo_dead)
            tt_right += _winner(pos.score()) == gnugo_winner
            ours_right += _winner(pos.score(dead)) == gnugo_winner
    n = len(paths)
    print(f"{n} games of {args.records}, player {args.player}, threshold {args.threshold:g}, GNU Go 3.8 level 10 "
          f"as referee; {time.perf_counter() - t0:.0f} s\n")
    print("| games | same dead stones | GNU Go's dead stones the player finds | the player's dead stones GNU Go calls "
          "alive | winner as GNU Go counts: the board as it stands | with the player's dead stones off |")
    print("|---|---|---|---|---|---|")
    print(f"| {n} | {same} ({same / n:.0%}) | {both} of {theirs} | {ours_only} | {tt_right} of {n} | "
          f"{ours_right} of {n} |")


if __name__ == "__main__":
    main()
