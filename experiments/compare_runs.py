"""Two or more AlphaGo Zero runs side by side: a table of their throughput and one plot of their losses.

Reads each run's ``metrics.csv`` and the wall time of its latest checkpoint (``elapsed_s`` in
its metadata; ``--seconds`` for runs that predate it). Prints a markdown table (iterations,
self-play games and positions, positions/s and games/hour over the run's wall time, training
steps, the mean losses of the last five iterations) and draws ``loss``, ``policy_loss`` and
``value_loss`` of every run against its training steps into one PNG.

A policy loss is a cross-entropy against the run's own targets: visit counts and Gumbel's
improved policy have different entropies, so compare value losses, and strength by a match.

    python experiments/compare_runs.py puct=runs/puct gumbel=runs/gumbel --out docs/compare.png
    python experiments/compare_runs.py --smoke
"""

from __future__ import annotations

import argparse
import pathlib
import tempfile

import numpy as np

from alphago_jax import zero
from alphago_jax.train.checkpoint import Checkpointer
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.metrics import read_metrics

LOSSES = ("loss", "policy_loss", "value_loss")


def wall_seconds(run: pathlib.Path) -> float | None:
    """The run's wall time from its latest checkpoint's metadata, None where it is not recorded."""
    ckpt = Checkpointer(checkpoint_dir(run), kind=zero.KIND, read_only=True)
    if ckpt.latest_step() is None:
        return None
    seconds = ckpt.metadata().get("elapsed_s")
    return float(seconds) if seconds is not None else None


def summary(label: str, run: pathlib.Path, seconds: float | None) -> dict:
    columns = read_metrics(run / "metrics.csv")
    seconds = wall_seconds(run) if seconds is None else seconds
    games, positions = np.nansum(columns["games"]), np.nansum(columns["positions"])
    trained = np.isfinite(columns.get("loss", np.array([np.nan])))
    last = {k: float(np.mean(columns[k][trained][-5:])) if k in columns and trained.any() else float("nan")
            for k in LOSSES}
    return {"run": label, "iterations": int(np.nanmax(columns["step"])), "games": int(games),
            "positions": int(positions), "seconds": seconds,
            "positions_per_s": positions / seconds if seconds else float("nan"),
            "games_per_hour": games * 3600 / seconds if seconds else float("nan"),
            "train_steps": int(np.nanmax(columns["train_step"])), **last}


def table(rows: list[dict]) -> str:
    head = ("| run | iterations | wall s | self-play games | positions | positions/s | games/hour | train steps | "
            "loss | policy loss | value loss |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines = [f"| {r['run']} | {r['iterations']} | {r['seconds'] or float('nan'):.0f} | {r['games']:,} | "
             f"{r['positions']:,} | {r['positions_per_s']:.0f} | {r['games_per_hour']:.0f} | {r['train_steps']:,} | "
             f"{r['loss']:.3f} | {r['policy_loss']:.3f} | {r['value_loss']:.3f} |" for r in rows]
    return "\n".join([head] + lines)


def plot(runs: list[tuple[str, pathlib.Path]], path: pathlib.Path) -> pathlib.Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(LOSSES), figsize=(4.2 * len(LOSSES), 3.4), sharex=True)
    for label, run in runs:
        columns = read_metrics(run / "metrics.csv")
        for ax, key in zip(axes, LOSSES):
            ok = np.isfinite(columns.get(key, np.array([])))
            if ok.any():
                ax.plot(columns["train_step"][ok], columns[key][ok], label=label)
    for ax, key in zip(axes, LOSSES):
        ax.set_title(key)
        ax.set_xlabel("training steps")
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", metavar="LABEL=DIR", help="run directories, each with a label")
    parser.add_argument("--seconds", type=float, nargs="*", default=None,
                        help="wall seconds of each run, for runs whose checkpoints do not record it")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="the plot (default: no plot)")
    parser.add_argument("--smoke", action="store_true", help="two smoke-preset runs into a temporary folder (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        base = pathlib.Path(tempfile.mkdtemp(prefix="compare-"))
        config = zero.PRESETS["smoke"]
        for label, search in (("puct", "puct"), ("gumbel", "gumbel")):
            zero.train(zero.with_overrides(config, {"search": search, "eval_games": "0", "iterations": "2"}),
                       base / label, progress=False, log=lambda _: None)
        args.runs = [f"puct={base / 'puct'}", f"gumbel={base / 'gumbel'}"]
        args.out = base / "losses.png"
    if not args.runs:
        parser.error("name at least one LABEL=DIR (or --smoke)")
    runs = [(text.split("=", 1)[0], pathlib.Path(text.split("=", 1)[1])) for text in args.runs]
    seconds = args.seconds or [None] * len(runs)
    if len(seconds) != len(runs):
        parser.error(f"--seconds takes one value per run ({len(runs)})")
    print(table([summary(label, run, s) for (label, run), s in zip(runs, seconds)]))
    if args.out is not None:
        print(f"\nplot: {plot(runs, args.out)}")


if __name__ == "__main__":
    main()
