"""A run stopped by SIGTERM or SIGINT (a preemption notice, Ctrl-C): it ends the iteration in
progress, checkpoints it and returns; ``--resume`` then ends where an uninterrupted run ends."""

from __future__ import annotations

import dataclasses
import os
import signal

import chex
import numpy as np

from alphago_jax import zero
from alphago_jax.train import Checkpointer
from alphago_jax.zero.config import KIND

SMOKE = dataclasses.replace(zero.PRESETS["smoke"], iterations=3, eval_games=0)


def _final_state(run_dir):
    with Checkpointer(zero.checkpoint_dir(run_dir), kind=KIND, read_only=True) as ckpt:
        return ckpt.restore().state


def test_a_signalled_run_stops_checkpointed_and_resumes_to_the_same_end(tmp_path):
    whole = zero.train(SMOKE, tmp_path / "whole", progress=False, log=lambda text: None)
    assert whole.stopped is None and whole.iterations == 3

    said = []

    def preempt(phase, iteration):
        if (phase, iteration) == ("selfplay", 2):  # the notice arrives mid-iteration
            os.kill(os.getpid(), signal.SIGTERM)

    handler = signal.getsignal(signal.SIGTERM)
    cut = zero.train(SMOKE, tmp_path / "cut", progress=False, callback=preempt, log=said.append)
    assert cut.stopped == "SIGTERM" and cut.iterations == 2 and cut.checkpoint.name == "2"
    assert any("SIGTERM: stopping after iteration 2" in line and "--resume" in line for line in said), said
    assert signal.getsignal(signal.SIGTERM) is handler  # the run's handler is gone with it

    rest = zero.train(SMOKE, tmp_path / "cut", resume=True, progress=False, log=lambda text: None)
    assert rest.stopped is None and rest.iterations == 3 and rest.train_steps == whole.train_steps
    # Nothing lost or repeated: the network, optimizer, replay buffer, games and random key as in
    # the run that was never stopped.
    a, b = _final_state(tmp_path / "whole"), _final_state(tmp_path / "cut")
    assert int(np.asarray(a["iteration"])) == int(np.asarray(b["iteration"])) == 3
    chex.assert_trees_all_close(a, b)
