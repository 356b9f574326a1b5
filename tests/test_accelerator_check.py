"""``experiments/accelerator_check.py --smoke``: every step runs in its own process, and the one
report holds each benchmark's table and the main job's phase times."""

from __future__ import annotations

import pathlib
import re
import runpy
import sys

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
    assert re.search(r"^\| 0 \| 0\.0 \| 0\.0 \| [\d.]+ \| 0\.0 \|", report, re.M)  # the untrained network's evaluation
    assert re.search(r"^\| 1 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", report, re.M)
    assert "x bench_zero's" in report and "of the wall time" in report
