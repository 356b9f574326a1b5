"""Where the main job's time goes, and its time limit (``train.timing``, ``zero.train``).

- ``plan_end`` decides, from estimates, whether another iteration fits before the deadline and
  which matches of the last evaluation fit.
- ``PhaseTimer`` on a hand-driven clock: per-phase seconds, compile seconds, the first-run
  note said once and a recompile noticed.
- ``WallClock`` counts what JAX reports compiling while it is open, and nothing after.
- The whole job on the ``smoke`` preset with a driven clock: the clock moves only when the
  job's programs run, by set amounts (more on a program's first call: its compile), so the
  time limit is tested on exact figures without waiting. A run whose final evaluation does not
  fit whole plays the matches that fit and says which it left out; resumed with no time left,
  it runs one iteration, skips the evaluation and checkpoints. The metrics rows carry the
  phases' seconds as the clock measured them.
"""

from __future__ import annotations

import csv
import math

import jax
import jax.numpy as jnp

from alphago_jax import zero
from alphago_jax.train import Checkpointer, timing
from alphago_jax.train.timing import EndPlan, PhaseTimer, TimeBudget, WallClock, plan_end


# ------------------------------------------------------------------------------- planning

COST = {"random": 20.0, "mcts": 25.0, "best": 55.0}


def plan(left, final=False, due=False, matches=("random", "mcts", "best"), cost=COST, iteration_s=14.0,
         checkpoint_s=2.0):
    return plan_end(left, final=final, due=due, matches=matches, cost=cost, iteration_s=iteration_s,
                    checkpoint_s=checkpoint_s)


def test_another_iteration_needs_room_for_itself_and_the_final_evaluation():
    # Another iteration: checkpoint 2 + iteration 14 + final evaluation 100 + checkpoint 2 = 118.
    assert plan(118.0) == EndPlan(False, (), ())
    assert plan(math.inf) == EndPlan(False, (), ())
    # A periodic evaluation now adds its 100 s.
    assert plan(217.9, due=True).last and plan(218.0, due=True) == EndPlan(False, ("random", "mcts", "best"), ())
    # Short of it: this iteration is the last, with the whole evaluation (it fits).
    assert plan(117.9) == EndPlan(True, ("random", "mcts", "best"), ())
    # Less time: the matches that fit before the checkpoint, in order; a cheaper later one still plays.
    assert plan(60.0) == EndPlan(True, ("random", "mcts"), ("best",))
    assert plan(40.0) == EndPlan(True, ("random",), ("mcts", "best"))
    assert plan(40.0, cost={"random": 20.0, "mcts": 25.0, "best": 5.0}) == EndPlan(True, ("random", "best"), ("mcts",))
    # No time left (or past the deadline): no evaluation at all.
    assert plan(2.0) == EndPlan(True, (), ("random", "mcts", "best"))
    assert plan(-5.0, final=True) == EndPlan(True, (), ("random", "mcts", "best"))


def test_the_last_iteration_and_unknown_costs():
    # The iteration count reached: the last, its whole evaluation when there is no limit.
    assert plan(math.inf, final=True) == EndPlan(True, ("random", "mcts", "best"), ())
    # Never timed (None): counted as free while any time is left, skipped when none is.
    unknown = {"random": None, "mcts": None, "best": None}
    assert plan(3.0, cost=unknown, iteration_s=None, checkpoint_s=None) == EndPlan(False, (), ())
    assert plan(0.0, cost=unknown, iteration_s=None, checkpoint_s=None) == EndPlan(True, (), ("random", "mcts", "best"))
    # No evaluation configured: only the iteration and checkpoints count.
    assert plan(18.0, matches=()) == EndPlan(False, (), ())
    assert plan(17.0, matches=()) == EndPlan(True, (), ())


def test_budget_counts_down_from_its_start():
    assert TimeBudget(100.0, 50.0).left(120.0) == 30.0 and TimeBudget(100.0, 50.0).left(170.0) == -20.0
    assert TimeBudget(None, 50.0).left(1e9) == math.inf


# ------------------------------------------------------------------------------- timing

class DrivenClock:
    """A ``timing.Clock`` that moves only when told to: ``spend(seconds, compile)``."""

    def __init__(self):
        self.t, self.compiled = 0.0, 0.0

    def now(self) -> float:
        return self.t

    def compile_seconds(self) -> float:
        return self.compiled

    def spend(self, seconds: float, compile: float = 0.0) -> None:
        self.t += seconds + compile
        self.compiled += compile


def test_phase_timer_rows_estimates_and_notes():
    clock, said = DrivenClock(), []
    timer = PhaseTimer(clock, say=said.append)
    with timer("selfplay"):
        clock.spend(10.0, compile=30.0)
    with timer("eval", report=False):
        with timer("eval_random"):
            clock.spend(5.0, compile=2.0)
        with timer("eval_mcts"):
            clock.spend(4.0)
    assert timer.row(("eval_random", "eval_mcts", "eval_best")) == {
        "selfplay_s": 40.0, "train_s": 0.0, "eval_s": 11.0, "checkpoint_s": 0.0, "eval_random_s": 7.0,
        "eval_mcts_s": 4.0, "compile_s": 32.0}
    assert timer.estimate("selfplay") == 10.0 and timer.estimate("eval_random") == 5.0
    assert timer.estimate("train") is None and timer.first_compile("selfplay") == 30.0
    assert said == ["selfplay: first run 40.0 s, of which 30.0 s compiling",
                    "eval_random: first run 7.0 s, of which 2.0 s compiling",
                    "eval_mcts: first run 4.0 s, of which 0.0 s compiling"]
    # The next iteration: a plain run says nothing; a recompile is noticed once.
    timer.reset()
    with timer("selfplay"):
        clock.spend(12.0)
    for _ in range(2):
        with timer("eval_mcts"):
            clock.spend(4.0, compile=3.0)
    assert timer.row()["selfplay_s"] == 12.0 and timer.row()["compile_s"] == 6.0
    assert timer.estimate("selfplay") == 12.0 and timer.estimate("eval_mcts") == 4.0
    assert len(said) == 4 and said[-1].startswith("eval_mcts: compiled again on a later run (3.0 s)")


def test_wall_clock_counts_compiles_while_open():
    with WallClock() as clock:
        before = clock.compile_seconds()
        jax.jit(lambda x: x * 3.0 + 1.0)(jnp.ones(7)).block_until_ready()
        during = clock.compile_seconds()
    assert during > before
    jax.jit(lambda x: x * 5.0 - 2.0)(jnp.ones(9)).block_until_ready()
    assert clock.compile_seconds() == during  # closed: no longer listening
    assert timing.PHASES == ("selfplay", "train", "eval", "checkpoint")


# -------------------------------------------------------------------- the job, driven clock

# Seconds per call, and the extra seconds of a program's first call in a session (its compile).
COSTS = {"selfplay": (10.0, 30.0), "train_step": (1.0, 8.0), "random": (20.0, 15.0), "mcts": (25.0, 15.0),
         "best": (40.0, 15.0)}
CONFIG = zero.with_overrides(zero.PRESETS["smoke"], {"iterations": "10"})  # evaluations at the start and the end


BUILD = zero.build


def driven_build(clock: DrivenClock):
    """``zero.build`` whose programs move ``clock`` by ``COSTS`` when they run."""

    def wrapped(config, mesh=None):
        programs = BUILD(config, mesh)
        seen = set()

        def costly(name, f):
            def run(*args):
                out = f(*args)
                seconds, compile = COSTS[name]
                clock.spend(seconds, 0.0 if name in seen else compile)
                seen.add(name)
                return out

            return run

        return programs._replace(selfplay=costly("selfplay", programs.selfplay),
                                 train_step=costly("train_step", programs.train_step),
                                 matches={n: costly(n, f) for n, f in programs.matches.items()})

    return wrapped


def rows_of(run) -> list[dict]:
    with open(run / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_time_limit_with_a_driven_clock(tmp_path, monkeypatch):
    run = tmp_path / "run"
    clock, said = DrivenClock(), []
    monkeypatch.setattr(zero.loop, "build", driven_build(clock))
    result = zero.train(CONFIG, run, progress=False, log=said.append, time_limit=200.0, clock=clock)
    # Start: random (15 + 20) and MCTS (15 + 25) = 75 s. Iteration 1: self-play 30 + 10, training
    # 8 + 4 x 1: t = 127, 73 s left; another iteration needs 14 + the final evaluation (20 + 25 +
    # about 2 x 20 + 15 against the best) = 114: iteration 1 is the last. Before its checkpoint,
    # 73 s hold random and MCTS (45 s), not the best network's match.
    assert result.iterations == 1 and clock.t == 172.0 <= 200.0
    assert Checkpointer(run / "checkpoints", kind="zero", read_only=True).all_steps() == [1]
    rows = rows_of(run)
    assert [r["step"] for r in rows] == ["0", "1"]
    start, last = ({k: float(v) for k, v in r.items() if v and k.endswith("_s") and not k.endswith("_per_s")}
                   for r in rows)
    assert start == {"selfplay_s": 0.0, "train_s": 0.0, "eval_s": 75.0, "checkpoint_s": 0.0, "eval_random_s": 35.0,
                     "eval_mcts_s": 40.0, "compile_s": 30.0}
    assert last == {"selfplay_s": 40.0, "train_s": 12.0, "eval_s": 45.0, "checkpoint_s": 0.0, "eval_random_s": 20.0,
                    "eval_mcts_s": 25.0, "compile_s": 38.0}
    assert rows[1]["win_random"] and rows[1]["win_mcts"] and not rows[1].get("win_best")
    assert float(rows[1]["selfplay_positions_per_s"]) == CONFIG.selfplay_batch * CONFIG.selfplay_moves / 40.0
    text = "\n".join(said)
    assert "time limit: iteration 1 is the last of this session (73 s left" in text
    assert "time limit: iteration 1 gets a shortened final evaluation, without best (73 s left; the matches " \
           "left out take about 55 s)" in text
    assert text.count("selfplay: first run 40.0 s, of which 30.0 s compiling") == 1
    assert "compiled again" not in text

    # Resumed with 30 s: the programs compile again (a new session), self-play and training
    # already overrun; the iteration is checkpointed with no evaluation, and the log says so.
    clock2, said2 = DrivenClock(), []
    monkeypatch.setattr(zero.loop, "build", driven_build(clock2))
    result = zero.train(CONFIG, run, resume=True, progress=False, log=said2.append, time_limit=30.0, clock=clock2)
    assert result.iterations == 2 and clock2.t == 52.0  # within the limit plus this one iteration
    rows = rows_of(run)
    assert [r["step"] for r in rows] == ["0", "1", "2"] and not rows[2]["win_random"]
    assert float(rows[2]["eval_s"]) == 0.0 and float(rows[2]["selfplay_s"]) == 40.0
    assert any(line.startswith("time limit: iteration 2 gets no final evaluation") for line in said2), said2


def test_checkpoints_every_other_iteration_and_after_the_last(tmp_path):
    config = zero.with_overrides(zero.PRESETS["smoke"], {"checkpoint_interval": "2", "keep": "5", "eval_games": "0"})
    zero.train(config, tmp_path / "run", progress=False, log=lambda text: None)
    assert Checkpointer(tmp_path / "run" / "checkpoints", kind="zero", read_only=True).all_steps() == [2, 3]
    rows = rows_of(tmp_path / "run")
    assert [r["step"] for r in rows] == ["1", "2", "3"]
    assert [float(r["checkpoint_s"]) > 0 for r in rows] == [False, True, True]
