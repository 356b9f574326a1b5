"""``experiments/accelerator_check.py --smoke``: every step runs in its own process, and the one
report holds each benchmark's table and the main job's phase times."""

from __future__ import annotations

import pathlib
import re
import runpy
import sys

from alphago_jax.train.metrics import RunLogger

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_accelerator_check_smoke(tmp_path, monkeypatch, capsys):
    out = tmp_path / "report.md"
    monkeypatch.setattr(sys, "argv", ["accelerator_check.py", "--smoke", "--out", str(out)])
    runpy.run_path(str(ROOT / "experiments" / "accelerator_check.py"), run_name="__main__")
    report = out.read_text()
    assert report.strip() in capsys.readouterr().out  # printed as well
    for title in ("Rules", "Search", "Networks", "UCT, GRAVE and MCPS", "AlphaGo Zero's programs", "The main job"):
        assert f"\n## {title}\n" in report, title
    assert "stopped unfinished" not in report and ", exit " not in report, report
    # Each benchmark's own table, and the main job's phases read back from its metrics.csv.
    assert "| go 5x5 | 4 |" in report and "| smoke | 5x5 | 1x8 (0.00M) | 4 | 8 |" in report
    assert "| nogo 5x5 | 2 |" in report and "| DualResNet (smoke size) |" in report
    assert "| iteration | self-play s | train s | eval s | checkpoint s | compile s |" in report
    # The untrained network's evaluation, then iteration 1.
    assert re.search(r"^\| 0 \| 0\.00 \| 0\.00 \| [\d.]+ \| 0\.00 \|", report, re.M)
    assert re.search(r"^\| 1 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", report, re.M)
    assert "x bench_zero's" in report and "Wall time " in report


def test_phase_report_reads_the_run(tmp_path):
    check = runpy.run_path(str(ROOT / "experiments" / "accelerator_check.py"))
    with RunLogger(tmp_path / "metrics.csv") as log:
        log.log(0, {"selfplay_s": 0, "train_s": 0, "eval_s": 30, "checkpoint_s": 0, "compile_s": 20})
        log.log(1, {"selfplay_s": 15, "train_s": 5, "eval_s": 0, "checkpoint_s": 1, "compile_s": 12,
                    "selfplay_positions_per_s": 100})
        log.log(2, {"selfplay_s": 4, "train_s": 5, "eval_s": 0, "checkpoint_s": 1, "compile_s": 0,
                    "selfplay_positions_per_s": 400})
        log.log(3, {"selfplay_s": 4, "train_s": 5, "eval_s": 12, "checkpoint_s": 1, "compile_s": 2,
                    "selfplay_positions_per_s": 420})
    text = "\n".join(check["phase_report"](tmp_path, 90.0, 180.0, 25, 500.0))
    assert "| 2 | 4.00 | 5.00 | 0.00 | 1.00 | 0.00 | 400 |" in text and "| 0 | 0.00 | 0.00 | 30.00 |" in text
    assert "Wall time 90 s with the limit at 180 s; the phases selfplay 23 s (26%), train 15 s (17%), eval 42 s " \
           "(47%), checkpoint 3 s (3%); the rest (7 s" in text
    assert "410 positions/s (median of iterations 2 on, 0.82x bench_zero's 500)" in text
    # Evaluations 10 s each once their compile is taken out, iterations 10 s: 10 / (10 + 25 x 10).
    assert "An evaluation takes 10.0 s (median), an iteration without it 10.0 s (mean" in text
    assert "evaluation would be 4% of the wall time" in text
