"""Fast rollout policy throughput: microseconds per move (features + logits + sample), 19x19.

Positions come from random legal play (``--moves`` moves into each game, a mid-game board). Three
measures, each jitted and compiled ahead of time, the median of the timed calls after a warm-up:

- ``call``: one jitted call of ``logits + sample`` per move on a batch of positions (includes
  the Python dispatch of the call; at batch 1 that overhead dominates).
- ``scan``: ``logits + sample`` on a different batch of positions at each step of one jitted
  ``lax.scan`` (no dispatch: the cost inside a jitted rollout loop). The scanned positions
  carry a one-row superko history (the policy does not read it), so that slicing the
  positions out of the scanned stack costs little.
- ``scan+step``: a jitted ``lax.scan`` that samples a move with the rollout policy and plays it
  with the rules (``Go.step``, positional superko), i.e. one move of a rollout.

Times are per move per game: the call's time divided by the batch (and by the scan length).

    python experiments/bench_rollout.py            # 19x19, batch 1 and 256 (docs/benchmarks.md)
    python experiments/bench_rollout.py --smoke    # 9x9, batch 4, for CI

The output is a markdown table headed by the machine and the command.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp

from alphago_jax.games.go import Go
from alphago_jax.nets.rollout import RolloutPolicy
from alphago_jax.playout import play_out

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header, timed  # noqa: E402


def positions(game: Go, count: int, moves: int, seed: int = 0):
    """``count`` GoStates after ``moves`` random legal moves each (a stacked pytree)."""

    play = jax.jit(lambda key: play_out(game, jax.vmap(lambda _: game.init())(jnp.arange(count)), key, moves)[0])
    return play(jax.random.PRNGKey(seed))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="9x9, batch 4, short scans (CI)")
    ap.add_argument("--size", type=int, default=None, help="board side (default 19; 9 with --smoke)")
    ap.add_argument("--batches", type=int, nargs="+", default=None, help="batch sizes (default 1 256)")
    ap.add_argument("--moves", type=int, default=None, help="random moves before each position (default 150; 20 with --smoke)")
    ap.add_argument("--pool", type=int, default=None, help="positions in the pool (default 2048; 16 with --smoke)")
    ap.add_argument("--steps", type=int, default=None, help="scan length of the scan+step measure (default 64; 4 with --smoke)")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls after the warm-up, at most")
    ap.add_argument("--max-seconds", type=float, default=20.0, help="stop timing a cell after this long")
    args = ap.parse_args(argv)
    size = args.size or (9 if args.smoke else 19)
    batches = args.batches or ([4] if args.smoke else [1, 256])
    moves = args.moves or (20 if args.smoke else 150)
    pool_size = max(args.pool or (16 if args.smoke else 2048), max(batches))
    steps = args.steps or (4 if args.smoke else 64)
    repeats = 1 if args.smoke else args.repeats

    t_start = time.perf_counter()
    game = Go(size=size)
    policy = RolloutPolicy(size=size)
    params = policy.init(jax.random.PRNGKey(1), scale=1.0)
    pool = positions(game, pool_size, moves)
    key = jax.random.PRNGKey(2)

    def act(params, states, keys):
        return jax.vmap(policy.sample, in_axes=(None, 0, 0))(params, states, keys)

    def scan_policy(params, states, key):  # states [T, B, ...]
        def body(total, xs):
            s, k = xs
            a = act(params, s, jax.random.split(k, s.board.shape[0]))
            return total + jnp.sum(a), None

        t = states.board.shape[0]
        return jax.lax.scan(body, jnp.int32(0), (states, jax.random.split(key, t)))[0]

    def scan_step(params, states, key):  # states [B, ...]
        def body(s, k):
            a = act(params, s, jax.random.split(k, s.board.shape[0]))
            return jax.vmap(game.step)(s, a), None

        return jax.lax.scan(body, states, jax.random.split(key, steps))[0].board

    rows = []
    for b in batches:
        t_len = max(1, pool_size // b)
        flat = jax.tree_util.tree_map(lambda x: x[:b], pool)
        slim = pool.replace(history=pool.history[:, :1], bloom=pool.bloom[:, :1])
        stacked = jax.tree_util.tree_map(lambda x: x[:t_len * b].reshape((t_len, b) + x.shape[1:]), slim)
        keys = jax.random.split(key, b)
        cells = [
            ("call", jax.jit(act), (params, flat, keys), b),
            ("scan", jax.jit(scan_policy), (params, stacked, key), b * t_len),
            ("scan+step", jax.jit(scan_step), (params, flat, key), b * steps),
        ]
        for name, fn, fargs, moves_per_call in cells:
            t0 = time.perf_counter()
            compiled = fn.lower(*fargs).compile()
            compile_s = time.perf_counter() - t0
            t, n = timed(compiled, fargs, repeats, args.max_seconds)
            us = 1e6 * t / moves_per_call
            rows.append((name, b, us, 1e6 / us, n, compile_s))
            print(f"  {name:10s} batch {b:4d}: {us:9.2f} us/move ({1e6 / us:,.0f} moves/s)", file=sys.stderr, flush=True)

    print_header("bench_rollout.py", argv, f"{size}x{size}, positions after {moves} random moves", t_start)
    print("| measure | batch | µs per move per game | moves/s | timed calls | compile s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, b, us, mps, n, comp in rows:
        print(f"| {name} | {b} | {us:,.2f} | {mps:,.0f} | {n} | {comp:.1f} |")


if __name__ == "__main__":
    main()
