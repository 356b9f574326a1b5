"""The main job's run state (``zero.RunState``) and its phases, each called alone; checkpoints
written before ``RunState`` (its fields in a dict) resume, and an unknown layout is refused.

``data/zero_smoke_dict_state`` is a run of the ``smoke`` preset stopped after iteration 1 by the
version that kept the run state in a dict (``alphago-jax train --preset smoke --iterations 1``).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil

import jax
import numpy as np
import pytest

from alphago_jax import zero
from alphago_jax.train import Checkpointer, CheckpointError
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.timing import PhaseTimer, WallClock
from alphago_jax.zero.loop import selfplay_phase, train_phase

DICT_RUN = pathlib.Path(__file__).parent / "data" / "zero_smoke_dict_state"
SMOKE = zero.PRESETS["smoke"]


@pytest.fixture(scope="module")
def programs():
    return zero.build(SMOKE)


def copy_of_dict_run(tmp_path) -> pathlib.Path:
    out = tmp_path / "run"
    shutil.copytree(DICT_RUN, out)
    return out


def test_a_dict_checkpoint_converts_to_the_run_state(programs, tmp_path):
    out = copy_of_dict_run(tmp_path)
    with Checkpointer(checkpoint_dir(out), kind=zero.KIND, read_only=True) as ckpt:
        assert "state_layout" not in ckpt.metadata(1)
        raw = ckpt.restore(1).state  # as stored: a dict keyed by the fields
        state, metadata = zero.restore_state(ckpt, 1, programs.init(jax.random.PRNGKey(SMOKE.seed)))
    assert isinstance(state, zero.RunState) and metadata["iteration"] == 1
    assert int(state.iteration) == 1 and int(state.train.step) == int(np.asarray(raw["train"]["step"])) > 0
    np.testing.assert_array_equal(np.asarray(state.replay.size), np.asarray(raw["replay"]["size"]))
    np.testing.assert_array_equal(np.asarray(state.key), np.asarray(raw["key"]))
    np.testing.assert_array_equal(jax.tree_util.tree_leaves(state.best)[0], jax.tree_util.tree_leaves(raw["best"])[0])


def test_a_dict_checkpoint_resumes_and_is_saved_as_a_run_state(tmp_path):
    out = copy_of_dict_run(tmp_path)
    result = zero.train(dataclasses.replace(SMOKE, iterations=2), out, resume=True, progress=False, log=lambda text: None)
    assert result.iterations == 2 and result.stopped is None
    with Checkpointer(checkpoint_dir(out), kind=zero.KIND, read_only=True) as ckpt:
        assert ckpt.metadata(2)["state_layout"] == zero.loop.STATE_LAYOUT
        assert ckpt.metadata(2)["train_step"] == result.train_steps > ckpt.metadata(1)["train_step"]


def test_an_unknown_layout_is_refused_naming_it(programs, tmp_path):
    out = copy_of_dict_run(tmp_path)
    record_path = checkpoint_dir(out) / "1" / "meta" / "metadata"
    record = json.loads(record_path.read_text())
    record["metadata"]["state_layout"] = "RunStateV9"
    record_path.write_text(json.dumps(record))
    with Checkpointer(checkpoint_dir(out), kind=zero.KIND, read_only=True) as ckpt:
        with pytest.raises(CheckpointError, match=r"layout 'RunStateV9', this version reads 'RunState'"):
            zero.restore_state(ckpt, 1, programs.init(jax.random.PRNGKey(0)))


def test_the_phases_run_alone(programs):
    state = programs.init(jax.random.PRNGKey(0))
    timer = PhaseTimer(WallClock().open())
    state, row = selfplay_phase(programs, SMOKE, state, jax.random.PRNGKey(1), timer)
    assert row["games"] > 0 and row["replay_size"] == int(np.asarray(state.replay.size).sum()) > 0
    assert row["positions"] == row["replay_size"]  # the buffer was empty
    trained, row = train_phase(programs, dataclasses.replace(SMOKE, min_replay=1), state, jax.random.PRNGKey(2),
                               timer)
    assert row["train_step"] == SMOKE.train_steps and np.isfinite(row["loss"])
    assert int(trained.train.step) == SMOKE.train_steps
    assert int(state.train.step) == 0  # the phases return new states and change nothing in place
