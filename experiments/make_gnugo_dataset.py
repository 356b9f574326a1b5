"""Games of GNU Go against itself as SGF files: the stand-in for a KGS archive on any machine.

Each game: a fresh board, ``0..--opening`` random legal moves (GNU Go's ``all_legal``) so that
games differ, then GNU Go plays both colours, each move at a level drawn for that colour from
``--levels`` (mixed strengths), until two passes, a resignation or ``3 * size * size`` moves (``--max-moves``: fewer, and a game
cut there has no result). The result (RE) is GNU Go's ``final_score`` under area scoring
(``--chinese-rules``), or the resignation. A game played out also records what each side owns
at the end by GNU Go's ``final_status_list`` (TB / TW: living stones, territory and the other
side's dead stones), the ownership and score heads' target in ``alphago-jax warm-start``. Games are written one file each (``game-00042.sgf``), atomically, by ``--workers``
GNU Go processes in parallel; a run that is stopped and started again skips the games already
written. Then build the position dataset:

    python experiments/make_gnugo_dataset.py --games 2000 --size 9 --out data/gnugo9
    alphago-jax dataset build data/gnugo9 --size 9 --out data/gnugo9-positions

    python experiments/make_gnugo_dataset.py --games 500 --size 19 --levels 1 4 8 --out data/gnugo19
    python experiments/make_gnugo_dataset.py --smoke --out /tmp/gnugo-smoke   # 2 tiny games (CI)
"""

from __future__ import annotations

import argparse
import atexit
import multiprocessing
import os
import pathlib
import random
import sys

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient, find_gnugo


def final_area(engine: GTPClient, size: int) -> tuple[list[int], list[int]]:
    """(black, white) flat points each side owns in GNU Go's judgement of the final position:
    its living stones and territory, and the other side's dead stones."""
    def points(command):
        return {grid.from_vertex(v, size) for v in engine.send(command).split()}

    dead = points("final_status_list dead")
    black, white = points("list_stones black"), points("list_stones white")
    return (sorted((black - dead) | (white & dead) | points("final_status_list black_territory")),
            sorted((white - dead) | (black & dead) | points("final_status_list white_territory")))


def play_game(engine: GTPClient, size: int, komi: float, levels, opening: int, rng: random.Random,
              max_moves: int | None = None):
    """One game; returns (actions, result string or None for a game cut at ``max_moves``, black
    level, white level, (black area, white area) or None where the game was not played out)."""
    engine.send_many([f"boardsize {size}", "clear_board", f"komi {komi}"])
    black_level, white_level = rng.choice(levels), rng.choice(levels)
    actions, colours, passes = [], ("black", "white"), 0
    result = None
    for _ in range(rng.randint(0, opening)):
        colour = colours[len(actions) % 2]
        vertices = [v for v in engine.send(f"all_legal {colour}").split() if v.lower() != "pass"]
        if not vertices:
            break
        vertex = rng.choice(vertices)
        engine.send(f"play {colour} {vertex}")
        actions.append(grid.from_vertex(vertex, size))
    limit = 3 * size * size if max_moves is None else min(max_moves, 3 * size * size)
    while len(actions) < limit:
        colour = colours[len(actions) % 2]
        engine.send(f"level {black_level if colour == 'black' else white_level}")
        vertex = engine.send(f"genmove {colour}").lower()
        if vertex == "resign":
            result = f"{'W' if colour == 'black' else 'B'}+R"
            break
        actions.append(grid.from_vertex(vertex, size))
        passes = passes + 1 if vertex == "pass" else 0
        if passes == 2:
            break
    area = None
    if result is None and (passes == 2 or limit == 3 * size * size):
        score = engine.send("final_score")
        result = "0" if score in ("0", "Draw") else score
        area = final_area(engine, size)
    return actions, result, black_level, white_level, area


_ENGINE: GTPClient | None = None


def _start_engine(binary: str) -> None:
    """Pool initializer: one GNU Go process per worker, for all its games."""
    global _ENGINE
    _ENGINE = GTPClient([binary, *GNUGO_RULES_ARGS])
    atexit.register(_ENGINE.close)


def one_game(task) -> int:
    """Play and write game ``i`` (skipped if its file exists); returns ``i``."""
    i, out, size, komi, levels, opening, seed, max_moves = task
    path = out / f"game-{i:05d}.sgf"
    if not path.exists():
        rng = random.Random(seed * 1_000_003 + i)
        actions, result, bl, wl, area = play_game(_ENGINE, size, komi, levels, opening, rng, max_moves)
        black_area, white_area = area or ((), ())
        record = sgf.record_from_moves(Go(size=size, komi=komi, superko=False), actions, result=result,
                                       black_name=f"GNU Go level {bl}", white_name=f"GNU Go level {wl}",
                                       black_area=black_area, white_area=white_area)
        sgf.save(record, path)  # atomic: a stopped run leaves whole games only
    return i


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="2 games on 5x5 at level 0 (CI)")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.0)
    ap.add_argument("--levels", type=int, nargs="+", default=[1, 2, 4, 6, 8, 10], help="GNU Go levels drawn per colour")
    ap.add_argument("--opening", type=int, default=4, help="at most this many random opening moves")
    ap.add_argument("--max-moves", type=int, default=None,
                    help="cut each game after this many moves, without a result (default: play it out)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="directory for the SGF files")
    args = ap.parse_args(argv)
    if args.smoke:
        args.games, args.size, args.levels, args.workers, args.komi = 2, 5, [0], 1, 0.5
    binary = find_gnugo()
    if binary is None:
        sys.exit("GNU Go is not installed (apt-get install -y gnugo)")
    Go(size=args.size)  # a size the rules support, or a clear error
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tasks = [(i, out, args.size, args.komi, tuple(args.levels), args.opening, args.seed, args.max_moves)
             for i in range(args.games)]
    from tqdm.auto import tqdm

    before = len(list(out.glob("game-*.sgf")))
    with multiprocessing.get_context("spawn").Pool(args.workers, _start_engine, (binary,)) as pool:
        list(tqdm(pool.imap_unordered(one_game, tasks), total=len(tasks), desc="games", disable=args.smoke))
    written = len(list(out.glob("game-*.sgf")))
    print(f"{written} games in {out} ({written - before} new); build positions with: "
          f"alphago-jax dataset build {out} --size {args.size} --out {out}-positions")


if __name__ == "__main__":
    main()
