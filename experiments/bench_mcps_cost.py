"""Where MCPS's time goes: its bitset work against the deeper trees its selection grows.

At equal time MCPS runs fewer playouts than GRAVE (docs/mcps.md, "Equal time"). This
separates the causes, on one game from the empty board, a batch of B trees of ``--capacity``
nodes searched in chunks of ``--chunk`` playouts as a timed search does:

- GRAVE, MCPS, and MCPS without freezing (``rho`` above the playouts: the window is written
  after every playout as in MCPS, no node is ever frozen, so selection has no permutation
  statistics): playouts/s, their ratio to GRAVE's, and the trees' shape (the deepest node and
  the mean node depth, averaged over the games). Each chunk keeps its best time over
  ``--rounds`` interleaved rounds: on a shared machine, the least disturbed.
- The bitset work alone, each piece timed by itself in a jitted loop: one freezing step
  (a node in ``ceil(B / 8)`` games, every move code over a window of ``min(W, capacity)``
  slots; the search does one only when some game has a node to freeze) and one window write
  (B games), against the time of one playout step of the MCPS search (B playouts).

    python experiments/bench_mcps_cost.py                 # NoGo 5x5, B = 200, 2,000 playouts
    python experiments/bench_mcps_cost.py --smoke         # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.search import mcps
from alphago_jax.search.grave import GraveConfig, GraveSearch, freezing_games

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from bench_grave_mcps import make_game  # noqa: E402
from benchlib import print_header, timed  # noqa: E402


def variants(playouts: int, capacity: int) -> dict[str, GraveConfig]:
    common = dict(playouts=1, tree_capacity=capacity)  # ``simulate`` is given the chunk size
    return {
        "GRAVE": GraveConfig(algorithm="grave", **common),
        "MCPS": GraveConfig(algorithm="mcps", **common),
        "MCPS, no node frozen": GraveConfig(algorithm="mcps", rho=playouts + 1, **common),
    }


def search_race(game, batch: int, playouts: int, chunk: int, capacity: int, rounds: int):
    """{variant: (seconds, mean deepest node, mean node depth)}, seconds the sum over chunks of
    each chunk's best time over the rounds."""
    states = jax.vmap(lambda _: game.init())(jnp.arange(batch))
    searches = {name: GraveSearch(game, cfg) for name, cfg in variants(playouts, capacity).items()}
    chunks = playouts // chunk

    def run(search):
        tree = jax.block_until_ready(search.init(states))
        times = []
        for i in range(chunks):
            t0 = time.perf_counter()
            tree = jax.block_until_ready(search.simulate(None, tree, jax.random.PRNGKey(i), chunk))
            times.append(time.perf_counter() - t0)
        used = np.arange(tree.capacity)[None] < np.asarray(tree.num_nodes)[:, None]
        return np.array(times), float(np.mean(tree.max_depth())), float(np.asarray(tree.depth)[used].mean())

    best, shape = {}, {}
    for search in searches.values():
        run(search)  # compile
    for _ in range(rounds):
        for name, search in searches.items():
            times, deepest, mean_depth = run(search)
            best[name] = np.minimum(best.get(name, times), times)
            shape[name] = (deepest, mean_depth)  # the same every round: the keys are fixed
    return {name: (float(best[name].sum()),) + shape[name] for name in searches}


def bitset_costs(num_codes: int, batch: int, slots: int, record: int, steps: int = 100):
    """Seconds of one freezing step and of one window write, each the mean over ``steps`` of
    them in a jitted loop (so without a call's dispatch overhead; the freezing step's path
    changes each time, so that the compiler cannot hoist it out of the loop)."""
    k = freezing_games(batch)
    words = mcps.num_words(slots)
    rng = np.random.default_rng(0)

    def window(n):
        words_of = lambda *shape: jnp.asarray(rng.integers(0, 2**32, shape + (words,), dtype=np.uint32))  # noqa: E731
        return mcps.PlayoutWindow(bits=words_of(n, num_codes), black_wins=words_of(n), white_wins=words_of(n),
                                  filled=words_of(n), next_slot=jnp.zeros((n,), jnp.int32), size=slots)

    def freezes(win, codes):
        def body(i, total):
            n, w = jax.vmap(mcps.freeze)(win, jnp.roll(codes, i, axis=1), jnp.full((k,), record // 2))
            return total + jnp.sum(n) + jnp.sum(w)
        return jax.lax.fori_loop(0, steps, body, jnp.float32(0))

    def writes(win, present):
        score = jnp.full((batch,), 0.5)
        return jax.lax.fori_loop(0, steps, lambda i, w: jax.vmap(mcps.window_add)(w, present, score), win)

    codes = jnp.asarray(rng.integers(0, num_codes, (k, record)), jnp.int32)
    present = jnp.asarray(rng.random((batch, num_codes)) < 0.5)
    freeze_s, _ = timed(jax.jit(freezes), (window(k), codes), 5, 10.0)
    add_s, _ = timed(jax.jit(writes), (window(batch), present), 5, 10.0)
    return k, freeze_s / steps, add_s / steps


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", default="nogo")
    p.add_argument("--size", type=int, default=5)
    p.add_argument("--batch", type=int, default=200)
    p.add_argument("--playouts", type=int, default=2000, help="playouts per game")
    p.add_argument("--chunk", type=int, default=50, help="playouts per jitted call, as a timed search")
    p.add_argument("--capacity", type=int, default=4001, help="tree nodes (a timed search's --max-playouts + 1)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.batch, args.playouts, args.chunk, args.capacity, args.rounds = 2, 40, 20, 41, 1
    if args.playouts % args.chunk or args.capacity < args.playouts + 1:
        p.error("--playouts must be a multiple of --chunk, and --capacity at least --playouts + 1")
    t_start = time.perf_counter()
    game = make_game(args.game, args.size)
    results = search_race(game, args.batch, args.playouts, args.chunk, args.capacity, args.rounds)
    grave_s = results["GRAVE"][0]
    lines = ["| search | playouts/s | time / GRAVE's | deepest node | mean node depth |",
             "|---|---:|---:|---:|---:|"]
    for name, (seconds, deepest, mean_depth) in results.items():
        rate = args.batch * args.playouts / seconds
        lines.append(f"| {name} | {rate:,.0f} | {seconds / grave_s:.3f} | {deepest:.1f} | {mean_depth:.2f} |")
    step_s = results["MCPS"][0] / args.playouts  # one playout per game of the batch
    slots = min(GraveConfig().window, args.capacity)
    k, freeze_s, add_s = bitset_costs(game.num_move_codes, args.batch, slots, game.num_actions)
    lines += ["", "| bitset work, timed alone | ms each | share of an MCPS playout step |", "|---|---:|---:|",
              f"| freezing a node in {k} of the {args.batch} games ({game.num_move_codes} codes, {slots:,} slots) "
              f"| {freeze_s * 1e3:.3f} | {freeze_s / step_s:.1%} |",
              f"| writing {args.batch} playouts to the windows | {add_s * 1e3:.3f} | {add_s / step_s:.1%} |",
              f"| (one MCPS playout step, {args.batch} playouts) | {step_s * 1e3:.3f} | 100% |"]
    print()
    print_header("bench_mcps_cost.py", argv, f"{args.game} {args.size}x{args.size}, batch {args.batch}, "
                 f"{args.playouts} playouts in chunks of {args.chunk}, {args.capacity} nodes", t_start)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
