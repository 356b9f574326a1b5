"""AlphaGo Zero at 9x9 or 19x19: the ``alphago-jax train`` command on a preset, then a results table.

The run is the package's own job (``alphago_jax.zero`` through the command line): every
device JAX sees plays its share of the self-play games and trains on its share of each batch
(data parallel); a checkpoint every ``checkpoint_interval`` iterations and after the last;
``--resume`` continues a stopped run; ``--time-limit SECONDS`` is a hard budget counted from
the command's start: the run stops when another iteration, the final evaluation and the
checkpoint would not fit, and plays only the final matches that do (the log names the others).
``--set NAME=VALUE`` changes a setting of the preset (``--set selfplay_batch=1024``, ``--set
optimizer.learning_rate=0.01``). The ``9x9`` preset is sized for one GPU or TPU (6 blocks of
64 filters, 2,048 games of 128 simulations per move), ``19x19`` for one H200-class GPU or a pod
(19 blocks of 256 filters, 1,024 games of 800 simulations; ``--distributed`` on several hosts).

Printed at the end: a markdown table headed by the machine, the command and the wall time, with
the iterations, self-play games and positions, self-play positions/s and training steps/s
(medians over the iterations), the final losses and the last win rate against pure MCTS, read
from the run's ``metrics.csv``. The run directory holds ``checkpoints/``, ``metrics.csv``,
``metrics.png`` and ``sample.sgf``.

    python experiments/zero_train.py --preset 9x9 --out runs/zero-9x9 --time-limit 36000
    python experiments/zero_train.py --preset 9x9 --out runs/zero-9x9 --resume
    python experiments/zero_train.py --smoke        # the smoke preset into a temporary directory (CI)
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import jax
import numpy as np

from alphago_jax import cli, zero
from alphago_jax.train.metrics import read_metrics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def train_command(preset: str, out, args) -> list[str]:
    """The ``alphago-jax`` arguments of the run."""
    command = ["train", "--preset", preset, "--out", str(out)]
    if args.time_limit is not None:
        command += ["--time-limit", str(args.time_limit)]
    for text in args.set:
        command += ["--set", text]
    flags = {"--resume": args.resume, "--distributed": args.distributed, "--no-progress": args.no_progress}
    return command + [flag for flag, on in flags.items() if on]


def summary_row(preset: str, out: pathlib.Path, wall: float) -> str:
    """One markdown row of the run in ``out`` (its saved settings and ``metrics.csv``)."""
    config = zero.saved_config(out)
    m = read_metrics(out / "metrics.csv")
    it = m["step"] > 0  # row 0 is the evaluation of the untrained network

    def last(key: str, spec: str = ".3f") -> str:
        values = m.get(key, np.array([]))
        values = values[np.isfinite(values)]
        return format(values[-1], spec) if len(values) else "n/a"

    def median(key: str) -> str:
        values = m.get(key, np.array([]))[it]
        values = values[np.isfinite(values)]
        return f"{np.median(values):,.0f}" if len(values) else "n/a"

    games = np.nansum(m.get("games", np.zeros(1))[it])
    positions = np.nansum(m.get("positions", np.zeros(1))[it])
    cells = [preset, f"{config.board_size}x{config.board_size}", f"{config.blocks}x{config.filters}",
             str(jax.device_count()), str(int(m["step"].max())), f"{games:,.0f}", f"{positions:,.0f}",
             median("selfplay_positions_per_s"), median("train_steps_per_s"), last("loss"), last("policy_loss"),
             last("value_loss"), last("win_mcts"), f"{wall:.0f}"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| preset | board | blocks x filters | devices | iterations | games | positions | self-play positions/s "
          "| training steps/s | loss | policy loss | value loss | win rate vs MCTS | wall s |\n"
          "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", choices=("9x9", "19x19"), default="9x9", help="the configuration (default 9x9)")
    ap.add_argument("--out", default=None, help="the run directory (default runs/zero-PRESET)")
    ap.add_argument("--time-limit", type=float, default=None, metavar="SECONDS",
                    help="stop after the iteration during which this much time has passed (--resume continues)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="change a setting of the preset")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out")
    ap.add_argument("--distributed", action="store_true", help="several hosts: jax.distributed.initialize() first")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--smoke", action="store_true", help="the smoke preset into a temporary directory (CI)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    preset = "smoke" if args.smoke else args.preset
    if args.smoke:
        args.no_progress = True
    with tempfile.TemporaryDirectory(prefix="zero-smoke-") as scratch:
        out = pathlib.Path(scratch if args.smoke else args.out or f"runs/zero-{preset}").absolute()
        code = cli.main(train_command(preset, out, args))
        if code:
            sys.exit(code)
        if jax.process_index() == 0:  # one table on several hosts
            row = summary_row(preset, out, time.perf_counter() - t_start)
            print()
            print_header("zero_train.py", argv, f"run in {out}" if not args.smoke else "a temporary run", t_start)
            print(HEADER)
            print(row)


if __name__ == "__main__":
    main()
