"""AlphaGo Zero throughput: self-play positions per second and training steps per second.

The main job's own jitted programs (``zero.build``) for a preset, with optional
``--set NAME=VALUE`` overrides: one self-play iteration (``selfplay_batch`` games advanced
``selfplay_moves`` searched moves, ``num_simulations`` simulations each) timed after a warm-up
call, and training steps on batches of ``train_batch`` sampled from the replay buffer it filled
(8-fold random symmetry augmentation included). Also the peak resident memory of the process.

``--baseline GAMES`` also measures the evaluation's pure-MCTS baseline (``ZeroConfig.baseline_search``
and ``baseline_evaluator``: ``baseline_simulations`` playouts per move that keep their own eyes,
under simple ko, ``baseline_leaves`` leaves per round with virtual loss) against itself with one
leaf per round and against the previous baseline (one leaf per round, uniformly random playouts
under positional superko): the seconds of one searched move from the empty board over
``eval_games / 2`` games for each, and GAMES games against each (half with each colour, all in
one batch): its speed and its strength per playout.

    python experiments/bench_zero.py                                # the default preset (tiny)
    python experiments/bench_zero.py --preset 9x9                   # GPU-sized (one accelerator)
    python experiments/bench_zero.py --preset 9x9 --set baseline_simulations=200 --baseline 32
    python experiments/bench_zero.py --smoke                        # tiny, for CI
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import pathlib
import resource
import sys
import time

import jax
import numpy as np

from alphago_jax import nets, zero
from alphago_jax.search import make_search, rollout_evaluator
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.zero.selfplay import play_match, search_mover

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def bench(config: zero.ZeroConfig, repeats: int, steps: int) -> dict:
    """Self-play positions/s (median of ``repeats`` iterations after a warm-up one) and training
    steps/s (``steps`` steps after a warm-up one)."""
    programs = zero.build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    variables, sp, buffer = state.train.variables, state.selfplay, state.replay
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
    train_state = state.train
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


def baseline(config: zero.ZeroConfig, games: int) -> list[dict]:
    """The evaluation's pure-MCTS baseline against two others of the same playouts per move:
    itself with one leaf per round (what batching costs), and the previous baseline (one leaf
    per round, uniformly random playouts under positional superko). For each: seconds of one
    searched move of ``eval_games / 2`` games from the empty board (the second of two calls: the
    first compiles), and ``games`` games against the baseline (half with each colour)."""
    game = config.game.game
    ours = make_search(game, config.baseline_evaluator, config.baseline_search)
    single = dataclasses.replace(config.baseline_search, leaf_batch=1)
    others = {"itself, one leaf per round": make_search(game, config.baseline_evaluator, single),
              "one leaf per round, uniform playouts, superko": make_search(game, rollout_evaluator(game), single)}
    pairs = max(1, config.eval_games // 2)
    states = jax.tree_util.tree_map(lambda x: jax.numpy.broadcast_to(x, (pairs,) + x.shape), game.init())

    def move_seconds(search):
        for i in range(2):
            t0 = time.perf_counter()
            jax.block_until_ready(search(None, states, jax.random.PRNGKey(i)).actions)
        return time.perf_counter() - t0

    ours_s = move_seconds(ours)
    rows = []
    for name, other in others.items():
        other_s = move_seconds(other)
        play = jax.jit(functools.partial(play_match, game, search_mover(ours), search_mover(other), max(1, games // 2)))
        t0 = time.perf_counter()
        out = play(None, None, jax.random.PRNGKey(7))
        result = MatchResult.from_outcomes("baseline", name, np.asarray(out.outcomes).tolist())
        rows.append({"opponent": name, "ours_s": ours_s, "other_s": other_s, "result": result,
                     "match_s": time.perf_counter() - t0, "leaves": config.baseline_leaves})
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", action="append", default=None, help="presets to time (default: tiny)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a setting")
    ap.add_argument("--repeats", type=int, default=3, help="timed self-play iterations")
    ap.add_argument("--steps", type=int, default=50, help="timed training steps")
    ap.add_argument("--baseline", type=int, default=0, metavar="GAMES",
                    help="also time the pure-MCTS baseline and play GAMES games of it against one leaf per round")
    ap.add_argument("--smoke", action="store_true", help="the smoke preset, one repeat (CI)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    presets = ["smoke"] if args.smoke else (args.preset or [zero.DEFAULT_PRESET])
    if args.smoke:
        args.repeats, args.steps, args.baseline = 1, 4, 2
    overrides = dict(s.split("=", 1) for s in args.set)
    rows, baselines = [], []
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
        if args.baseline:
            for b in baseline(config, args.baseline):
                lo, hi = b["result"].interval()
                baselines.append(
                    f"| {name} | {config.board_size}x{config.board_size} | {config.baseline_simulations} | "
                    f"{b['leaves']} | {max(1, config.eval_games // 2)} | {b['ours_s']:.2f} | {b['opponent']} | "
                    f"{b['other_s']:.2f} | {b['other_s'] / b['ours_s']:.1f}x | "
                    f"{b['result'].win_rate:.2f} [{lo:.2f}, {hi:.2f}] | {b['result'].games} | {b['match_s']:.0f} |")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print_header("bench_zero.py", argv, f"{', '.join(f'{k}={v}' for k, v in overrides.items()) or 'preset settings'}; "
                 f"peak resident memory {peak_mb:,.0f} MB", t_start)
    print("| preset | board | blocks x filters (params) | sims/move | games in flight | self-play positions/s | "
          "simulations/s | train batch | train steps/s | examples/s | first self-play call (compile), s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    if baselines:
        print()
        print("| preset | board | playouts/move | baseline's leaves per round | games searched | baseline s/move | "
              "opponent | opponent s/move | speed-up | baseline's score [95%] | games | match s (compile included) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(baselines))


if __name__ == "__main__":
    main()
