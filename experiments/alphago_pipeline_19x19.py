"""The AlphaGo (2016) pipeline at 19x19 from SGF game records, on every device JAX sees.

Five phases, each the package's own job, each written into ``--out`` and resumed when the
command is run again (a finished phase is read back, not redone):

    positions/  ``dataset build`` of the records (a directory, .sgf files, .zip or .tar.gz archives)
    sl/         SL policy network: cross-entropy on the move played, held-out top-1
    rollout/    fast rollout policy: the same loss, held-out top-1 and µs per rollout move
    rl/         RL policy: REINFORCE against a pool of its earlier selves, win rate against SL
    value/      value network: one position per RL self-play game, held-out MSE against rollouts

``--out`` is then a pipeline directory for the AlphaGo player (``alphago:dir=OUT``). The
networks are the paper's (Silver et al. 2016): ``PolicyNet`` with 192 filters, a 5x5 then 11
3x3 convolutions and the 1x1 output convolution (13 layers), on the 48 planes with ladders;
``ValueNet`` with the same trunk on 49 planes, a 1x1 convolution, a 256-unit layer and a tanh
output. Batches (256 positions; 128 games per RL iteration) are split over all devices (data
parallel): they must be multiples of the device count. Any setting of a phase can be changed
with ``--set PHASE.NAME=VALUE`` (phases ``sl``, ``rollout``, ``rl``, ``value``), e.g.
``--set sl.steps=200000 --set rl.pairs=128``.

Printed at the end: a markdown table headed by the machine, the command and the wall time
(SL and rollout held-out top-1, RL against SL, the value network's MSE against the rollout
estimate and a constant predictor), with each phase's settings and wall time.

    python experiments/alphago_pipeline_19x19.py --sgf kgs-19-2019.tar.gz --out runs/alphago19
    python experiments/alphago_pipeline_19x19.py --smoke    # 9x9 records of the corpus, tiny nets (CI)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import sys
import tempfile
import time

import jax
import numpy as np

from alphago_jax.alphago import reinforce, supervised, value
from alphago_jax.alphago.dataset import build_dataset, load_manifest
from alphago_jax.train.metrics import read_metrics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402

DEFAULT_SGF = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "sgf"

# The accelerator run. Lengths are far below the paper's (340 million SL steps of 16 positions
# on 50 GPUs; 10,000 RL iterations; 30 million value positions) and sized for one host.
FULL = {
    "sl": dict(filters=192, layers=12, ladders=True, batch=256, steps=50_000, learning_rate=0.003,
               decay_every=10_000, eval_every=2_500, eval_positions=8_192, checkpoint_every=2_500, log_every=100),
    "rollout": dict(batch=1_024, steps=20_000, learning_rate=0.05, decay_every=5_000, eval_every=2_500,
                    eval_positions=8_192, checkpoint_every=2_500, log_every=100),
    "rl": dict(komi=7.5, pairs=64, iterations=500, learning_rate=0.01, pool_every=50, pool_size=16, eval_every=50,
               eval_pairs=128, chunk=512),
    "value": dict(filters=192, layers=12, hidden=256, ladders=True, komi=7.5, games=65_536, chunk_games=1_024,
                  u_max=450, held_out_every=16, batch=256, steps=50_000, learning_rate=0.003, decay_every=10_000,
                  eval_every=2_500, eval_positions=8_192, checkpoint_every=2_500, log_every=100, rollouts=32,
                  compare_positions=2_048),
}

# CI: tiny networks without the ladder planes (10x cheaper to compile), tens of steps.
SMOKE = {
    "sl": dict(filters=8, layers=2, ladders=False, batch=32, steps=20, learning_rate=0.03, decay_every=0,
               eval_every=20, eval_positions=128, checkpoint_every=20, log_every=5),
    "rollout": dict(batch=32, steps=20, learning_rate=0.5, decay_every=0, eval_every=20, eval_positions=128,
                    checkpoint_every=20, log_every=5),
    "rl": dict(komi=7.5, pairs=4, iterations=2, pool_every=1, pool_size=2, eval_every=2, eval_pairs=4, chunk=64),
    "value": dict(filters=8, layers=2, hidden=16, ladders=False, komi=7.5, games=64, chunk_games=16, u_max=20,
                  held_out_every=2, batch=16, steps=20, learning_rate=0.01, decay_every=0, eval_every=20,
                  eval_positions=32, checkpoint_every=20, log_every=5, rollouts=4, compare_positions=16),
}
CONFIGS = {"sl": supervised.SLConfig, "rollout": supervised.RolloutConfig, "rl": reinforce.RLConfig,
           "value": value.ValueConfig}


def phase_configs(preset: dict, size: int, out: pathlib.Path, sets: list[str]) -> dict:
    """The settings of each phase: ``preset``, the board size and run directories, then the
    ``--set PHASE.NAME=VALUE`` overrides (ValueError for an unknown phase or name)."""
    overrides: dict[str, dict[str, str]] = {phase: {} for phase in CONFIGS}
    for text in sets:
        key, sep, text_value = text.partition("=")
        phase, dot, name = key.strip().partition(".")
        if not sep or not dot or phase not in CONFIGS:
            raise ValueError(f"--set takes PHASE.NAME=VALUE with PHASE one of {', '.join(CONFIGS)}; got {text!r}")
        overrides[phase][name] = text_value.strip()
    runs = {"sl_run": str(out / "sl"), "rl_run": str(out / "rl"), "rollout_run": str(out / "rollout")}
    given = {"sl": {"board_size": size}, "rollout": {"board_size": size}, "rl": {"sl_run": runs["sl_run"]},
             "value": {"board_size": size, **runs}}
    return {phase: cls.build(cls.build(None, None, {**preset[phase], **given[phase]}), overrides[phase])
            for phase, cls in CONFIGS.items()}


def positions_of(sources: list[str], out: pathlib.Path, size: int, progress: bool = True) -> dict:
    """The position dataset in ``out`` (built from ``sources`` unless it is there): its manifest.

    Built into a temporary directory renamed into place, so a stopped build starts again."""
    if (out / "manifest.json").is_file():
        return load_manifest(out)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    build_dataset(sources, partial, size=size, held_out=0.05, progress=progress)
    os.replace(partial, out)
    return load_manifest(out)


def last_finite(metrics_csv: pathlib.Path, key: str) -> float:
    """The last finite value of column ``key`` of a run's ``metrics.csv`` (NaN if none)."""
    column = read_metrics(metrics_csv).get(key, np.array([np.nan]))
    finite = column[np.isfinite(column)]
    return float(finite[-1]) if len(finite) else float("nan")


def run_pipeline(configs: dict, sources: list[str], out: pathlib.Path, size: int, progress: bool) -> tuple[dict, dict]:
    """Run (or resume) the five phases into ``out``; returns (results, wall seconds per phase)."""
    walls: dict[str, float] = {}
    t0 = time.perf_counter()
    manifest = positions_of(sources, out / "positions", size, progress)
    walls["positions"] = time.perf_counter() - t0
    data = out / "positions"
    results: dict = {"manifest": manifest}
    for phase, train in (("sl", supervised.train_sl), ("rollout", supervised.train_rollout)):
        t0 = time.perf_counter()
        results[phase] = train(configs[phase], data, out / phase, resume=True, progress=progress).summary
        walls[phase] = time.perf_counter() - t0
    t0 = time.perf_counter()
    reinforce.train_rl(configs["rl"], out / "rl", resume=True, progress=progress)
    # From the log: a finished run, read back, has no new evaluation to report.
    results["rl"] = {k: last_finite(out / "rl" / "metrics.csv", k)
                     for k in ("win_sl", "win_sl_low", "win_sl_high", "games_sl")}
    walls["rl"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    results["value"] = value.train_value(configs["value"], out / "value", resume=True, progress=progress).summary
    walls["value"] = time.perf_counter() - t0
    return results, walls


def _net(c) -> str:
    """A network's size as the table gives it (``SLConfig`` or ``ValueConfig``)."""
    return f"{c.filters} filters x {c.layers} layers + 1x1, {'ladders' if c.ladders else 'no ladders'}"


def _pct(x: float) -> str:
    return f"{x:.1%}"


def table(configs: dict, results: dict, walls: dict, size: int) -> str:
    """The markdown results table: one row per phase, its measure, settings and wall time."""
    sl, ro, rl, va = (configs[k] for k in ("sl", "rollout", "rl", "value"))
    m, r_sl, r_ro, r_rl, r_va = (results[k] for k in ("manifest", "sl", "rollout", "rl", "value"))
    rows = [
        ("positions", "records kept",
         f"{len(m['games']):,} ({m['held_out_games']} held out; {sum(m['skipped'].values()):,} skipped)",
         f"{m['positions']['train']:,} training, {m['positions']['held_out']:,} held-out positions, {size}x{size}",
         walls["positions"]),
        ("SL policy", "held-out top-1",
         f"{_pct(r_sl['held_out_accuracy'])} (loss {r_sl['held_out_loss']:.3f})",
         f"PolicyNet {_net(sl)}; {sl.steps:,} steps of {sl.batch}", walls["sl"]),
        ("rollout policy", "held-out top-1",
         f"{_pct(r_ro['held_out_accuracy'])}; {r_ro['rollout_us_per_move']:.1f} µs per rollout move",
         f"{ro.steps:,} steps of {ro.batch}", walls["rollout"]),
        ("RL policy", "against the SL policy",
         f"{_pct(r_rl['win_sl'])} [{_pct(r_rl['win_sl_low'])}, {_pct(r_rl['win_sl_high'])}] "
         f"in {r_rl['games_sl']:.0f} games",
         f"{rl.iterations:,} iterations of {2 * rl.pairs} games", walls["rl"]),
        ("value network", "held-out MSE",
         f"{r_va['value_mse']:.4f} (rollouts {r_va.get('rollout_mse', float('nan')):.4f}, "
         f"constant {r_va['constant_mse']:.4f})",
         f"ValueNet {_net(va)}, FC {va.hidden}; {va.games:,} games, {va.steps:,} steps of {va.batch}; "
         f"{va.rollouts} rollouts per position on {r_va['positions']} positions", walls["value"]),
    ]
    lines = ["| phase | measure | result | settings | wall s |", "|---|---|---|---|---:|"]
    for phase, what, result, settings, wall in rows:
        lines.append(f"| {phase} | {what} | {result} | {settings} | {wall:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sgf", nargs="+", default=[str(DEFAULT_SGF)],
                    help="SGF records: directories, .sgf files, .zip or .tar.gz archives "
                         "(default ../shared/data/sgf)")
    ap.add_argument("--out", default=None,
                    help="the pipeline directory (default runs/alphago19; with --smoke a temporary one)")
    ap.add_argument("--size", type=int, default=19, help="board size of the records kept (default 19)")
    ap.add_argument("--set", action="append", default=[], metavar="PHASE.NAME=VALUE",
                    help="change a phase's setting, e.g. --set sl.steps=200000 (phases: sl, rollout, rl, value)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    ap.add_argument("--smoke", action="store_true",
                    help="the 9x9 records of the corpus, tiny networks, tens of steps (CI)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    size = 9 if args.smoke else args.size
    with tempfile.TemporaryDirectory(prefix="alphago-pipeline-") as scratch:
        out = pathlib.Path(args.out or (scratch if args.smoke else "runs/alphago19")).absolute()
        try:  # bad settings, batches that do not split over the devices: a message, no traceback
            configs = phase_configs(SMOKE if args.smoke else FULL, size, out, args.set)
            print(f"AlphaGo pipeline on {size}x{size} records from {', '.join(args.sgf)} into {out}", flush=True)
            results, walls = run_pipeline(configs, args.sgf, out, size, progress=not (args.no_progress or args.smoke))
        except ValueError as e:
            sys.exit(f"alphago_pipeline_19x19.py: error: {e}")
    print()
    n = jax.device_count()
    print_header("alphago_pipeline_19x19.py", argv, f"batches split over {n} devices" if n > 1 else "one device",
                 t_start)
    print(table(configs, results, walls, size))


if __name__ == "__main__":
    main()
