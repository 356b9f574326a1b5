"""Feature-extraction throughput: positions per second for AlphaGo's 48 planes and AlphaGo Zero's 17.

Positions come from random legal play (``--moves`` moves into each game, a mid-game board) on
``WithHistory(Go(size))`` states. Each batched extractor is jitted, compiled ahead
of time for each batch size, then timed; the table gives the median of the timed calls after a
warm-up call.

    python experiments/bench_features.py                # 19x19, batch 1 and 256 (docs/benchmarks.md)
    python experiments/bench_features.py --smoke        # 9x9, batch 4, for CI

The output is a markdown table headed by the machine and the command.
"""

from __future__ import annotations

import argparse
import functools
import pathlib
import sys
import time

import jax
import jax.numpy as jnp

from alphago_jax.features import alphago, zero
from alphago_jax.games.go import Go
from alphago_jax.games.history import WithHistory
from alphago_jax.playout import play_out

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header, timed  # noqa: E402

# name: (description, function of a batched state). ``alphago_vmap`` is the per-position
# function under ``jax.vmap``; ``alphago`` shares the ladder work list across the batch.
EXTRACTORS = {
    "alphago": ("AlphaGo, 48 planes (`alphago_planes_batch`)", alphago.alphago_planes_batch),
    "alphago_vmap": ("AlphaGo, 48 planes (`vmap(alphago_planes)`)", jax.vmap(alphago.alphago_planes)),
    "alphago_no_ladders": ("AlphaGo, 46 planes without the 2 ladder planes",
                           jax.vmap(lambda s: alphago.alphago_planes(s, ladders=False))),
    "zero": ("AlphaGo Zero, 17 planes", jax.vmap(zero.zero_planes)),
    "zero_liberties": ("AlphaGo Zero's 17 and 6 liberty planes (`inputs=liberties`)", jax.vmap(zero.liberty_planes)),
}


def positions(size: int, batch: int, moves: int, seed: int = 0):
    """``batch`` HistoryStates after ``moves`` random legal moves each (a stacked pytree)."""
    game = WithHistory(Go(size=size, max_moves=max(moves + 1, 2 * size * size)))

    play = jax.jit(lambda key: play_out(game, jax.vmap(lambda _: game.init())(jnp.arange(batch)), key, moves)[0])
    return play(jax.random.PRNGKey(seed))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="9x9, batch 4, AlphaGo and Zero planes only (CI)")
    ap.add_argument("--size", type=int, default=None, help="board side (default 19; 9 with --smoke)")
    ap.add_argument("--batches", type=int, nargs="+", default=None, help="batch sizes (default 1 256)")
    ap.add_argument("--moves", type=int, default=None, help="random moves before each position (default 150; 30 with --smoke)")
    ap.add_argument("--features", nargs="+", choices=sorted(EXTRACTORS), default=None,
                    help="extractors to time (default all; with --smoke: alphago zero zero_liberties)")
    ap.add_argument("--chunk", type=int, default=None, help="ladder reads per loop step in alphago_planes_batch")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls after the warm-up, at most")
    ap.add_argument("--max-seconds", type=float, default=20.0, help="stop timing a cell after this long")
    args = ap.parse_args(argv)
    size = args.size or (9 if args.smoke else 19)
    batches = args.batches or ([4] if args.smoke else [1, 256])
    moves = args.moves or (30 if args.smoke else 150)
    features = args.features or (["alphago", "zero", "zero_liberties"] if args.smoke else list(EXTRACTORS))
    repeats = 1 if args.smoke else args.repeats

    t_start = time.perf_counter()
    pool = positions(size, max(batches), moves)
    rows = []
    for name in features:
        desc, fn = EXTRACTORS[name]
        if name == "alphago" and args.chunk:
            fn = functools.partial(alphago.alphago_planes_batch, chunk=args.chunk)
        f = jax.jit(fn)
        for b in batches:
            x = jax.tree_util.tree_map(lambda a: a[:b], pool)
            t0 = time.perf_counter()
            compiled = f.lower(x).compile()
            compile_s = time.perf_counter() - t0
            t, n = timed(compiled, (x,), repeats, args.max_seconds)
            rows.append((desc, b, b / t, 1e3 * t, n, compile_s))
            print(f"  {name:18s} batch {b:4d}: {b / t:10.1f} pos/s ({1e3 * t:.2f} ms)", file=sys.stderr, flush=True)

    print_header("bench_features.py", argv, f"{size}x{size}, positions after {moves} random moves", t_start)
    print("| features | batch | positions/s | ms per batch | timed calls | compile s |")
    print("|---|---:|---:|---:|---:|---:|")
    for desc, b, pps, ms, n, comp in rows:
        print(f"| {desc} | {b} | {pps:,.1f} | {ms:,.2f} | {n} | {comp:.1f} |")


if __name__ == "__main__":
    main()
