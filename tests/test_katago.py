"""KataGo as an opponent and a teacher: the install's files, its replies parsed, and (where it is
installed: `alphago-jax katago install`) games against it and the teacher's records."""

from __future__ import annotations

import pathlib
import runpy
import sys
import zipfile

import chex
import numpy as np
import pytest

from alphago_jax import katago
from alphago_jax.games.base import BLACK, WHITE

ROOT = pathlib.Path(__file__).resolve().parents[1]
INSTALLED = katago.find_katago()
needs_katago = pytest.mark.skipif(INSTALLED is None, reason="KataGo is not installed here (alphago-jax katago "
                                                            "install; it needs OpenCL: pocl-opencl-icd)")


def raw_reply(size: int, white_win: float, white_lead: float, own: float) -> str:
    """A ``kata-raw-nn 0`` reply in KataGo's layout: rows of numbers, NAN on occupied points."""
    policy = np.full((size, size), 1.0 / (size * size + 1))
    policy[0, 0] = np.nan
    rows = lambda a: "\n".join(" ".join("NAN" if np.isnan(x) else f"{x:.6f}" for x in r) for r in a)  # noqa: E731
    return (f"symmetry 0\nwhiteWin {white_win}\nwhiteLoss {1 - white_win}\nnoResult 0\nwhiteLead {white_lead}\n"
            f"policy\n{rows(policy)}\npolicyPass {1.0 / (size * size + 1)}\nwhiteOwnership\n"
            f"{rows(np.full((size, size), own))}")


def test_raw_outputs_are_seen_by_the_player_to_move():
    text = raw_reply(5, white_win=0.8, white_lead=3.5, own=0.25)
    white = katago.parse_raw_nn(text, 5, white_to_play=True)
    black = katago.parse_raw_nn(text, 5, white_to_play=False)
    np.testing.assert_allclose([white.value, white.score, black.value, black.score], [0.6, 3.5, -0.6, -3.5], atol=1e-6)
    np.testing.assert_allclose(white.ownership, -black.ownership)
    assert white.ownership.shape == (25,) and white.policy.shape == (26,)
    assert white.policy[0] == 0 and white.policy.sum() == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="whiteOwnership"):
        katago.parse_raw_nn(text.split("whiteOwnership")[0], 5, True)
    with pytest.raises(ValueError, match="'policy' has 16 values, not 25"):
        katago.parse_raw_nn(raw_reply(4, 0.5, 0, 0), 5, True)


def test_the_tuning_file_and_config_have_katagos_shapes(tmp_path):
    lines = [line for line in katago.tuning_text().splitlines() if line.strip()]
    assert lines[0] == "VERSION=13" and len(lines) == 22  # opencltuner.cpp refuses any other count
    command = katago.KataGo(tmp_path).command(visits=8, board_size=9)
    assert command[1] == "gtp" and "maxVisits=8" in command[-1] and "maxBoardXSizeForNNBuffer=9" in command[-1]
    assert "allowResignation=false" in command[-1]  # games are played out, as by our players
    assert "allowResignation=true" in katago.KataGo(tmp_path).command(resign=True)[-1]
    with pytest.raises(ValueError, match="visits=0"):
        katago.KataGo(tmp_path).command(visits=0)


def test_a_missing_install_and_a_wrong_wheel_are_clear_errors(tmp_path):
    from alphago_jax.play.registry import make_player

    with pytest.raises(ValueError, match="alphago-jax katago install"):
        make_player(f"katago:dir={tmp_path}")
    with pytest.raises(ValueError, match="bad option"):
        make_player("katago:playouts=3")
    with pytest.raises(ValueError, match="katago option resign: 'maybe'"):
        make_player("katago:resign=maybe")
    wheel = tmp_path / "katrain-0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("katrain/__init__.py", "")
    with pytest.raises(ValueError, match="no katrain/KataGo/katago, katrain/models/"):
        katago.install(tmp_path / "k", wheel=wheel, check=False, log=lambda *_: None)
    assert katago.find_katago(tmp_path / "k") is None


@needs_katago
def test_katago_plays_legal_moves_on_two_sizes():
    from alphago_jax import games
    from alphago_jax.play.position import Position
    from alphago_jax.play.registry import make_player

    with make_player("katago:visits=1,size=9") as player:
        for size in (9, 5):
            player.new_game(size, 7.5)
            pos = Position(games.make("go", size=size, komi=7.5))
            for colour in (BLACK, WHITE, BLACK):
                move = player.genmove(colour).action
                assert pos.legal_mask(colour)[move], (size, move)
                pos.play(colour, move)


@needs_katago
def test_teacher_records_replay_and_train(tmp_path, monkeypatch):
    from alphago_jax.zero import warm_start

    out = tmp_path / "teacher"
    monkeypatch.setattr(sys, "argv", ["katago_teacher.py", "--smoke", "--out", str(out)])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(ROOT / "experiments" / "katago_teacher.py"), run_name="__main__")
    assert done.value.code == 0
    data = warm_start.teacher_examples(out, size=5, komi=7.5)
    ex = data.examples
    assert data.games == 2 and data.skipped == 0
    chex.assert_shape([ex.policy, ex.ownership], [(None, 26), (None, 25)])
    np.testing.assert_allclose(ex.policy.sum(-1), 1.0, atol=2e-3)
    assert (np.abs(ex.value) <= 1).all() and (np.abs(ex.ownership) <= 1).all()
    # The teacher gives no mass to occupied points: the planes and the policy agree.
    stones = ex.planes[..., 0].reshape(len(ex.value), -1) + ex.planes[..., 8].reshape(len(ex.value), -1)
    assert not (ex.policy[:, :25][stones > 0] > 1e-3).any()
    with np.load(out / "game-00000.npz") as a:
        np.savez(out / "game-00000.npz", **{k: v[:-1] for k, v in a.items()})  # a position short
    with pytest.raises(ValueError, match="game-00000.npz: .* positions labelled, of the record.s"):
        warm_start.teacher_examples(out, size=5, komi=7.5)


@needs_katago
def test_the_main_job_evaluates_against_katago(tmp_path):
    import csv
    import dataclasses

    from alphago_jax import sgf, zero

    config = dataclasses.replace(zero.PRESETS["smoke"], workers=1, eval_games=2, gate=None, iterations=1,
                                 katago_visits=1, katago_games=2)
    said = []
    result = zero.train(config, tmp_path, progress=False, log=said.append)
    with open(result.metrics, newline="") as f:
        rows = list(csv.DictReader(f))
    assert all(r["win_katago"] for r in rows), "\n".join(said)  # a failed match is said, and its cells left empty
    assert all(float(r["win_katago"]) in (0.0, 0.5, 1.0) for r in rows), rows
    assert sum("vs KataGo(1)" in line for line in said) == 2, said
    assert sgf.load(tmp_path / "sample_katago.sgf").white_name == "KataGo, 1 visit"
