"""The arena: a full 9x9 game against the real GNU Go, internal matches, forfeits and resignations."""

from __future__ import annotations

import itertools
import pathlib
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from alphago_jax import __version__, cli, sgf
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play import arena
from alphago_jax.play.arena import play_one_game, run_match
from alphago_jax.play.players import RESIGN, Decision, LocalPlayer, RandomPlayer
from alphago_jax.play.search_player import mcts_player
from alphago_jax.play.position import play_game
from alphago_jax.play.registry import make_player
from children import child_env

RESULT = r"^(B|W)\+(\d+(\.5)?|R|F)$|^0$"


def test_full_game_against_gnugo(gnugo_path, tmp_path):
    engine = mcts_player(16, nodes=64)
    with make_player(f"gtp:{gnugo_path} --mode gtp --level 1") as gnugo:
        match = run_match(engine, gnugo, games=1, size=9, komi=7.5, out_dir=tmp_path, progress=False)
    (game,) = match.games
    assert game.black == "mcts16" and game.white.startswith("GNU Go")
    assert game.how in ("score", "move limit", "resignation") and game.winner in (BLACK, WHITE, 0)
    assert match.result.games == 1 and match.result.player == "mcts16"
    assert "| mcts16 | GNU Go" in match.table
    # Every move of the engine was one fixed 16-simulation search; GNU Go reports none.
    assert game.decisions[0] + game.decisions[1] >= game.moves - arena.DEFAULT_OPENINGS and game.simulations[0] == 16 * game.decisions[0]
    assert match.simulations_per_move("mcts16") == 16.0 and match.simulations_per_move(game.white) is None
    assert match.effort == f"Simulations per move: mcts16 16.0, {game.white} not reported."

    record = sgf.load(game.sgf_path)
    assert record.size == 9 and record.komi == 7.5 and record.result == game.result
    assert record.black_name == "mcts16" and record.white_name == game.white
    assert len(record.moves) == game.moves > 10
    _, final = sgf.replay(record, play_game(9, 7.5))
    np.testing.assert_array_equal(np.asarray(final.board), game.final_board)
    if game.how == "score":  # both passed: the scorer's count is the result
        assert record.moves[-2:] == ((BLACK, 81), (WHITE, 81)) or record.moves[-2:] == ((WHITE, 81), (BLACK, 81))
        score = float(play_game(9, 7.5).score(final))
        assert sgf.result_string(score) == game.result == sgf.result_string(game.score)
    report = (tmp_path / "results.md").read_text()
    assert report.startswith("# mcts16 vs GNU Go") and match.effort in report


def test_this_engine_over_gtp_against_gnugo(gnugo_path, monkeypatch):
    """The ``gtp`` command as an external engine: a GTP client drives it through a whole game."""
    for key, value in child_env().items():  # the engine process shares the tests' compilation cache
        monkeypatch.setenv(key, value)
    command = f"{shlex.quote(sys.executable)} -m alphago_jax.cli gtp --player random:seed=5 --size 9"
    with make_player(command) as ours, make_player(f"{gnugo_path} --mode gtp --level 1") as gnugo:
        assert ours.name == f"alphago-jax {__version__}" and ours.can_cleanup
        pos, game = play_one_game(gnugo, ours, 9, 7.5)
        assert game.how in ("score", "move limit") and game.moves > 10
        assert ours.client.send("final_score") == game.result  # the same Tromp-Taylor count
        np.testing.assert_array_equal(pos.board, game.final_board)


def test_internal_match_alternates_colours(tmp_path):
    a, b = RandomPlayer(seed=1), RandomPlayer(seed=2)
    seen, reports = [], []

    def on_game(game):  # the report is rewritten after each game, before this is called
        seen.append(game)
        reports.append((tmp_path / "results.md").read_text())

    match = run_match(a, b, games=4, size=9, komi=7.5, out_dir=tmp_path, progress=False, on_game=on_game)
    assert [g.index for g in match.games] == [1, 2, 3, 4] and seen == list(match.games)
    for played, report in enumerate(reports[:3], 1):  # a match stopped here keeps its table so far
        assert f"Played so far: {played} of 4 games" in report, report
        assert f"| random (1) | random (2) | {played} |" in report and report.count(".sgf |") == played
    assert "Played so far" not in reports[3] and reports[3] == (tmp_path / "results.md").read_text()
    assert [g.black for g in match.games] == ["random (1)", "random (2)"] * 2  # same names: told apart
    r = match.result
    assert (r.player, r.opponent, r.games) == ("random (1)", "random (2)", 4)
    wins = sum((g.winner == BLACK) == (g.black == "random (1)") and g.winner != 0 for g in match.games)
    assert r.wins == wins
    for g in match.games:
        assert g.how in ("score", "move limit")
        assert sgf.load(g.sgf_path).result == g.result
        assert g.result == sgf.result_string(g.score)
    assert "| random (1) | random (2) | 4 |" in match.table
    with pytest.raises(ValueError, match="games must be at least 1"):
        run_match(a, b, games=0)


def test_pairs_of_games_share_a_random_opening(tmp_path):
    from alphago_jax.play.arena import match_openings, random_opening

    # Players that always pass: after the opening, each game is the opening alone.
    a, b = Scripted([], name="a"), Scripted([], name="b")
    match = run_match(a, b, games=4, size=5, komi=0.5, openings=3, cleanup=False, progress=False, out_dir=tmp_path)
    openings = [[m for _, m in sgf.load(g.sgf_path).moves][:3] for g in match.games]
    assert openings[0] == openings[1] == random_opening(5, 0.5, 3, 0)
    assert openings[2] == openings[3] == random_opening(5, 0.5, 3, 1) != openings[0]
    for g in match.games:
        record = sgf.load(g.sgf_path)
        assert [c for c, _ in record.moves][:3] == [BLACK, -BLACK, BLACK]
        assert all(m < 25 for _, m in record.moves[:3])  # no passes in an opening
        sgf.replay(record)  # legal all through
    assert random_opening(5, 0.5, 3, 7) == random_opening(5, 0.5, 3, 7)
    # Going on from game 4: games 4 and 5 of a longer match, with their openings, colours and names.
    later = run_match(a, b, games=2, size=5, komi=0.5, openings=3, cleanup=False, progress=False,
                      out_dir=tmp_path / "later", first=4)
    assert [g.index for g in later.games] == [4, 5] and [g.black for g in later.games] == ["b", "a"]
    assert [g.sgf_path.name for g in later.games] == ["game-004.sgf", "game-005.sgf"]
    assert later.games[0].actions == match.games[3].actions
    assert list(later.games[1].actions[:3]) == list(itertools.islice(match_openings(5, 0.5, 3), 3))[2] != openings[2]
    with pytest.raises(ValueError, match="first game"):
        run_match(a, b, games=2, first=0)


class Scripted(LocalPlayer):
    """Plays the given actions in turn, then passes; ``RESIGN`` resigns."""

    def __init__(self, actions, name="scripted"):
        super().__init__(name)
        self.actions = list(actions)

    def _decide(self, colour, seconds):
        i = sum(c == colour for c, _ in self.pos.moves)
        return Decision(self.actions[i] if i < len(self.actions) else self.pos.pass_action)


def test_an_illegal_move_forfeits_and_resignation_ends_the_game():
    # Scripted players bypass their own check: a move onto an occupied point reaches the arena.
    class Careless(Scripted):
        def genmove(self, colour, seconds=None, **kw):
            return self._decide(colour, seconds)

    pos, game = play_one_game(Scripted([40]), Careless([40]), 9, 7.5)
    assert (game.result, game.how, game.winner) == ("B+F", "illegal move", BLACK)
    pos, game = play_one_game(Scripted([40, RESIGN]), Scripted([41]), 9, 7.5)
    assert (game.result, game.how, game.winner, game.moves) == ("W+R", "resignation", WHITE, 2)
    pos, game = play_one_game(Scripted([]), Scripted([]), 9, 7.5)  # pass, pass: white by komi
    assert (game.result, game.how, game.moves) == ("W+7.5", "score", 2)


def test_a_timed_game_prepares_both_players_before_the_first_move():
    class Counted(Scripted):
        prepared = 0

        def prepare_timed(self):
            assert not self.pos.moves  # before the first move's clock
            self.prepared += 1

    a, b = Counted([]), Counted([])
    play_one_game(a, b, 9, 7.5)
    assert a.prepared == b.prepared == 0  # fixed effort: nothing to prepare
    play_one_game(a, b, 9, 7.5, seconds=0.1)
    assert a.prepared == b.prepared == 1


def test_arena_command_line(tmp_path, capsys):
    out = tmp_path / "match"
    assert cli.main(["arena", "random:seed=1", "random:seed=2", "--games", "2", "--size", "9",
                     "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| random (1) | random (2) | 2 |" in text and "game 2: random (2) (B) vs random (1) (W)" in text
    assert "Simulations per move" not in text  # neither player searches
    assert sorted(p.name for p in out.iterdir()) == ["game-001.sgf", "game-002.sgf", "results.md"]
    assert cli.main(["arena", "random", "nosuch"]) == 2
    assert "unknown player 'nosuch'" in capsys.readouterr().err


def test_arena_in_parallel_processes(tmp_path, capsys):
    out = tmp_path / "match"
    assert cli.main(["arena", "random:seed=1", "random:seed=2", "--games", "4", "--size", "5",
                     "--parallel", "2", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| random (1) | random (2) | 4 |" in text
    assert sorted(p.name for p in out.iterdir()) == [f"game-00{i}.sgf" for i in range(1, 5)] + ["results.md"]
    report = (out / "results.md").read_text()
    assert "Played so far" not in report and report.count(".sgf |") == 4
    wins = 0
    for i in range(1, 5):  # colours alternate as in one process; each record is a legal game
        record = sgf.load(out / f"game-00{i}.sgf")
        first_is_black = record.black_name == "random (1)"
        assert first_is_black == (i % 2 == 1) and f"game {i}: {record.black_name} (B)" in text
        sgf.replay(record, play_game(5, record.komi))  # the arena's move limit
        wins += record.result.startswith("B") == first_is_black and not record.result.startswith("0")
    assert f"| random (1) | random (2) | 4 | {wins} |" in text


def _state_and_parent(pid: int) -> tuple[str, int] | None:
    """A process's state letter and parent (Linux /proc); None once it is gone."""
    try:
        fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def _alive(pid: int) -> bool:
    found = _state_and_parent(pid)
    return found is not None and found[0] != "Z"


def _children(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    pids = (int(p.name) for p in pathlib.Path("/proc").iterdir() if p.name.isdigit())
    return [c for c in pids if (found := _state_and_parent(c)) and found[1] == pid and found[0] != "Z"]


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="needs Linux /proc to find child processes")
def test_a_terminated_parallel_match_stops_its_workers(tmp_path):
    out = tmp_path / "match"
    command = [sys.executable, "-m", "alphago_jax.cli", "arena", "random:seed=1", "random:seed=2",
               "--games", "100000", "--size", "5", "--parallel", "2", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(command, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not list(out.glob("*.sgf")) and time.monotonic() < deadline:  # the workers are playing
            time.sleep(0.2)
        workers = _children(proc.pid)
        assert list(out.glob("*.sgf")) and len(workers) >= 2
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and f"interrupted; the finished games are in {out}" in err
    deadline = time.monotonic() + 20  # multiprocessing's resource tracker leaves a moment after the parent
    while (left := [pid for pid in workers if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes {left} outlived the match"
    for record in out.glob("*.sgf"):  # every game saved is whole
        sgf.replay(sgf.load(record), play_game(5, 7.5))


def _descendants(pid: int) -> list[int]:
    found = _children(pid)
    return found + [d for c in found for d in _descendants(c)]


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="needs Linux /proc to find child processes")
def test_a_killed_parallel_match_leaves_no_engine_behind(tmp_path):
    """SIGKILL to a match (nothing of it can clean up) while its engines think, deaf to their
    input: its workers and their engines end too."""
    engine = tmp_path / "thinks.sh"  # at genmove it becomes a long sleep that reads nothing
    engine.write_text('#!/bin/sh\nwhile read line; do\n  case "$line" in genmove*) exec sleep 1000;; '
                      'list_commands) printf "= genmove\\nplay\\n\\n";; *) printf "= \\n\\n";; esac\ndone\n')
    engine.chmod(0o755)
    out = tmp_path / "match"
    command = [sys.executable, "-m", "alphago_jax.cli", "arena", "random:seed=1", f"gtp:{engine}", "--games", "100",
               "--size", "5", "--parallel", "2", "--no-referee", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(command, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until both workers' engines think
            below = _descendants(proc.pid)
            thinking = [pid for pid in below if b"sleep" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()]
            if len(thinking) >= 2:
                break
            time.sleep(0.2)
        assert len(thinking) >= 2, below
        proc.kill()
        proc.wait()
    finally:
        proc.kill()
    deadline = time.monotonic() + 20
    while (left := [pid for pid in below if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"processes {left} outlived the killed match"
