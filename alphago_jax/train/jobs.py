"""What every resumable training job shares: settings, run directory, loop.

A job of the AlphaGo pipeline (``sl-train``, ``rollout-train``, ``rl-train``, ``value-train``)
writes into one run directory (AlphaGo Zero's main job, ``zero``, uses the run directory
and settings helpers, with a loop of its own)::

    <out>/checkpoints/<step>/   Checkpointer(kind=<job kind>): the whole job state + its settings
    <out>/metrics.csv           RunLogger rows (rows past the checkpoint resumed from are dropped)
    <out>/metrics.png           the curves, drawn at the end

Settings are a frozen dataclass (``JobConfig``): hashable (jitted functions close over them),
saved with every checkpoint, overridable from the command line (``--set name=value``). A run
directory that holds checkpoints is refused without ``resume``; a resumed run must have the
same settings as the saved ones, except its length (``JobConfig.LENGTH``: steps, iterations),
which may grow to extend the run.

The loop state is whatever the job saves (``Job.save``); the jobs make every random draw and
every batch a function of the seed and the step, so a run resumed from step ``k`` repeats
exactly what the uninterrupted run did after ``k``.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Mapping

import numpy as np

from alphago_jax.train.checkpoint import Checkpointer, CheckpointError
from alphago_jax.train.metrics import RunLogger, plot_metrics, read_metrics


def parse_value(text: str, current: Any) -> Any:
    """A command-line value: JSON (numbers, true/false, null, lists) or, failing that, text.

    An int where the field holds a float becomes a float; a list where it holds a tuple, a tuple;
    ``True`` / ``False`` (any case) where it holds a bool, a bool; ``none`` (any case) where it
    holds anything but text, None (as ``null``).
    """
    if isinstance(current, bool) and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    if not isinstance(current, str) and text.strip().lower() == "none":
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    if isinstance(current, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(current, tuple) and isinstance(value, list):
        return tuple(value)
    return value


@dataclasses.dataclass(frozen=True)
class JobConfig:
    """Base of the jobs' settings: dict round trip and command-line overrides.

    Subclasses are frozen dataclasses of JSON-able fields (numbers, strings, None, tuples),
    validated with ``alphago_jax.checks``. ``LENGTH`` names the field that may differ when a run
    is resumed (to extend it).
    """

    LENGTH = "steps"

    def to_dict(self) -> dict:
        """JSON-able: numbers, strings, None and lists."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]):
        """The inverse of ``to_dict``; unknown keys raise ValueError naming them."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown {cls.__name__} fields {unknown}; known: {sorted(known)}")
        current = {f.name: getattr(cls, f.name, None) for f in dataclasses.fields(cls)}
        return cls(**{k: tuple(v) if isinstance(current[k], tuple) else v for k, v in d.items()})

    @classmethod
    def build(cls, base=None, overrides: Mapping[str, str] | None = None, values: Mapping[str, Any] | None = None):
        """Settings from ``base`` (default: the defaults), then ``overrides`` ``{"name": "text"}``
        (JSON values, else text, as ``--set`` gives them), then ``values`` as they are.

        Raises:
          ValueError: an unknown name (the known ones listed) or an invalid value.
        """
        names = [f.name for f in dataclasses.fields(cls)]
        fields = base.to_dict() if base is not None else {}
        for name, text in {**(overrides or {}), **(values or {})}.items():
            if name not in names:
                raise ValueError(f"unknown setting {name!r}; known: {', '.join(names)}")
            current = fields.get(name, getattr(cls, name, None))
            raw = (overrides or {}).get(name) if name not in (values or {}) else None
            fields[name] = parse_value(raw, current) if raw is not None else values[name]
        try:
            return cls.from_dict(fields)
        except TypeError as e:
            raise ValueError(f"bad setting: {e}") from None


def checkpoint_dir(out_dir) -> pathlib.Path:
    """Where a run directory keeps its checkpoints."""
    return pathlib.Path(out_dir) / "checkpoints"


def saved_config(out_dir, kind: str, config_type):
    """The settings of the ``kind`` run in ``out_dir`` (from its latest checkpoint), or None.

    Raises CheckpointError (naming the path) for a corrupted or foreign checkpoint directory.
    """
    ckpt = Checkpointer(checkpoint_dir(out_dir), kind=kind, read_only=True)
    latest = ckpt.latest_step()
    if latest is None:
        return None
    try:
        return config_type.from_dict(ckpt.metadata(latest)["config"])
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{ckpt.directory / str(latest)}: not readable {kind} settings ({e})") from None


class Job:
    """One run directory of a job: checkpoints, metrics log, progress bar.

    Args:
      out_dir: the run directory (created).
      kind: the checkpoints' kind (``"sl"``, ``"rollout"``, ``"rl"``, ``"value"``).
      config: the run's ``JobConfig``; checked against the saved one when resuming.
      total: the run's length in steps (the progress bar's total).
      resume: continue from the latest checkpoint; without it a directory holding checkpoints
        is refused.
      keep: checkpoints kept.
      progress: show a progress bar (tqdm, on stderr).
      desc: the progress bar's label.

    Attributes:
      start: the step of the checkpoint resumed from (0 for a fresh run).

    Raises:
      ValueError (``CheckpointError``): a foreign or corrupted directory, checkpoints without
        ``resume``, or other settings than the saved run's; the message names the path.
    """

    def __init__(self, out_dir, kind: str, config: JobConfig, total: int, *, resume: bool, keep: int = 2,
                 progress: bool = True, desc: str | None = None):
        from tqdm.auto import tqdm

        self.out = pathlib.Path(out_dir).absolute()
        self.kind, self.config = kind, config
        self.ckpt = Checkpointer(checkpoint_dir(self.out), kind=kind, keep=keep)
        latest = self.ckpt.latest_step()
        if latest is not None and not resume:
            raise ValueError(f"{self.ckpt.directory}: holds checkpoints of a {kind} run (up to step {latest}); "
                             "pass --resume to continue it, or choose another output directory")
        if latest is not None:
            saved = saved_config(self.out, kind, type(config))
            da, db = saved.to_dict(), config.to_dict()
            differences = [f"{k}: {da[k]!r} vs {db[k]!r}" for k in da if k != config.LENGTH and da[k] != db[k]]
            if differences:
                raise ValueError(f"{self.ckpt.directory / str(latest)}: the run there has other settings "
                                 f"({'; '.join(differences)}); resume it with its own settings")
        self.start = latest or 0
        self.metrics_path = self.out / "metrics.csv"
        self.logger = RunLogger(self.metrics_path, resume_step=self.start)
        self.bar = tqdm(total=total, initial=min(self.start, total), desc=desc or kind, unit="step",
                        disable=not progress, dynamic_ncols=True)

    def restore(self, target):
        """The saved state (in ``target``'s structure) at ``start``, or ``target`` for a fresh run."""
        if not self.start:
            return target
        return self.ckpt.restore(self.start, target=target).state

    def save(self, step: int, state, **metadata) -> pathlib.Path:
        """Checkpoint ``state`` at ``step`` with the settings and ``metadata``."""
        return self.ckpt.save(step, state, metadata={"config": self.config.to_dict(), "step": int(step), **metadata})

    def log(self, step: int, row: Mapping[str, Any], postfix: tuple[str, ...] = ()) -> None:
        """Append a metrics row; show the ``postfix`` entries of it on the bar."""
        self.logger.log(step, row)
        shown = {k: f"{row[k]:.3g}" for k in postfix if k in row}
        if shown:
            self.bar.set_postfix(shown)

    def say(self, text: str) -> None:
        """A line of output that does not break the progress bar."""
        from tqdm.auto import tqdm

        tqdm.write(text)

    def close(self, panels=None) -> pathlib.Path | None:
        """Close the log and the checkpointer; draw ``metrics.png`` (the ``panels`` present)."""
        self.bar.close()
        self.logger.close()
        self.ckpt.close()
        columns = read_metrics(self.metrics_path)
        keys = [[k for k in panel if k in columns and np.any(np.isfinite(columns[k]))] for panel in panels or ()]
        keys = [k for k in keys if k]
        try:
            return plot_metrics(self.metrics_path, self.out / "metrics.png", keys=keys or None)
        except ValueError:  # nothing logged to plot
            return None


def latest_state(run_dir, kinds: tuple[str, ...]) -> tuple[str, int, dict, dict]:
    """The latest checkpoint of a run of one of ``kinds``: ``(kind, step, state, metadata)``.

    The state comes back as orbax stores it (dicts and lists of arrays).

    Raises:
      ValueError (``CheckpointError``): no run directory, no checkpoint, or a run of another
        kind; the message names the path.
    """
    directory = checkpoint_dir(run_dir)
    if not directory.is_dir():
        raise CheckpointError(f"{directory}: no such checkpoint directory: is {run_dir} the --out of a "
                              f"{' or '.join(kinds)} run?")
    last_error = None
    for kind in kinds:
        try:
            ckpt = Checkpointer(directory, kind=kind, read_only=True)
        except CheckpointError as e:
            last_error = e
            continue
        if ckpt.latest_step() is None:
            raise CheckpointError(f"{directory}: no checkpoint yet")
        restored = ckpt.restore()
        return kind, restored.step, restored.state, restored.metadata
    raise last_error


__all__ = ["Job", "JobConfig", "checkpoint_dir", "latest_state", "parse_value", "saved_config"]
