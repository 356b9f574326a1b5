"""Position datasets from SGF records: every shared record handled, positions exact, archives, errors."""

from __future__ import annotations

import io
import tarfile
import zipfile

import jax
import numpy as np
import pytest

from alphago_jax import sgf
from alphago_jax.games.go import Go
from alphago_jax.alphago.dataset import FIELDS, build_dataset, iter_shards, load_manifest

GAME = "(;GM[1]FF[4]SZ[5]KM[0.5]RE[W+R];B[cc];W[bc];B[cb];W[bb];B[dc];W[ba];B[ca];W[cd];B[tt];W[dd])"


def _arrays(directory, split="train"):
    shards = list(iter_shards(directory, split))
    return {k: np.concatenate([s[k] for s in shards]) for k in FIELDS} if shards else None


def test_dataset_build_command(tmp_path, capsys):
    from alphago_jax import cli

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "g.sgf").write_text(GAME)
    (tmp_path / "src" / "bad.sgf").write_text("(;GM[1]SZ[5];B[cc]")  # cut short
    assert cli.main(["dataset", "build", str(tmp_path / "src"), "--size", "5", "--held-out", "0",
                     "--out", str(tmp_path / "ds"), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "kept 1 games" in out and "10 train positions" in out and f"in {tmp_path / 'ds'}" in out
    assert "records" not in err  # no progress bar
    assert load_manifest(tmp_path / "ds")["games"] == [str(tmp_path / "src" / "g.sgf")]
    assert "skipped 1 (malformed SGF)" in out


def test_every_shared_record_is_kept_or_skipped_with_a_reason(sgf_dir, tmp_path):
    files = sorted(sgf_dir.rglob("*.sgf"))
    report = build_dataset([sgf_dir.parent], tmp_path / "ds", size=9, shard_size=2000, progress=False)
    print("\n" + report.summary())
    assert report.kept + sum(report.skipped.values()) == len(files)
    assert len(report.skipped_files) == sum(report.skipped.values())
    assert all(reason for _, reason in report.skipped_files)
    assert report.kept > 50 and report.skipped["other board size"] > 100
    manifest = load_manifest(tmp_path / "ds")
    assert manifest["games"] == report.games and manifest["skipped"] == report.skipped
    train, held = _arrays(tmp_path / "ds"), _arrays(tmp_path / "ds", "held_out")
    assert len(train["move"]) == report.positions["train"] and len(held["move"]) == report.positions["held_out"]
    # Games go whole to one split.
    assert not set(np.unique(train["game"])) & set(np.unique(held["game"]))
    assert sorted(set(np.unique(train["game"])) | set(np.unique(held["game"]))) == list(range(report.kept))


def test_positions_follow_the_record(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "g.sgf").write_text(GAME)
    report = build_dataset([tmp_path / "src"], tmp_path / "ds", size=5, held_out=0.0, progress=False)
    assert report.kept == 1 and report.positions == {"train": 10, "held_out": 0}
    d = _arrays(tmp_path / "ds")
    record = sgf.load(GAME)
    game = Go(size=5, superko=False)
    state = game.init()
    step = jax.jit(game.step)
    for i, (colour, action) in enumerate(record.moves):
        np.testing.assert_array_equal(d["board"][i], np.asarray(state.board))
        assert d["to_play"][i] == colour == int(state.to_play)
        assert d["move"][i] == action and d["move_number"][i] == i + 1 and d["ko"][i] == int(state.ko)
        state = step(state, action)
    assert np.all(d["winner"] == -1)
    # Every stone's placed_at is the number of the move that put it there, 0 on empty points.
    last = d["placed_at"][-1]
    assert np.all((last > 0) == (d["board"][-1] != 0))
    for point in np.flatnonzero(last):
        assert record.moves[last[point] - 1][1] == point


def test_archives_give_the_same_positions(tmp_path):
    games = [GAME, GAME.replace("RE[W+R]", "RE[B+3.5]").replace("W[dd])", "W[ee])")]
    (tmp_path / "dir").mkdir()
    for i, text in enumerate(games):
        (tmp_path / "dir" / f"{i}.sgf").write_text(text)
    with zipfile.ZipFile(tmp_path / "games.zip", "w") as z:
        for i, text in enumerate(games):
            z.writestr(f"kgs/{i}.sgf", text)
    with tarfile.open(tmp_path / "games.tar.gz", "w:gz") as t:
        for i, text in enumerate(games):
            data = text.encode()
            info = tarfile.TarInfo(f"kgs/{i}.sgf")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    results = []
    for src in ("dir", "games.zip", "games.tar.gz"):
        report = build_dataset([tmp_path / src], tmp_path / f"out-{src}", size=5, held_out=0.0, progress=False)
        assert report.kept == 2, report.skipped_files
        results.append(_arrays(tmp_path / f"out-{src}"))
    for other in results[1:]:
        for k in FIELDS:
            np.testing.assert_array_equal(results[0][k], other[k])
    assert set(np.unique(results[0]["winner"])) == {-1, 1}


def test_broken_inputs_are_skipped_and_listed(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.sgf").write_text(GAME)
    (src / "truncated.sgf").write_text(GAME[:40])
    (src / "binary.sgf").write_bytes(bytes(range(256)))
    (src / "illegal.sgf").write_text("(;GM[1]SZ[5];B[cc];W[cc])")
    (src / "big.sgf").write_text("(;GM[1]SZ[9];B[cc];W[dd])")
    (src / "broken.zip").write_bytes(b"PK\x03\x04 not really a zip")
    report = build_dataset([src], tmp_path / "ds", size=5, progress=False)
    assert report.kept == 1
    reasons = dict(report.skipped_files)
    assert set(reasons) == {str(src / n) for n in ("truncated.sgf", "binary.sgf", "illegal.sgf", "big.sgf", "broken.zip")}
    assert "move 2" in reasons[str(src / "illegal.sgf")]
    assert report.skipped["other board size"] == 1 and report.skipped["unreadable file"] == 1
    with pytest.raises(ValueError, match="already holds a dataset"):
        build_dataset([src], tmp_path / "ds", size=5, progress=False)
    with pytest.raises(ValueError, match="manifest"):
        load_manifest(src)

