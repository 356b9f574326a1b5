"""A run logger (CSV, optionally TensorBoard) and plots of its curves.

``RunLogger`` appends one row per ``log(step, metrics)`` call to a CSV file whose first column
is ``step``::

    with RunLogger("runs/zero/metrics.csv", tensorboard_dir="runs/zero/tb") as log:
        log.log(step, {"loss": 2.1, "policy_loss": 1.8})     # floats, ints, 0-d arrays
        log.log(step, {"elo": 35.0, "elo_low": 10.0, "elo_high": 61.0})
    plot_metrics("runs/zero/metrics.csv", "runs/zero/curves.png")

CSV behaviour:

- The header is written once, when the file is created (or is empty).
- Re-opening an existing file (a resumed run) reads its header and appends below it; with
  ``resume_step=s`` the rows with ``step > s`` are dropped first (they came from the part of the
  interrupted run after the checkpoint being resumed, and would be logged again).
- A row may omit columns: their cells are left empty (read back as NaN).
- A key never seen before adds a column: the file is rewritten once with the wider header
  (earlier rows get empty cells in the new column), written to a temporary file and renamed
  over the old one, so the CSV is always rectangular and a crash leaves the old or the new
  file, never a mix. Columns keep the order in which their keys first appeared.
- Each row is flushed as it is written, so the file can be read or plotted during a run.

TensorBoard: with ``tensorboard_dir`` and the ``tensorboardX`` package (the optional extra
``alphago_jax[tensorboard]``) every numeric value is also written as a scalar summary; without
the package the argument is ignored, and ``RunLogger.tensorboard`` is ``None``.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import pathlib
from typing import Any, Mapping, Sequence

import numpy as np

from alphago_jax.files import write_atomic

STEP = "step"

_log = logging.getLogger(__name__)


def _cell(value: Any) -> str:
    """CSV text of one metric value: numbers round-trip exactly (``repr`` of a float)."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    x = np.asarray(value)
    if x.size != 1:
        raise ValueError(f"metric values must be scalars, got an array of shape {x.shape}")
    x = x.reshape(()).item()
    if isinstance(x, bool):
        return str(int(x))
    if isinstance(x, int):
        return str(x)
    return repr(float(x))


def _read_rows(path: pathlib.Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _write_csv(path: pathlib.Path, columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> None:
    """Replace ``path`` with a CSV of ``columns`` and ``rows`` (missing cells empty), atomically."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(columns), restval="")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue().encode())


def _open_tensorboard(logdir):
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        _log.info("tensorboardX is not installed: not writing TensorBoard summaries to %s", logdir)
        return None
    return SummaryWriter(str(logdir))


class RunLogger:
    """Appends rows of metrics to a CSV file (and TensorBoard); see the module docstring.

    Args:
      csv_path: the CSV file; created with its parent folders if absent, appended to if present.
      tensorboard_dir: also write TensorBoard summaries there if ``tensorboardX`` is importable.
      resume_step: drop existing rows with ``step`` greater than this before appending.
    """

    def __init__(self, csv_path, *, tensorboard_dir=None, resume_step: int | None = None):
        self.path = pathlib.Path(csv_path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.columns: list[str] = [STEP]
        if self.path.exists() and self.path.stat().st_size > 0:
            columns, rows = _read_rows(self.path)
            if not columns or columns[0] != STEP:
                raise ValueError(f"{self.path}: not a metrics CSV (its first column is not {STEP!r})")
            self.columns = columns
            if resume_step is not None:
                kept = [r for r in rows if not r[STEP] or float(r[STEP]) <= resume_step]
                if len(kept) < len(rows):
                    _write_csv(self.path, columns, kept)
        else:
            _write_csv(self.path, self.columns, [])
        self._file = open(self.path, "a", newline="")
        self.tensorboard = None if tensorboard_dir is None else _open_tensorboard(tensorboard_dir)

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Append one row: ``step`` and the scalar ``metrics`` (numbers, 0-d arrays or strings)."""
        if STEP in metrics:
            raise ValueError(f"{STEP!r} is the row's own column; pass it as the step argument")
        row = {STEP: _cell(int(step)), **{str(k): _cell(v) for k, v in metrics.items()}}
        new = [k for k in row if k not in self.columns]
        if new:
            self._widen(new)
        csv.DictWriter(self._file, fieldnames=self.columns, restval="").writerow(row)
        self._file.flush()
        if self.tensorboard is not None:
            for k, v in metrics.items():
                if not isinstance(v, str) and v is not None:
                    self.tensorboard.add_scalar(str(k), float(np.asarray(v)), int(step))

    def _widen(self, new: Sequence[str]) -> None:
        self._file.close()
        _, rows = _read_rows(self.path)
        self.columns = self.columns + list(new)
        _write_csv(self.path, self.columns, rows)
        self._file = open(self.path, "a", newline="")

    def close(self) -> None:
        self._file.close()
        if self.tensorboard is not None:
            self.tensorboard.close()

    def __enter__(self) -> "RunLogger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_metrics(csv_path) -> dict[str, np.ndarray]:
    """Columns of a metrics CSV as float64 arrays of equal length (empty or non-numeric cells
    are NaN), in file order."""
    columns, rows = _read_rows(pathlib.Path(csv_path))

    def number(text):
        try:
            return float(text) if text else math.nan
        except ValueError:
            return math.nan

    return {c: np.array([number(r.get(c) or "") for r in rows], np.float64) for c in columns}


def _default_panels(columns: Sequence[str]) -> list[list[str]]:
    def band(c):
        return c.endswith("_low") or c.endswith("_high")

    losses = [c for c in columns if "loss" in c.lower() and not band(c)]
    elos = [c for c in columns if "elo" in c.lower() and not band(c)]
    return [p for p in (losses, elos) if p]


def plot_metrics(csv_path, png_path, keys: Sequence[str | Sequence[str]] | None = None) -> pathlib.Path:
    """Draw metric curves against ``step`` into a PNG (matplotlib, Agg canvas; no display).

    Args:
      csv_path: a ``RunLogger`` CSV.
      png_path: the image to write (parent folders are created).
      keys: panels, top to bottom: each a column name or a sequence of column names sharing
        one axis. Default: every ``*loss*`` column in one panel and every ``*elo*`` column in
        another. A column ``k`` with companions ``k_low`` and ``k_high`` (e.g. the ends of a
        95% interval) is drawn with its band shaded. Steps where a column is empty are skipped,
        so a metric logged every N steps is still one line.

    Returns:
      ``png_path`` as a ``pathlib.Path``.

    Raises:
      ValueError: a requested column is not in the file, or no column to plot.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    data = read_metrics(csv_path)
    if keys is None:
        panels = _default_panels(list(data))
    else:
        panels = [[k] if isinstance(k, str) else list(k) for k in keys]
    for key in (k for panel in panels for k in panel):
        if key not in data:
            raise ValueError(f"plot_metrics: no column {key!r} in {csv_path} (columns: {list(data)})")
    if not panels:
        raise ValueError(f"plot_metrics: nothing to plot in {csv_path} (columns: {list(data)})")

    step = data[STEP]
    fig = Figure(figsize=(7, 2.6 * len(panels)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        for key in panel:
            ok = np.isfinite(data[key]) & np.isfinite(step)
            (line,) = ax.plot(step[ok], data[key][ok], label=key)
            low, high = data.get(f"{key}_low"), data.get(f"{key}_high")
            if low is not None and high is not None:
                band = ok & np.isfinite(low) & np.isfinite(high)
                ax.fill_between(step[band], low[band], high[band], color=line.get_color(), alpha=0.2)
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1].set_xlabel(STEP)
    out = pathlib.Path(png_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    return out


__all__ = ["RunLogger", "plot_metrics", "read_metrics"]
