"""AlphaGo Zero throughput: self-play positions per second and training steps per second.

The main job's own jitted programs (``train.zero.build``) for a preset, with optional
``--set NAME=VALUE`` overrides: one self-play iteration (``selfplay_batch`` games advanced
``selfplay_moves`` searched moves, ``num_simulations`` simulations each) timed after a warm-up
call, and training steps on batches of ``train_batch`` sampled from the replay buffer it filled
(8-fold random symmetry augmentation included). Also the peak resident memory of the process.

    python experiments/bench_zero.py                                # the default preset (tiny)
    python experiments/bench_zero.py --preset 9x9                   # GPU-sized (one accelerator)
    python experiments/bench_zero.py --smoke                        # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time

import jax
import numpy as np

from alphago_jax import nets
from alphago_jax.train import zero

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def bench(config: zero.ZeroConfig, repeats: int, steps: int) -> dict:
    """Self-play positions/s (median of ``repeats`` iterations after a warm-up one) and training
    steps/s (``steps`` steps after a warm-up one)."""
    programs = zero.build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    variables, sp, buffer = state["train"].variables, state["selfplay"], state["replay"]
    key = jax.random.PRNGKey(1)
    times = []
    for i in range(repeats + 1):
        key, k = jax.random.split(key)
        t0 = time.perf_counter()
        sp, buffer, stats = programs.selfplay(variables, sp, buffer, k)
        jax.block_until_ready(stats)
        times.append(time.perf_counter() - t0)
    compile_s = times[0]
    selfplay_s = float(np.median(times[1:]))
    train_state = state["train"]
    train_state, _ = zero.train_iteration(programs, train_state, buffer, key, 1)  # compile, warm up
    jax.block_until_ready(train_state)
    t0 = time.perf_counter()
    train_state, _ = zero.train_iteration(programs, train_state, buffer, key, steps)
    jax.block_until_ready(train_state)
    train_s = time.perf_counter() - t0
    positions = config.selfplay_batch * config.selfplay_moves
    return {"positions_per_s": positions / selfplay_s, "sims_per_s": positions * config.num_simulations / selfplay_s,
            "steps_per_s": steps / train_s, "examples_per_s": steps * config.train_batch / train_s,
            "first_call_s": compile_s, "params": nets.param_count(variables["params"])}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append", default=None, help="presets to time (default: tiny)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a setting")
    ap.add_argument("--repeats", type=int, default=3, help="timed self-play iterations")
    ap.add_argument("--steps", type=int, default=50, help="timed training steps")
    ap.add_argument("--smoke", action="store_true", help="the smoke preset, one repeat (CI)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    presets = ["smoke"] if args.smoke else (args.preset or [zero.DEFAULT_PRESET])
    if args.smoke:
        args.repeats, args.steps = 1, 4
    overrides = dict(s.split("=", 1) for s in args.set)
    rows = []
    for name in presets:
        if name not in zero.PRESETS:
            sys.exit(f"unknown preset {name!r}; known: {', '.join(zero.PRESETS)}")
        config = zero.with_overrides(zero.PRESETS[name], overrides)
        r = bench(config, args.repeats, args.steps)
        net = f"{config.blocks}x{config.filters} ({r['params'] / 1e6:.2f}M)"
        rows.append(f"| {name} | {config.board_size}x{config.board_size} | {net} | {config.num_simulations} | "
                    f"{config.selfplay_batch} | {r['positions_per_s']:,.0f} | {r['sims_per_s']:,.0f} | "
                    f"{config.train_batch} | {r['steps_per_s']:,.1f} | {r['examples_per_s']:,.0f} | "
                    f"{r['first_call_s']:.0f} |")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print_header("bench_zero.py", argv, f"{', '.join(f'{k}={v}' for k, v in overrides.items()) or 'preset settings'}; "
                 f"peak resident memory {peak_mb:,.0f} MB", t_start)
    print("| preset | board | blocks x filters (params) | sims/move | games in flight | self-play positions/s | "
          "simulations/s | train batch | train steps/s | examples/s | first self-play call (compile), s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
