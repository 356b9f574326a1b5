"""A run stopped by SIGTERM or SIGINT (a preemption notice, Ctrl-C): it ends the iteration in
progress, checkpoints it and returns; ``--resume`` then ends where an uninterrupted run ends."""

from __future__ import annotations

import dataclasses
import os
import re
import signal

import chex
import numpy as np
import pytest

from alphago_jax import zero
from alphago_jax.train import Checkpointer
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.zero.config import KIND

SMOKE = dataclasses.replace(zero.PRESETS["smoke"], iterations=3, eval_games=0)


def _final_state(run_dir):
    with Checkpointer(checkpoint_dir(run_dir), kind=KIND, read_only=True) as ckpt:
        return ckpt.restore().state


# A signal during self-play stops the run after that iteration's training; during an evaluation or a
# checkpoint write, after that iteration (checkpointed first when it was not due: every 2 here).
SMOKE_EVAL = dataclasses.replace(SMOKE, eval_games=8, eval_interval=1, checkpoint_interval=2)
CASES = {"selfplay": (SMOKE, 2), "checkpoint": (SMOKE, 2), "evaluate": (SMOKE_EVAL, 1)}


@pytest.fixture(scope="module")
def whole_runs(tmp_path_factory):
    """The runs of each config never stopped, made once: ``config -> (RunResult, run directory)``."""
    made = {}

    def run(config):
        if config not in made:
            out = tmp_path_factory.mktemp("whole")
            made[config] = zero.train(config, out, progress=False, log=lambda text: None), out
        return made[config]

    return run


@pytest.mark.parametrize("phase", list(CASES))
def test_a_signalled_run_stops_checkpointed_and_resumes_to_the_same_end(phase, whole_runs, tmp_path):
    config, at = CASES[phase]
    whole, whole_dir = whole_runs(config)
    assert whole.stopped is None and whole.iterations == 3

    said = []

    def preempt(name, iteration):
        if (name, iteration) == (phase, at):  # the notice arrives mid-iteration
            os.kill(os.getpid(), signal.SIGTERM)

    handler = signal.getsignal(signal.SIGTERM)
    cut = zero.train(config, tmp_path / "cut", progress=False, callback=preempt, log=said.append)
    assert cut.stopped == "SIGTERM" and cut.iterations == at and cut.checkpoint.name == str(at)
    assert any(f"SIGTERM: stopping after iteration {at}" in line and "--resume" in line for line in said), said
    assert signal.getsignal(signal.SIGTERM) is handler  # the run's handler is gone with it

    rest = zero.train(config, tmp_path / "cut", resume=True, progress=False, log=lambda text: None)
    assert rest.stopped is None and rest.iterations == 3 and rest.train_steps == whole.train_steps
    # Nothing lost or repeated: the network, optimizer, replay buffer, games and random key as in
    # the run that was never stopped.
    a, b = _final_state(whole_dir), _final_state(tmp_path / "cut")
    assert int(np.asarray(a["iteration"])) == int(np.asarray(b["iteration"])) == 3
    chex.assert_trees_all_close(a, b)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(run_dir, port: int, extra: list[str], extra_env: dict | None = None, script: str | None = None):
    """Two processes of one run on localhost (gloo): ``alphago-jax train --distributed``, or
    ``script`` (Python, given the same arguments)."""
    import subprocess
    import sys

    from children import child_env

    program = ["-c", script] if script else ["-m", "alphago_jax.cli"]
    procs = []
    for i in range(2):
        env = dict(child_env(), JAX_COORDINATOR_ADDRESS=f"127.0.0.1:{port}", JAX_NUM_PROCESSES="2",
                   JAX_PROCESS_ID=str(i), JAX_CPU_COLLECTIVES_IMPLEMENTATION="gloo", **(extra_env or {}))
        procs.append(subprocess.Popen(
            [sys.executable, *program, "train", "--preset", "smoke", "--distributed", "--set", "eval_games=0",
             "--no-progress", "--out", str(run_dir), *extra],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return procs


def test_sigterm_to_one_process_of_two_stops_both_checkpointed(tmp_path):
    """Two processes on localhost (gloo): SIGTERM to the second stops both after the same
    iteration, checkpointed, within a minute; both resume to the end."""
    import time

    run = tmp_path / "run"
    procs = _start(run, _free_port(), ["--set", "iterations=100000"])
    try:
        _wait_for_rows(run, procs)
        procs[1].send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        outs = [p.communicate(timeout=60)[0] for p in procs]
        assert time.monotonic() - signalled < 60
    finally:
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [130, 130], outs
    assert "stopped by a signal to another process after iteration" in outs[0] and "--resume" in outs[0], outs[0]
    stopped_at = int(re.search(r"stopped by .* after iteration (\d+) ", outs[0]).group(1))
    saved = sorted(int(p.name) for p in checkpoint_dir(run).iterdir() if p.name.isdigit())
    assert saved[-1] == stopped_at

    procs = _start(run, _free_port(), ["--resume", "--set", f"iterations={stopped_at + 1}"])
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert f"finished {stopped_at + 1} iterations" in outs[0], outs[0]


def _wait_for_rows(run, procs, rows: int = 3) -> None:
    import time

    deadline = time.monotonic() + 300
    while not (run / "metrics.csv").is_file() or len((run / "metrics.csv").read_text().splitlines()) < rows:
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "the run did not start"
        time.sleep(0.5)


def test_a_killed_process_ends_the_other_within_the_heartbeat_bound(tmp_path):
    """SIGKILL to one process of two (no notice: a lost host): the other is ended by the
    coordination service once the heartbeat bound passes, instead of waiting in a collective for
    ever; the checkpoints written before stay whole, and both processes resume from them."""
    import time

    heartbeat = 10
    run = tmp_path / "run"
    procs = _start(run, _free_port(), ["--set", "iterations=100000"], extra_env={"ALPHAGO_JAX_HEARTBEAT_S": str(heartbeat)})
    try:
        _wait_for_rows(run, procs)
        procs[1].kill()
        killed = time.monotonic()
        out = procs[0].communicate(timeout=heartbeat + 60)[0]
        took = time.monotonic() - killed
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert procs[0].returncode != 0 and took < heartbeat + 30, (took, out[-2000:])
    assert "heartbeat" in out, out[-2000:]
    with Checkpointer(checkpoint_dir(run), kind=KIND, read_only=True) as ckpt:
        last = ckpt.latest_step()  # its record checked; the resume below reads its arrays
    assert last >= 1
    procs = _start(run, _free_port(), ["--resume", "--set", f"iterations={last + 1}"])
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert f"finished {last + 1} iterations" in outs[0], outs[0]


# One process compiles its first evaluation match 35 s late (a loaded host): past gloo's own 30 s
# limit, so the others must wait for it at a barrier of their own, bounded by
# ALPHAGO_JAX_COMPILE_TIMEOUT_S.
SLOW_HOST = """
import sys, time
import jax
from alphago_jax import cli
from alphago_jax.zero import programs
real = programs.SyncedFirstRun.__call__
def late(self, *args):
    if self._compiled is None and self.name == "the match against random" and jax.process_index() == 1:
        time.sleep(35)
    return real(self, *args)
programs.SyncedFirstRun.__call__ = late
sys.exit(cli.main(sys.argv[1:]))
"""


def test_a_slow_host_is_waited_for_and_a_stuck_one_named(tmp_path):
    evaluate = ["--set", "iterations=1", "--set", "eval_games=8"]  # the evaluation at the start: where it is late
    procs = _start(tmp_path / "slow", _free_port(), evaluate, script=SLOW_HOST)
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert "finished 1 iterations" in outs[0]

    procs = _start(tmp_path / "stuck", _free_port(), evaluate, extra_env={"ALPHAGO_JAX_COMPILE_TIMEOUT_S": "5"},
                   script=SLOW_HOST)
    try:
        out = procs[0].communicate(timeout=300)[0]
    finally:
        for p in procs:
            p.kill()
            p.wait()
    assert procs[0].returncode == 1, out
    assert ("process 0: waited 5 s (ALPHAGO_JAX_COMPILE_TIMEOUT_S) for every process to reach 'the match against "
            "random compiled'; process(es) [1] did not") in out, out[-3000:]


def test_distributed_timeouts_come_from_the_environment(monkeypatch):
    from alphago_jax.checks import seconds_from_env

    monkeypatch.setenv("ALPHAGO_JAX_HEARTBEAT_S", "15")
    assert seconds_from_env("ALPHAGO_JAX_HEARTBEAT_S", 100) == 15
    monkeypatch.delenv("ALPHAGO_JAX_HEARTBEAT_S")
    assert seconds_from_env("ALPHAGO_JAX_HEARTBEAT_S", 100) == 100
    for bad in ("0", "ten", "1.5"):
        monkeypatch.setenv("ALPHAGO_JAX_HEARTBEAT_S", bad)
        with pytest.raises(ValueError, match=f"ALPHAGO_JAX_HEARTBEAT_S='{re.escape(bad)}': must be a whole number"):
            seconds_from_env("ALPHAGO_JAX_HEARTBEAT_S", 100)


def test_a_write_failure_stops_the_run_in_one_sentence_and_resume_continues(tmp_path, monkeypatch, capsys):
    """A full disk at a checkpoint and at a metrics row: the run stops naming the path and the
    cause, the checkpoints before it stay valid, and --resume finishes the run."""
    import errno

    from alphago_jax import cli
    from alphago_jax.train import metrics

    argv = ["train", "--preset", "smoke", "--set", "iterations=3", "--set", "eval_games=0", "--no-progress"]
    for target, name in ((Checkpointer, "save"), (metrics.RunLogger, "log")):
        run = tmp_path / name
        real = getattr(target, name)

        def full_at_2(self, step, *args, real=real, run=run, **kwargs):
            if step == 2:
                raise OSError(errno.ENOSPC, "No space left on device", str(run / "somefile"))
            return real(self, step, *args, **kwargs)

        monkeypatch.setattr(target, name, full_at_2)
        assert cli.main([*argv, "--out", str(run)]) == 1
        err = capsys.readouterr().err
        assert f"{run / 'somefile'}: No space left on device" in err and "--resume" in err and "Traceback" not in err
        monkeypatch.undo()
        with Checkpointer(checkpoint_dir(run), kind=KIND, read_only=True) as ckpt:
            assert ckpt.latest_step() == (1 if name == "save" else 2)
            ckpt.restore()  # whole and readable
        assert cli.main([*argv, "--resume", "--out", str(run)]) == 0
        assert "finished 3 iterations" in capsys.readouterr().out
        steps = [line.split(",")[0] for line in (run / "metrics.csv").read_text().splitlines()[1:]]
        assert steps == ["1", "2", "3"]  # nothing lost, nothing twice


def test_failures_at_the_sample_game_the_export_and_a_removed_directory_are_one_sentence(tmp_path, monkeypatch,
                                                                                        capsys):
    """A read-only file system at the sample game of an evaluation and at an export, and a run
    directory removed during a run: each stops with one line naming the path and the cause; the
    checkpoints before a failed write stay valid and --resume finishes the run."""
    import errno
    import shutil

    from alphago_jax import cli, sgf
    from alphago_jax.nets import saved

    def read_only_from(call: int, real):
        calls = []

        def write(path, *args, **kwargs):
            calls.append(path)
            if len(calls) > call:
                raise OSError(errno.EROFS, "Read-only file system", str(path))
            return real(path, *args, **kwargs)

        return write

    argv = ["train", "--preset", "smoke", "--set", "iterations=3", "--set", "eval_games=8", "--set", "eval_interval=1",
            "--no-progress"]
    run = tmp_path / "sgf"
    monkeypatch.setattr(sgf, "write_atomic", read_only_from(2, sgf.write_atomic))  # evaluations 0 and 1 write
    assert cli.main([*argv, "--out", str(run)]) == 1
    err = capsys.readouterr().err
    assert f"{run / 'sample.sgf'}: Read-only file system" in err and "--resume" in err and "Traceback" not in err
    monkeypatch.undo()
    with Checkpointer(checkpoint_dir(run), kind=KIND, read_only=True) as ckpt:
        assert ckpt.latest_step() == 1
        ckpt.restore()
    assert cli.main([*argv, "--resume", "--out", str(run)]) == 0
    assert "finished 3 iterations" in capsys.readouterr().out

    target = tmp_path / "exports" / "net.msgpack"
    monkeypatch.setattr(saved, "write_atomic", read_only_from(0, saved.write_atomic))
    assert cli.main(["export", str(run), str(target)]) == 1
    err = capsys.readouterr().err
    assert f"{target}: Read-only file system" in err and "Traceback" not in err and not target.exists()
    monkeypatch.undo()

    gone = tmp_path / "gone"

    def remove_the_run(phase, iteration):
        if (phase, iteration) == ("train", 2):
            shutil.rmtree(gone)

    config = dataclasses.replace(SMOKE, eval_games=0)
    with pytest.raises(FileNotFoundError, match="removed or replaced while the run was going") as raised:
        zero.train(config, gone, progress=False, callback=remove_the_run, log=lambda text: None)
    assert raised.value.filename == str(gone) and not gone.exists()  # nothing written afresh

