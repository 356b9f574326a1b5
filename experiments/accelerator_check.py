"""One prepared check of an accelerator: every benchmark at accelerator sizes, then the main job.

Each step runs as its own process, one after the other (so that no two share the device), with
its own time slice (sized from a run on one H200, whose steps took 493 s in all), and the whole
check keeps to ``--budget`` seconds (default 540: 9 minutes on one GPU): a step that overruns
its slice is stopped and reported as unfinished, and the next one starts. The main job's step
has the largest slice and goes last but keeps its share.

    bench_rules.py       Go 9x9 and 19x19 at batch 512, 4,096 and 32,768, beside pgx when installed
    bench_search.py      PUCT search at 16, 256 and 2,048 games, beside pgx + mctx when installed
    bench_nets.py        the networks in bfloat16 at batch 256 and 1,024, the 20x256 DualResNet included
    bench_grave_mcps.py  UCT, GRAVE and MCPS at batch 4,096
    bench_zero.py        the main job's programs on the 9x9 preset (self-play, training)
    alphago-jax train    the 9x9 preset for 3 minutes (--time-limit 180): its phase times per
                         iteration from metrics.csv, its self-play positions/s against
                         bench_zero's, and the evaluation's share of the wall time

The report (``--out``, default ``accelerator_check.md``) is one markdown file: the machine, each
step's command, wall time and output tables, and the main job's phase table; it is also
printed. ``--smoke`` runs every step at its smoke size on the CPU, the main job on the
``smoke`` preset (CI runs it).

    python experiments/accelerator_check.py --out docs/accelerator_check.md
    python experiments/accelerator_check.py --smoke
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pathlib
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # sibling modules, however run
from benchlib import machine  # noqa: E402

TRAIN_LIMIT = 180
"""Seconds of the main job's run (``--time-limit``)."""


class Step(NamedTuple):
    """One step of the check: a title, its command (after ``python``), and its share of the time."""

    title: str
    args: list[str]
    seconds: float


def steps(smoke: bool, run_dir: pathlib.Path) -> list[Step]:
    """The check's steps, at accelerator sizes or (``smoke``) at their smoke sizes."""
    bench = lambda name, *args: [str(HERE / name), *args]  # noqa: E731
    if smoke:
        return [
            Step("Rules", bench("bench_rules.py", "--smoke"), 300),
            Step("Search", bench("bench_search.py", "--smoke"), 300),
            Step("Networks", bench("bench_nets.py", "--smoke"), 300),
            Step("UCT, GRAVE and MCPS", bench("bench_grave_mcps.py", "--smoke"), 300),
            Step("AlphaGo Zero's programs", bench("bench_zero.py", "--smoke"), 300),
            Step("The main job", ["-m", "alphago_jax.cli", "train", "--preset", "smoke", "--no-progress",
                                  "--time-limit", "240", "--out", str(run_dir)], 300),
        ]
    peers = [] if importlib.util.find_spec("pgx") else ["--no-pgx"]  # pgx is optional (the bench extra)
    return [
        Step("Rules", bench("bench_rules.py", "--sizes", "9", "19", "--batches", "512", "4096", "32768",
                            "--rounds", "2", *peers), 70),
        Step("Search", bench("bench_search.py", "--batches", "16", "256", "2048", "--rounds", "2", *peers), 90),
        Step("Networks", bench("bench_nets.py", "--dtype", "bfloat16", "--batches", "256", "1024", "--repeats",
                               "3", "--max-seconds", "3"), 45),
        Step("UCT, GRAVE and MCPS", bench("bench_grave_mcps.py", "--batches", "4096", "--rounds", "1"), 90),
        Step("AlphaGo Zero's programs", bench("bench_zero.py", "--preset", "9x9", "--set", "selfplay_moves=8",
                                              "--repeats", "2", "--steps", "20"), 40),
        Step("The main job", ["-m", "alphago_jax.cli", "train", "--preset", "9x9", "--no-progress", "--time-limit",
                              str(TRAIN_LIMIT), "--out", str(run_dir)], TRAIN_LIMIT + 25),
    ]


def child_env() -> dict:
    """The steps' environment: the checkout importable, and the compilation cache of this
    process when it has one (the tests' cache, under CI)."""
    import jax

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cache = jax.config.jax_compilation_cache_dir
    if cache and "JAX_COMPILATION_CACHE_DIR" not in env:
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache)
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = str(jax.config.jax_persistent_cache_min_compile_time_secs)
    return env


class Ran(NamedTuple):
    """A finished (or stopped) step: its output, wall seconds and whether it ended by itself."""

    stdout: str
    stderr: str
    seconds: float
    finished: bool
    returncode: int | None


def run_step(step: Step, seconds: float, env: dict) -> Ran:
    """Run ``step`` for at most ``seconds``; a step still running then is stopped (its process
    group: the step and anything it started)."""
    t0 = time.perf_counter()
    child = subprocess.Popen([sys.executable, *step.args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = child.communicate(timeout=max(1.0, seconds))
        return Ran(out, err, time.perf_counter() - t0, True, child.returncode)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        return Ran(out, err, time.perf_counter() - t0, False, None)


def _number(text: str) -> float:
    return float(text.replace(",", "")) if text.strip() else float("nan")


def bench_zero_rate(stdout: str) -> float | None:
    """Self-play positions/s from bench_zero.py's table (its sixth column), None if absent."""
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 11 and re.fullmatch(r"[\d,.]+", cells[5] or "-"):
            return _number(cells[5])
    return None


PHASES = ("selfplay_s", "train_s", "eval_s", "checkpoint_s")


def phase_report(run_dir: pathlib.Path, wall: float, limit: float, eval_interval: int,
                 bench_rate: float | None) -> list[str]:
    """The main job's phase table from its metrics.csv, with totals and shares."""
    from alphago_jax.train.metrics import read_metrics

    path = run_dir / "metrics.csv"
    if not path.is_file():
        return ["No metrics.csv: the run logged no row."]
    m = read_metrics(path)
    steps = m["step"].astype(int)
    col = lambda k: m.get(k, [float("nan")] * len(steps))  # noqa: E731
    lines = ["| iteration | self-play s | train s | eval s | checkpoint s | compile s | self-play positions/s |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for i, s in enumerate(steps):
        cells = [f"{col(k)[i]:.2f}" for k in (*PHASES, "compile_s")]
        rate = col("selfplay_positions_per_s")[i]
        lines.append(f"| {s} | " + " | ".join(cells) + f" | {rate:,.0f} |".replace("nan", "-"))
    totals = {k: float(sum(x for x in col(k) if x == x)) for k in PHASES}
    timed = sum(totals.values())
    lines += ["", f"Wall time {wall:.0f} s with the limit at {limit:.0f} s; the phases "
              + ", ".join(f"{k[:-2]} {totals[k]:.0f} s ({totals[k] / wall:.0%})" for k in PHASES)
              + f"; the rest ({wall - timed:.0f} s: start-up, building, restoring, plots) outside them."]
    iterations = [i for i, s in enumerate(steps) if s > 0]
    rates = [col("selfplay_positions_per_s")[i] for i in iterations[1:]]  # after the first (compiling) one
    if rates:
        rate = statistics.median(rates)
        versus = f", {rate / bench_rate:.2f}x bench_zero's {bench_rate:,.0f}" if bench_rate else ""
        lines.append(f"Main-job self-play: {rate:,.0f} positions/s (median of iterations 2 on{versus}).")
    evals = [i for i in range(len(steps)) if col("eval_s")[i] > 0 and steps[i] != 1]
    if eval_interval and len(iterations) > 1 and evals:
        # From the second iteration on nothing compiles but an evaluation's first match against
        # the best network: compile time is taken out of the evaluations (iteration 1, whose
        # compile time is self-play's and training's, is left out of them).
        compile_s = col("compile_s")
        per_iteration = statistics.mean(sum(col(k)[i] for k in ("selfplay_s", "train_s", "checkpoint_s"))
                                        for i in iterations[1:])  # a mean: checkpoints come every few
        evaluation = statistics.median(max(0.0, col("eval_s")[i] - compile_s[i]) for i in evals)
        share = evaluation / (evaluation + eval_interval * per_iteration)
        lines.append(f"An evaluation takes {evaluation:.1f} s (median), an iteration without it {per_iteration:.1f} s "
                     f"(mean; compile time taken out): at the preset's eval_interval of {eval_interval}, "
                     f"evaluation would be {share:.0%} of the wall time.")
    return lines


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="accelerator_check.md", help="the markdown report (default accelerator_check.md)")
    ap.add_argument("--budget", type=float, default=540.0, help="seconds for the whole check (default 540)")
    ap.add_argument("--smoke", action="store_true", help="every step at its smoke size, on the CPU (CI)")
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    env = child_env()
    if args.smoke:
        env["JAX_PLATFORMS"] = "cpu"
    from alphago_jax import zero

    preset = zero.PRESETS["smoke" if args.smoke else "9x9"]
    command = "python experiments/accelerator_check.py" + "".join(f" {a}" for a in (argv or sys.argv[1:]))
    sections, rate = [], None
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = pathlib.Path(tmp) / "run"
        plan = steps(args.smoke, run_dir)
        for k, step in enumerate(plan):
            left = args.budget - (time.perf_counter() - t_start)
            # Each step keeps to its share, leaving the later steps theirs; the last has what is left.
            later = sum(s.seconds for s in plan[k + 1:])
            slice_s = step.seconds if args.smoke else (left if k == len(plan) - 1 else min(step.seconds, left - later))
            shown = " ".join(["python", *(pathlib.Path(a).relative_to(ROOT).as_posix() if a.startswith(str(ROOT))
                                         else a for a in step.args)])
            print(f"{step.title}: {shown} (up to {slice_s:.0f} s)", file=sys.stderr, flush=True)
            ran = run_step(step, slice_s, env)
            status = "" if ran.finished and ran.returncode == 0 else \
                (f", stopped unfinished after {slice_s:.0f} s" if not ran.finished else f", exit {ran.returncode}")
            body = [f"## {step.title}", "", f"`{shown}` ({ran.seconds:.0f} s{status})", ""]
            if step.title == "The main job":
                body += phase_report(run_dir, ran.seconds, TRAIN_LIMIT if not args.smoke else 240,
                                     preset.eval_interval, rate)
                log = [line for line in ran.stdout.splitlines() if line.strip()]
                body += ["", "Its log:", "", "```", *log[-40:], "```"]
            else:
                body.append(ran.stdout.strip() or "(no output)")
                if step.title == "AlphaGo Zero's programs":
                    rate = bench_zero_rate(ran.stdout)
            if not ran.finished or ran.returncode:
                tail = ran.stderr.strip().splitlines()[-15:]
                body += ["", "Its last error output:", "", "```", *tail, "```"]
            sections.append("\n".join(body))
    report = "\n\n".join([f"# Accelerator check\n\nMachine: {machine()}  \nCommand: `{command}` "
                          f"(total {time.perf_counter() - t_start:.0f} s of a {args.budget:.0f} s budget)",
                          *sections]) + "\n"
    pathlib.Path(args.out).write_text(report)
    print(report)
    print(f"report: {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
