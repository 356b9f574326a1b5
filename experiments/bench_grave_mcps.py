"""Playouts per second of UCT, GRAVE and MCPS (``search.grave.GraveSearch``) per game and batch.

One jitted searched move (``search(None, states, key)``: tree, playouts, move choice, the move
played) from the empty board, ``--playouts`` playouts per game, for a batch of B games. The
rate is B x playouts over the best time of ``--rounds`` calls, the variants taking turns
(compilation and the first call timed apart). MCPS is timed twice: as used (a window of
``min(W, tree capacity)`` slots, the same statistics for a search of fewer than W playouts)
and with all W = 10,000 slots stored (the cost of the paper's window). ``MCPS / GRAVE`` is GRAVE's rate over MCPS's: the time a playout
costs with MCPS's bitset work, relative to GRAVE's. In Go GRAVE is also timed with its random
playouts under simple ko (``GraveConfig.playout_superko=False``); ``simple ko / superko`` is that
rate over GRAVE's.

    python experiments/bench_grave_mcps.py                  # 4 games, 7x7, batch 1 and 256
    python experiments/bench_grave_mcps.py --smoke          # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp

from alphago_jax import games
from alphago_jax.search import amaf
from alphago_jax.search.grave import GraveConfig, GraveSearch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402

VARIANTS = [  # (column, algorithm, trim_window, playout_superko)
    ("UCT", "uct", True, True),
    ("GRAVE", "grave", True, True),
    ("MCPS", "mcps", True, True),
    ("MCPS, W = 10,000 slots", "mcps", False, True),
    ("GRAVE, simple-ko playouts", "grave", True, False),  # Go only: the other games have no superko
]


def make_game(name: str, size: int):
    return games.make(name, size=size, komi=7.5) if name == "go" else games.make(name, size=size)


def race(game, batch: int, playouts: int, rounds: int):
    """{column: playouts per second} and the longest compile-and-first-call seconds (no
    simple-ko column for a game without superko).

    The variants are timed in turn, ``rounds`` times, and each keeps its best time: on a shared
    machine the best of interleaved rounds is the least disturbed by other work."""
    states = jax.vmap(lambda _: game.init())(jnp.arange(batch))
    args = (None, states, jax.random.PRNGKey(0))
    searches, compiles = {}, []
    for column, algorithm, trim, superko in VARIANTS:
        if not superko and amaf.simple_ko_rules(game) is game:  # no superko to drop
            continue
        searches[column] = GraveSearch(game, GraveConfig(algorithm=algorithm, playouts=playouts, trim_window=trim,
                                                         playout_superko=superko))
        t0 = time.perf_counter()
        jax.block_until_ready(searches[column](*args))
        compiles.append(time.perf_counter() - t0)
    best = {column: float("inf") for column in searches}
    for _ in range(rounds):
        for column, search in searches.items():
            t0 = time.perf_counter()
            jax.block_until_ready(search(*args))
            best[column] = min(best[column], time.perf_counter() - t0)
    return {column: batch * playouts / t for column, t in best.items()}, max(compiles)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=["nogo", "atari_go", "hex", "go"])
    p.add_argument("--size", type=int, default=7)
    p.add_argument("--batches", nargs="+", type=int, default=[1, 256])
    p.add_argument("--playouts", type=int, default=100, help="playouts per move per game")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds (each variant once per round)")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.games, args.size, args.batches, args.playouts, args.rounds = ["nogo"], 5, [2], 16, 1
    t_start = time.perf_counter()
    header = ["game", "batch"] + [f"{name} playouts/s" for name, *_ in VARIANTS] + \
        ["MCPS / GRAVE", "MCPS W = 10,000 / GRAVE", "simple ko / superko", "compile s (max)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for name in args.games:
        game = make_game(name, args.size)
        for batch in args.batches:
            rates, compile_s = race(game, batch, args.playouts, args.rounds)
            cells = [f"{name} {args.size}x{args.size}", str(batch)] + \
                [f"{rates[c]:,.0f}" if c in rates else "-" for c, *_ in VARIANTS]
            full, simple = rates["MCPS, W = 10,000 slots"], rates.get("GRAVE, simple-ko playouts")
            cells += [f"{rates['GRAVE'] / rates['MCPS']:.2f}", f"{rates['GRAVE'] / full:.2f}",
                      f"{simple / rates['GRAVE']:.2f}" if simple else "-", f"{compile_s:.0f}"]
            lines.append("| " + " | ".join(cells) + " |")
            print(lines[-1], file=sys.stderr, flush=True)  # progress
    print()
    print_header("bench_grave_mcps.py", argv, f"{args.playouts} playouts per move per game, from the empty board",
                 t_start)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
