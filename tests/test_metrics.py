"""The run logger's CSV (resumed runs, new columns) and its plots."""

from __future__ import annotations

import csv
import importlib.util

import chex
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.train import metrics
from alphago_jax.train.metrics import RunLogger


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_csv_round_trip_with_a_resumed_run(tmp_path):
    path = tmp_path / "run" / "metrics.csv"
    with RunLogger(path) as log:
        for step in range(4):
            log.log(step, {"loss": 1.0 / (step + 1), "policy_loss": jnp.float32(0.5), "games": 3 * step})
    # Resume from a checkpoint at step 2: step 3 is dropped, then steps 3 and 4 are logged again.
    with RunLogger(path, resume_step=2) as log:
        assert log.columns == ["step", "loss", "policy_loss", "games"]
        log.log(3, {"loss": 0.2, "policy_loss": 0.4, "games": 9})
        log.log(4, {"loss": 0.1, "policy_loss": 0.3, "games": 12})

    table = rows_of(path)
    assert table[0] == ["step", "loss", "policy_loss", "games"]
    assert sum(r[0] == "step" for r in table) == 1  # one header
    data = metrics.read_metrics(path)
    np.testing.assert_array_equal(data["step"], [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(data["loss"], [1.0, 0.5, 1.0 / 3, 0.2, 0.1])  # floats round-trip
    np.testing.assert_array_equal(data["games"], [0, 3, 6, 9, 12])
    assert table[1][3] == "0"  # ints stay ints
    chex.assert_shape(list(data.values()), (5,))


def test_new_keys_widen_the_csv_and_missing_keys_leave_empty_cells(tmp_path):
    path = tmp_path / "metrics.csv"
    with RunLogger(path) as log:
        log.log(0, {"loss": 2.0})
        log.log(10, {"loss": 1.5, "elo": 12.5})  # a new column appears
        log.log(20, {"elo": 30.0})  # loss omitted
    with RunLogger(path) as log:  # resumed without truncation, then one more new key
        log.log(30, {"loss": 1.0, "value_loss": 0.25})

    table = rows_of(path)
    assert table[0] == ["step", "loss", "elo", "value_loss"]
    assert all(len(r) == 4 for r in table)  # rectangular
    assert table[1] == ["0", "2.0", "", ""]
    data = metrics.read_metrics(path)
    np.testing.assert_array_equal(data["step"], [0, 10, 20, 30])
    np.testing.assert_array_equal(data["loss"], [2.0, 1.5, np.nan, 1.0])
    np.testing.assert_array_equal(data["elo"], [np.nan, 12.5, 30.0, np.nan])
    assert not list(tmp_path.glob("*.tmp"))  # no temporary files left behind


def test_bad_inputs(tmp_path):
    with RunLogger(tmp_path / "m.csv") as log:
        with pytest.raises(ValueError, match="step"):
            log.log(0, {"step": 1})
        with pytest.raises(ValueError, match="scalar"):
            log.log(0, {"loss": np.zeros(3)})
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="first column"):
        RunLogger(tmp_path / "other.csv")


def test_tensorboard_is_optional(tmp_path):
    with RunLogger(tmp_path / "m.csv", tensorboard_dir=tmp_path / "tb") as log:
        log.log(0, {"loss": 1.0})
        installed = importlib.util.find_spec("tensorboardX") is not None
        assert (log.tensorboard is not None) == installed
    assert metrics.read_metrics(tmp_path / "m.csv")["loss"].tolist() == [1.0]


def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "metrics.csv"
    with RunLogger(path) as log:
        for step in range(0, 100, 10):
            log.log(step, {"loss": 3.0 - step / 50, "policy_loss": 2.0 - step / 100, "value_loss": 1.0})
            if step % 30 == 0:  # Elo measured less often, with its interval
                log.log(step, {"elo": step * 2.0, "elo_low": step * 2.0 - 40, "elo_high": step * 2.0 + 40})
    png = metrics.plot_metrics(path, tmp_path / "plots" / "curves.png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    png2 = metrics.plot_metrics(path, tmp_path / "loss.png", keys=[["policy_loss", "value_loss"], "elo"])
    assert png2.stat().st_size > 0
    with pytest.raises(ValueError, match="no column 'nope'"):
        metrics.plot_metrics(path, tmp_path / "x.png", keys=["nope"])
