"""A 9x9 network in minutes on one accelerator: a supervised warm start, then Gumbel self-play.

1. Warm start (``zero.warm_start``): the dual network learns the moves and results of the GNU
   Go 9x9 self-play records in ``../shared/data/gnugo-9x9-selfplay/`` (skipped with
   ``--records none``); its file is ``OUT/warm_start.msgpack``.
2. Self-play and training with the main job's own programs (``zero.build``): Gumbel
   AlphaZero search (``search="gumbel"``), the improved policy as the target, until the
   time budget is spent. No evaluation matches and no run checkpoints (a run this short on a
   borrowed machine keeps only networks): the network is exported to ``OUT/net-<iteration>.msgpack``
   every ``--export-every`` seconds and to ``OUT/final.msgpack`` at the end, each file's
   ``info`` holding the chain that made it (records, steps, positions, seconds, device).

Every iteration's row in ``OUT/metrics.csv`` has the wall seconds of its phases (``selfplay_s``,
``train_s``, ``export_s``), positions/s, the losses and the self-play games' length and black's
share. ``--smoke`` runs it at toy size on any machine (CI).

    python experiments/zero_9x9_accelerator.py --out /tmp/z9 --budget 420
    python experiments/zero_9x9_accelerator.py --smoke

The same programs play 19x19 from the shipped 19x19 network, its settings given with ``--set``
(``zero.init_network`` refuses a network of another shape or inputs, by name)::

    python experiments/zero_9x9_accelerator.py --out /tmp/z19 --budget 420 \
        --init alphago_jax/data/zero_19x19.msgpack --set board_size=19 --set inputs=liberties \
        --set size_agnostic=true --set ownership_weight=1 --set score_weight=0.02 --set pass_after=150
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import sys
import tempfile
import time

import jax
import numpy as np

from alphago_jax import zero
from alphago_jax.nets.saved import network_config, save_network
from alphago_jax.zero import warm_start
from alphago_jax.train.optimizer import OptimizerConfig, init_train_state
from alphago_jax.train.metrics import RunLogger

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402

RECORDS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "gnugo-9x9-selfplay"

CONFIG = zero.ZeroConfig(
    # 6 x 64 answers in about a millisecond a position on a 2-core CPU, so the player it makes
    # searches hundreds of simulations a second there. 32 Gumbel simulations considering 16
    # moves improve the policy as much as a few hundred PUCT ones (Danihelka et al. 2022).
    board_size=9, komi=7.5, pass_after=40, blocks=6, filters=64, value_hidden=64,
    search="gumbel", num_simulations=32, gumbel_considered=16,
    # 2,048 games in flight keep one H200 busy (bench_search: 4x the simulations/s of 256).
    selfplay_batch=2048, selfplay_moves=32, replay_capacity=327_680, min_replay=32_768,
    # Each position is sampled about four times before it leaves the buffer.
    train_batch=1024, train_steps=256, workers=1,
    optimizer=OptimizerConfig(kind="adamw", learning_rate=1e-3, weight_decay=1e-4),
    iterations=1_000_000, eval_games=0, gate=None, seed=0,
)

SMOKE = dataclasses.replace(
    CONFIG, pass_after=0, max_moves=24, blocks=1, filters=8, value_hidden=8,
    num_simulations=4, gumbel_considered=4, selfplay_batch=8, selfplay_moves=16, replay_capacity=1024,
    min_replay=32, train_batch=16, train_steps=2)


def _save(path, variables, config: zero.ZeroConfig, info: dict) -> pathlib.Path:
    return save_network(path, variables, **network_config(config.net), board_size=config.board_size,
                        komi=config.komi, info=info)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=pathlib.Path, help="output folder (networks, metrics.csv, summary.json)")
    parser.add_argument("--budget", type=float, default=420.0, help="seconds for the whole script (default 420)")
    parser.add_argument("--records", default=str(RECORDS), help="folder of 9x9 SGF records, or 'none'")
    parser.add_argument("--init", type=pathlib.Path, help="start from this network file (no warm start)")
    parser.add_argument("--warm-steps", type=int, default=3000, help="supervised steps (batch 256)")
    parser.add_argument("--export-every", type=float, default=60.0, help="seconds between exported networks")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="change a CONFIG setting")
    parser.add_argument("--smoke", action="store_true", help="toy sizes, a few seconds (CI)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.smoke:  # a few iterations after a few supervised steps
        args.budget, args.warm_steps = min(args.budget, 20.0), min(args.warm_steps, 10)
    config = SMOKE if args.smoke else CONFIG
    config = zero.with_overrides(config, dict(s.split("=", 1) for s in args.set))
    out = args.out or pathlib.Path(tempfile.mkdtemp(prefix="zero9-"))
    out.mkdir(parents=True, exist_ok=True)
    device = f"{jax.device_count()} x {jax.devices()[0].device_kind}"
    chain = [{"step": "zero_9x9_accelerator.py", "command": " ".join(sys.argv), "device": device,
              "config": config.to_dict()}]
    net, opt = config.net, config.optimizer

    # -- 1. warm start ---------------------------------------------------------------------
    variables = None
    if args.init:
        saved = zero.init_network(args.init, config)  # refuses, by name, a network of another shape or inputs
        variables = saved.variables
        chain = list(saved.info.get("chain", [])) + chain
    elif args.records != "none" and args.warm_steps > 0:
        t0 = time.perf_counter()
        data = warm_start.record_examples([args.records], size=config.board_size, komi=config.komi,
                                          max_records=16 if args.smoke else None, inputs=config.inputs)
        t_read = time.perf_counter() - t0
        result = warm_start.train_supervised(data, net, steps=args.warm_steps, batch=256 if not args.smoke else 16,
                                             progress=False)
        variables = result.state.variables
        warm = {"records": str(args.records), "games": data.games, "skipped": data.skipped,
                "positions": int(data.examples.value.shape[0]), "steps": args.warm_steps,
                "read_s": round(t_read, 1), "seconds": round(time.perf_counter() - t0, 1),
                "final_policy_loss": float(np.mean(result.metrics["policy_loss"][-100:])),
                "held_out": result.held_out}
        chain.append({"step": "warm start", **warm})
        _save(out / "warm_start.msgpack", variables, config, {"chain": chain})
        print("warm start:", json.dumps(warm), flush=True)

    # -- 2. Gumbel self-play with the main job's programs -------------------------------------
    t0 = time.perf_counter()
    programs = zero.build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    if variables is not None:
        fresh = init_train_state(variables, opt)
        state = state.replace(train=jax.device_put(fresh, jax.tree_util.tree_map(lambda x: x.sharding, state.train)))
    print(f"programs built in {time.perf_counter() - t0:.1f} s", flush=True)
    logger = RunLogger(out / "metrics.csv")
    totals = {"games": 0, "positions": 0, "selfplay_s": 0.0, "train_s": 0.0, "iterations": 0}
    last_export, longest = time.perf_counter(), 0.0
    iteration = 0

    def export(name):
        steps = int(state.train.step)
        info = {"iteration": iteration, "train_steps": steps, "config": config.to_dict(),
                "command": "python " + " ".join(sys.argv),
                "chain": chain + [{"step": "self-play", **totals, "train_steps": steps,
                                   "seconds": round(time.perf_counter() - started, 1)}]}
        return _save(out / name, state.train.variables, config, info)

    while True:
        iteration += 1
        t_it = time.perf_counter()
        key, k_sp, k_train, _ = programs.split(state.key)
        sp, buffer, stats = programs.selfplay(state.train.variables, state.selfplay, state.replay, k_sp)
        stats = dict(zip(zero.STAT_NAMES, zero.to_host(stats).sum(axis=1).tolist()))
        size = int(np.asarray(buffer.size).sum())
        state = state.replace(selfplay=sp, replay=buffer, key=key)
        t_sp = time.perf_counter() - t_it
        row = {"selfplay_s": t_sp, "games": stats["games"], "positions": stats["positions"], "replay_size": size,
               "selfplay_positions_per_s": config.selfplay_batch * config.selfplay_moves / t_sp,
               "game_length": stats["positions"] / max(stats["games"], 1),
               "black_win_rate": stats["black_wins"] / max(stats["games"], 1)}
        t1 = time.perf_counter()
        if size >= config.min_replay:
            train_state, metrics = zero.train_iteration(programs, state.train, state.replay, k_train,
                                                        config.train_steps)
            state = state.replace(train=train_state)
            row.update({k: float(np.mean(v)) for k, v in metrics.items()})
        row["train_s"] = time.perf_counter() - t1
        row["train_step"] = int(state.train.step)
        for k in ("games", "positions"):
            totals[k] += stats[k]
        totals["selfplay_s"] += t_sp
        totals["train_s"] += row["train_s"]
        totals["iterations"] = iteration
        t2 = time.perf_counter()
        elapsed = t2 - started
        longest = max(longest, t2 - t_it)
        final = elapsed + 1.5 * longest > args.budget
        if final or t2 - last_export >= args.export_every:
            export("final.msgpack" if final else f"net-{iteration:04d}.msgpack")
            last_export = time.perf_counter()
        row["export_s"] = time.perf_counter() - t2
        logger.log(iteration, row)
        print(f"it {iteration}: {elapsed:.0f} s, self-play {t_sp:.1f} s ({row['selfplay_positions_per_s']:.0f} pos/s), "
              f"train {row['train_s']:.1f} s, games {stats['games']} (len {row['game_length']:.0f}, "
              f"black {row['black_win_rate']:.2f}), loss {row.get('loss', float('nan')):.3f} "
              f"(policy {row.get('policy_loss', float('nan')):.3f}, value {row.get('value_loss', float('nan')):.3f})",
              flush=True)
        if final:
            break
    logger.close()
    summary = {**totals, "train_steps": int(state.train.step), "seconds": round(time.perf_counter() - started, 1), "device": device}
    (out / "summary.json").write_text(json.dumps({"chain": chain, "summary": summary}, indent=1))
    print("summary:", json.dumps(summary), flush=True)
    print(f"networks, metrics.csv and summary.json: {out}")
    print_header("zero_9x9_accelerator.py", argv, f"{device}, {iteration} iterations", started)


if __name__ == "__main__":
    main()
