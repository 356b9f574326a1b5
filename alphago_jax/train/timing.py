"""Where a run's wall time goes, and what still fits in its time limit.

- ``WallClock``: the clock a run reads: wall seconds (``now``) and the seconds JAX has spent
  tracing, lowering and compiling programs, or reading them back from the persistent
  compilation cache (``compile_seconds``, from ``jax.monitoring``'s compile events). Tests
  drive a fake clock with the same two methods instead, so that no test waits.
- ``PhaseTimer``: the wall seconds of each named part of an iteration (``selfplay``,
  ``train``, ``eval`` and each match of it, ``checkpoint``) and the compile seconds within
  them; it says once how long each program took to compile on its first run, and says so
  again if a program is ever compiled a second time (its input shapes or shardings changed).
- ``TimeBudget`` and ``plan_end``: a time limit as a deadline, and the decision taken at the end
  of each iteration's training: whether another iteration, its evaluation and the final
  evaluation and checkpoint still fit before the deadline, and if not, which matches of the
  last evaluation fit (the others are skipped and named).

Estimates are the last run of each part in this process, less what it spent compiling: a
program's first run says little about its next.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from typing import Callable, Mapping, NamedTuple, Protocol, Sequence

COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    "/jax/core/compile/backend_compile_duration",
)
"""JAX's duration events of turning a program into an executable: tracing to a jaxpr, lowering
to MLIR, and XLA's compile (or the read from the persistent cache). Each is recorded for
top-level programs only, so their sum counts no second twice."""

PHASES = ("selfplay", "train", "eval", "checkpoint")
"""The phases of an iteration: every metrics row has ``<phase>_s`` for each."""

RECOMPILE_NOTE_S = 1.0
"""Compile seconds in a later run of a part that make ``PhaseTimer`` say it was compiled again."""


class Clock(Protocol):
    """What ``PhaseTimer`` and the run read: ``now()`` wall seconds, ``compile_seconds()`` the
    seconds spent compiling so far (both only ever grow)."""

    def now(self) -> float: ...

    def compile_seconds(self) -> float: ...


class WallClock:
    """``time.perf_counter`` and the compile seconds JAX reports while the clock is open.

    Use as a context manager (``open`` / ``close``): it registers a ``jax.monitoring`` listener
    for ``COMPILE_EVENTS`` and removes it on leaving. Compiles in any thread count.
    """

    def __init__(self):
        self._compiled = 0.0
        self._lock = threading.Lock()
        self._open = False

    def _listen(self, event: str, duration: float, **_) -> None:
        if event in COMPILE_EVENTS:
            with self._lock:
                self._compiled += float(duration)

    def open(self) -> "WallClock":
        import jax

        if not self._open:
            jax.monitoring.register_event_duration_secs_listener(self._listen)
            self._open = True
        return self

    def close(self) -> None:
        import jax

        if self._open:
            jax.monitoring.unregister_event_duration_listener(self._listen)
            self._open = False

    def __enter__(self) -> "WallClock":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def now(self) -> float:
        return time.perf_counter()

    def compile_seconds(self) -> float:
        with self._lock:
            return self._compiled


class PhaseTimer:
    """Wall and compile seconds of the named parts of one iteration (see the module docstring).

        timer = PhaseTimer(clock, say=print)
        with timer("selfplay"):
            ...                       # block until the results are on the host inside
        row.update(timer.row())       # {"selfplay_s": ..., "train_s": 0.0, ..., "compile_s": ...}
        timer.reset()                 # the next iteration

    ``report=False`` parts (a phase made of parts that report themselves) say nothing about
    their compiles. Parts may nest; ``compile_s`` counts each compiled second once.
    """

    def __init__(self, clock: Clock, say: Callable[[str], None] | None = None):
        self.clock = clock
        self.say = say or (lambda text: None)
        self.seconds: dict[str, float] = {}  # this iteration's, per part
        self.compiled: dict[str, float] = {}
        self._latest: dict[str, tuple[float, float]] = {}  # part -> (seconds, compile seconds) of its last run
        self._first_compile: dict[str, float] = {}
        self._recompiled: set[str] = set()
        self._compile_at_reset = clock.compile_seconds()

    @contextlib.contextmanager
    def __call__(self, name: str, report: bool = True):
        t0, c0 = self.clock.now(), self.clock.compile_seconds()
        try:
            yield
        finally:
            wall, compiled = self.clock.now() - t0, self.clock.compile_seconds() - c0
            self.seconds[name] = self.seconds.get(name, 0.0) + wall
            self.compiled[name] = self.compiled.get(name, 0.0) + compiled
            first = name not in self._latest
            self._latest[name] = (wall, compiled)
            if first:
                self._first_compile[name] = compiled
                if report:
                    self.say(f"{name}: first run {wall:.1f} s, of which {compiled:.1f} s compiling")
            elif report and compiled >= RECOMPILE_NOTE_S and name not in self._recompiled:
                self._recompiled.add(name)
                self.say(f"{name}: compiled again on a later run ({compiled:.1f} s): its inputs changed shape "
                         "or placement")

    def reset(self) -> None:
        """Start a new iteration's row."""
        self.seconds, self.compiled = {}, {}
        self._compile_at_reset = self.clock.compile_seconds()

    def row(self, extra: Sequence[str] = ()) -> dict[str, float]:
        """This iteration's metrics: ``<phase>_s`` for every phase of ``PHASES`` (0 where it did
        not run), ``<part>_s`` for the ``extra`` parts that ran, and ``compile_s``."""
        out = {f"{p}_s": self.seconds.get(p, 0.0) for p in PHASES}
        out.update({f"{p}_s": self.seconds[p] for p in extra if p in self.seconds})
        out["compile_s"] = self.clock.compile_seconds() - self._compile_at_reset
        return out

    def estimate(self, name: str) -> float | None:
        """Seconds of the next run of ``name``: its last run's, less what that run spent
        compiling; None if it has not run."""
        if name not in self._latest:
            return None
        wall, compiled = self._latest[name]
        return max(0.0, wall - compiled)

    def first_compile(self, name: str) -> float | None:
        """The compile seconds of the first run of ``name`` (None if it has not run)."""
        return self._first_compile.get(name)


@dataclasses.dataclass(frozen=True)
class TimeBudget:
    """``limit`` seconds (None: no limit) from ``start`` on the run's clock."""

    limit: float | None
    start: float

    def left(self, now: float) -> float:
        """Seconds to the deadline (negative past it; ``inf`` without a limit)."""
        return math.inf if self.limit is None else self.start + self.limit - now


class EndPlan(NamedTuple):
    """What the rest of an iteration does (``plan_end``).

    Attributes:
      last: the run ends after this iteration (its count is reached, or time is short).
      play: the matches of this iteration's evaluation, in order (empty: no evaluation).
      skipped: matches of the last evaluation left out for lack of time.
    """

    last: bool
    play: tuple[str, ...]
    skipped: tuple[str, ...]


def plan_end(left: float, *, final: bool, due: bool, matches: Sequence[str], cost: Mapping[str, float | None],
             iteration_s: float | None, checkpoint_s: float | None) -> EndPlan:
    """Whether the iteration whose training just ended is the last, and what it evaluates.

    Another iteration follows when time is left and, in the ``left`` seconds to the deadline,
    there is room for this iteration's checkpoint (and its evaluation if one is ``due``), one
    more iteration, and the final evaluation and checkpoint after it. Otherwise (or when
    ``final``) this iteration is the last: its evaluation plays the ``matches`` in order, each
    one whose ``cost`` fits in what is left before the checkpoint; the others are ``skipped``.
    Unknown costs (None) count as 0, so a part never timed runs while any time is left. So a run
    ends within its limit plus one iteration, as long as the estimates hold.

    Args:
      left: seconds to the deadline (``TimeBudget.left``; ``inf`` without a limit).
      final: the run's iteration count is reached.
      due: a periodic evaluation falls on this iteration.
      matches: the evaluation's matches, in order of priority (empty: no evaluation at all).
      cost: estimated seconds of each match.
      iteration_s: estimated seconds of self-play and training of an iteration.
      checkpoint_s: estimated seconds of a checkpoint.
    """
    def c(x):
        return 0.0 if x is None else float(x)

    evaluation = sum(c(cost.get(m)) for m in matches)
    if not final:
        need = c(checkpoint_s) + (evaluation if due else 0.0) + c(iteration_s) + evaluation + c(checkpoint_s)
        if left > 0 and left >= need:
            return EndPlan(False, tuple(matches) if due else (), ())
    play, skipped, room = [], [], left - c(checkpoint_s)
    for m in matches:
        if room > 0 and c(cost.get(m)) <= room:
            play.append(m)
            room -= c(cost.get(m))
        else:
            skipped.append(m)
    return EndPlan(True, tuple(play), tuple(skipped))


__all__ = ["COMPILE_EVENTS", "Clock", "EndPlan", "PHASES", "PhaseTimer", "TimeBudget", "WallClock", "plan_end"]
