"""The ``alphago-jax`` command and the experiment scripts' smoke modes."""

from __future__ import annotations

import pathlib
import runpy
import sys

import jax
import numpy as np
import pytest

from alphago_jax import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_demo_plays_and_draws_a_board(capsys):
    assert cli.main(["demo", "--size", "5", "--batch", "4", "--komi", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "moves/s" in out
    assert "   A B C D E" in out  # the drawn board's column labels
    assert "Tromp-Taylor area: black" in out


def test_demo_rejects_a_bad_size(capsys):
    assert cli.main(["demo", "--size", "25"]) == 2
    assert "board size must be an integer from 2 to 19" in capsys.readouterr().err


def test_unknown_subcommand_exits_with_usage():
    with pytest.raises(SystemExit) as e:
        cli.main(["no-such-command"])
    assert e.value.code == 2


@pytest.mark.parametrize("script, row", [
    ("bench_rules.py", "| go 5x5 | 4 |"),
    ("bench_nets.py", "| DualResNet (smoke size) |"),
    ("bench_features.py", "| AlphaGo Zero, 17 planes | 4 |"),
    ("bench_search.py", "| 2 | "),
    ("bench_rollout.py", "| scan+step |"),
    ("bench_dataset.py", "| 2x | 80 |"),
    ("bench_zero.py", "| smoke | 5x5 | 1x8 (0.00M) | 4 | 8 |"),
    ("bench_grave_mcps.py", "| nogo 5x5 | 2 |"),
    ("bench_mcps_cost.py", "| MCPS, no node frozen |"),
    ("mcps_statistics.py", "| nogo | 5x5 | "),
    ("mcps_vs_grave.py", ("| nogo | 5x5 | 16 playouts | 4 |", "| nogo | 5x5 | 0.01 s, one game at a time | 2 |")),
    ("alphago_pipeline_19x19.py", "| SL policy | held-out top-1 |"),
    ("zero_train.py", "| smoke | 5x5 | 1x8 | "),
    ("zero_9x9_accelerator.py", "warm start: {"),
    ("dead_stones_vs_gnugo.py", "| 3 | "),
    ("compare_runs.py", "| gumbel | 2 |"),
    ("chain_curve.py", ("| raw policy | 2 | 40 | 40 | 1 | 0.025 |", "| raw policy | 5.4 | 40 | 40 | 0 | 0.000 |")),
    ("tune_search.py", "| `c_puct=2.5` | 4 | "),
    ("bench_tactical_prior.py", ("| `net:net=untrained,sims=8,nodes=64,tactics=0.3` | 2 x 1 |", "| and nets (the root) | 2 |")),
    ("bench_first_move.py", ("| `alphago-jax gtp` | warm |", "| `alphago-jax play` | cold |",
                             "| now: the default network player |")),
])
def test_experiment_smoke_mode(script, row, monkeypatch, capsys, request):
    if script in ("bench_dataset.py", "alphago_pipeline_19x19.py", "zero_9x9_accelerator.py", "dead_stones_vs_gnugo.py"):
        request.getfixturevalue("sgf_dir")  # the corpus they read is in ../shared
    if script == "dead_stones_vs_gnugo.py":
        request.getfixturevalue("gnugo_path")  # its referee
    monkeypatch.setattr(sys, "argv", [script, "--smoke"])
    runpy.run_path(str(ROOT / "experiments" / script), run_name="__main__")
    out = capsys.readouterr().out
    for expected in (row,) if isinstance(row, str) else row:
        assert expected in out


def test_gnugo_dataset_smoke(gnugo_path, tmp_path, monkeypatch, capsys):
    out = tmp_path / "games"
    monkeypatch.setattr(sys, "argv", ["make_gnugo_dataset.py", "--smoke", "--out", str(out)])
    runpy.run_path(str(ROOT / "experiments" / "make_gnugo_dataset.py"), run_name="__main__")
    assert "2 games in" in capsys.readouterr().out
    from alphago_jax import sgf
    from alphago_jax.alphago.dataset import build_dataset

    for path in sorted(out.glob("*.sgf")):
        record = sgf.load(path)
        assert record.size == 5 and record.result and record.moves
        if not record.result.endswith("+R"):  # played out: who owns what (TB/TW) gives the same winner
            assert np.sign(record.final_owner().sum() - record.komi) == sgf.winner_of(record.result)
    report = build_dataset([out], tmp_path / "positions", size=5, progress=False)
    assert report.kept == 2 and not report.skipped


def test_gnugo_dataset_records_who_owns_what_with_dead_stones(gnugo_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import make_gnugo_dataset

    from alphago_jax.games import grid
    from alphago_jax.gtp_client import GNUGO_RULES_ARGS, GTPClient

    # White's five stones are dead inside black's framework; A3 and B3 are dame.
    engine = GTPClient([gnugo_path, *GNUGO_RULES_ARGS])
    try:
        engine.send_many(["boardsize 7", "clear_board", "komi 0.5"])
        for i, vertex in enumerate("D4 C3 C4 E3 D3 B2 E4 D2 F3 A1".split()):
            engine.send(f"play {'white' if i % 2 else 'black'} {vertex}")
        black, white = make_gnugo_dataset.final_area(engine, 7)
    finally:
        engine.close()
    assert white == [] and len(black) == 49 - 2
    assert {grid.from_vertex(v, 7) for v in ("C3", "A1", "D4")} <= set(black)
    assert not {grid.from_vertex(v, 7) for v in ("A3", "B3")} & set(black)


def test_gnugo_dataset_at_19x19_replays_through_the_rules(gnugo_path, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import make_gnugo_dataset

    from alphago_jax import sgf
    from alphago_jax.games.go import Go

    out = tmp_path / "games19"
    make_gnugo_dataset.main(["--games", "2", "--size", "19", "--levels", "0", "--workers", "1", "--max-moves", "30",
                             "--out", str(out)])
    records = [sgf.load(path) for path in sorted(out.glob("game-*.sgf"))]
    assert len(records) == 2 and records[0].moves != records[1].moves
    for record in records:  # cut at 30 moves: no result, and every move legal under the JAX rules
        assert record.size == 19 and len(record.moves) == 30 and record.result is None
        _, final = sgf.replay(record, Go(size=19, komi=record.komi))
        assert int((final.board != 0).sum()) > 20


def test_mcps_vs_grave_splits_results_by_colour(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import mcps_vs_grave

    # Four games, the player black in the first two: black wins games 0, 1 and 3, white game 2.
    returns = [[1, -1], [1, -1], [-1, 1], [1, -1]]
    as_black, as_white = mcps_vs_grave.results_by_colour(np.asarray(returns, np.float32), "MCPS", "GRAVE")
    assert (as_black.wins, as_black.losses) == (2, 0)
    assert (as_white.wins, as_white.losses) == (1, 1)
    assert (as_black + as_white).win_rate == 0.75


def test_mcps_vs_grave_budget_table_by_ply(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import mcps_vs_grave

    def side(name, per_move):
        return mcps_vs_grave.Side(name, search=None, per_move=per_move)

    # Plies count from 1; nothing past ply 20 here.
    m = side("MCPS", [(1, 100.0), (3, 300.0), (11, 1000.0)])
    g = side("GRAVE", [(2, 150.0), (12, 2000.0), (20, 4000.0)])
    timed = mcps_vs_grave.Cell("nogo", 5, None, 15.0, 4)
    fixed = mcps_vs_grave.Cell("nogo", 5, 300, None, 4)
    assert mcps_vs_grave.budget_table([(fixed, None, m, g, 20, 1.0)]) == ""
    text = mcps_vs_grave.budget_table([(fixed, None, m, g, 20, 1.0), (timed, None, m, g, 20, 1.0)])
    assert "| nogo | 5x5 | 15 s | MCPS | 200 | 1,000 | - | - |" in text
    assert "| nogo | 5x5 | 15 s | GRAVE | 150 | 3,000 | - | - |" in text
    assert "300 playouts" not in text


def test_mcps_vs_grave_carried_window_holds_every_search(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import mcps_vs_grave

    # Two games of NoGo 5x5 at 16 playouts: MCPS searches game 0 at black's plies, game 1 at
    # white's. With the window carried, the two windows together hold every playout MCPS ran
    # (fewer than W = 10,000), not only those of each batch's last search.
    cell = mcps_vs_grave.Cell("nogo", 5, 16, None, 2)
    _, mcps_side, grave_side, _ = mcps_vs_grave.play_cell(cell, progress=False, carry_window=True)
    assert grave_side.windows is None and set(mcps_side.windows) == {True, False}
    held = sum(int(np.unpackbits(np.asarray(w.filled).view(np.uint8)).sum()) for w in mcps_side.windows.values())
    assert mcps_side.playouts > 2 * 16 and held == mcps_side.playouts


def test_mcps_statistics_reads_playouts_and_windows(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    import mcps_statistics
    from alphago_jax.search import mcps

    # Two playouts on 5x5 (25 points, action 25 a pass): 0 played twice in the first; 3 three
    # times in the second, with two passes that are not points.
    actions = np.array([[[0, 1, 0, 2, -1, -1], [3, 25, 25, 3, 3, -1]]])
    plies, replayed = mcps_statistics.replayed_share(actions, np.array([[4, 5]]), 25)
    assert plies == 4.5 and replayed == 3 / 7

    # 35 playouts over 4 codes, across two words of a 40-slot window, read back in slot order.
    rng = np.random.default_rng(0)
    present = rng.random((35, 4)) < 0.5
    scores = rng.choice([0.0, 0.5, 1.0], 35)
    window = mcps.empty_window(4, 40)
    for row, score in zip(present, scores):
        window = mcps.window_add(window, row, score)
    batched = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], window)
    contains, score = mcps_statistics.window_arrays(batched, 0)
    np.testing.assert_array_equal(contains, present)
    np.testing.assert_array_equal(score, scores)

    # A code in half the playouts: black wins both of those, a loss and a draw without it.
    gap = mcps_statistics.presence_gap(np.array([[True], [True], [False], [False]]), np.array([1, 1, 0, 0.5]))
    assert gap == 0.75
