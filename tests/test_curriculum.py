"""A board-size curriculum in the main job (``ZeroConfig.extra_sizes``): one size-agnostic network
plays, trains and is evaluated on two board sizes in each iteration, each size's games batched
apart, and each size's figures in metrics.csv."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from alphago_jax import zero
from alphago_jax.train import Checkpointer
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.metrics import read_metrics

CURRICULUM = dataclasses.replace(zero.PRESETS["smoke"], size_agnostic=True, extra_sizes=(7,), size_weights=(1.0, 3.0),
                                 iterations=1, eval_interval=1)


def test_the_steps_are_shared_by_weight_and_the_settings_checked():
    assert CURRICULUM.sizes == (5, 7) and CURRICULUM.steps_per_size() == (1, 3)
    assert dataclasses.replace(CURRICULUM, size_weights=()).steps_per_size() == (2, 2)
    assert dataclasses.replace(CURRICULUM, train_steps=5, size_weights=(1.0, 1.0, 1.0),
                               extra_sizes=(7, 9)).steps_per_size() == (2, 2, 1)
    with pytest.raises(ValueError, match="ZeroConfig.extra_sizes needs size_agnostic=true"):
        dataclasses.replace(CURRICULUM, size_agnostic=False)
    with pytest.raises(ValueError, match="ZeroConfig.extra_sizes must be distinct, and other than board_size"):
        dataclasses.replace(CURRICULUM, extra_sizes=(5,))
    with pytest.raises(ValueError, match="ZeroConfig.size_weights must be empty or 2 numbers >= 0"):
        dataclasses.replace(CURRICULUM, size_weights=(1.0,))


def test_a_curriculum_iteration_plays_and_trains_on_two_sizes(tmp_path):
    said = []
    result = zero.train(CURRICULUM, tmp_path / "run", progress=False, log=said.append)
    assert result.iterations == 1 and result.train_steps == CURRICULUM.train_steps
    rows = read_metrics(result.metrics)
    last = {k: v[-1] for k, v in rows.items()}
    for suffix in ("", "_7x7"):  # each size: its games, positions/s, losses and matches
        assert last[f"games{suffix}"] > 0 and last[f"selfplay_positions_per_s{suffix}"] > 0
        assert np.isfinite(last[f"loss{suffix}"]) and np.isfinite(last[f"policy_loss{suffix}"])
        assert 0 <= last[f"win_random{suffix}"] <= 1 and 0 <= last[f"win_mcts{suffix}"] <= 1
    assert any("7x7 vs random" in line for line in said), said
    assert zero.saved_config(result.out_dir) == CURRICULUM  # the sizes read back: resumable, exportable
    assert zero.network_of_run(result.out_dir).info["config"]["extra_sizes"] == [7]
    with Checkpointer(checkpoint_dir(result.out_dir), kind=zero.KIND, read_only=True) as ckpt:
        state, _ = zero.restore_state(ckpt, 1, zero.build(CURRICULUM).init(jax.random.PRNGKey(0)))
    (games,) = state.sizes
    assert games.selfplay.planes.shape[-3:-1] == (7, 7) and int(np.asarray(games.replay.size).sum()) > 0
    assert state.replay.planes.shape[-3:-1] == (5, 5) and games.replay.planes.shape[-3:-1] == (7, 7)
