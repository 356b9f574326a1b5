"""What a match measures: external engines at their own settings, the cleanup phase's passes,
distinct openings, GNU Go on the project's rules, GNU Go's own count beside ours."""

from __future__ import annotations

import itertools
import pathlib
import shlex
import sys

import pytest

from alphago_jax import gtp_client, sgf
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play import arena, commands
from alphago_jax.play.arena import match_openings, play_one_game, run_match
from alphago_jax.play.players import Decision, LocalPlayer
from alphago_jax.play.registry import make_player

# A GTP engine that writes every command it hears to LOG. ``genmove`` passes; each
# ``kgs-genmove_cleanup`` plays the next point of CLEANUP, then passes.
FAKE_ENGINE = r'''
import sys
log, cleanup = open(sys.argv[1], "a"), sys.argv[2].split(",") if len(sys.argv) > 2 else []
known = ["name", "version", "list_commands", "boardsize", "clear_board", "komi", "play", "genmove",
         "kgs-genmove_cleanup", "time_settings", "set_random_seed", "quit"]
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    log.write(line + "\n"); log.flush()
    word = line.split()[0]
    reply = {"name": "fake", "version": "1", "list_commands": "\n".join(known)}.get(word, "")
    if word == "genmove":
        reply = "pass"
    elif word == "kgs-genmove_cleanup":
        reply = cleanup.pop(0) if cleanup else "pass"
    sys.stdout.write(f"= {reply}\n\n"); sys.stdout.flush()
    if word == "quit":
        break
'''


@pytest.fixture
def fake(tmp_path):
    """``fake(cleanup_moves) -> (command, log path)``."""
    script = tmp_path / "fake_engine.py"
    script.write_text(FAKE_ENGINE)
    log = tmp_path / "commands.log"

    def command(cleanup: str = "") -> tuple[str, object]:
        return f"{shlex.quote(sys.executable)} {script} {log} {cleanup}".strip(), log

    return command


class Passer(LocalPlayer):
    """Plays the given points, then passes."""

    def __init__(self, actions=(), name="passer"):
        super().__init__(name)
        self.actions = list(actions)

    def _decide(self, colour, seconds):
        i = sum(c == colour for c, _ in self.pos.moves)
        return Decision(self.actions[i] if i < len(self.actions) else self.pos.pass_action)


def test_no_time_settings_reach_an_engine_unless_asked(fake):
    command, log = fake()
    with make_player(f"gtp:{command}") as engine:
        play_one_game(Passer(), engine, 9, 7.5, seconds=1.0)  # the match has a time per move
    heard = log.read_text().splitlines()
    assert "genmove W" in heard and not any(line.startswith("time_settings") for line in heard)
    log.write_text("")
    with make_player(f"gtp:{command},time=2.5") as engine:  # asked for: the engine's own clock
        assert engine.time == 2.5
        play_one_game(Passer(), engine, 9, 7.5)
    heard = log.read_text().splitlines()
    assert heard.count("time_settings 0 3 1") == 1 and heard.index("time_settings 0 3 1") < heard.index("genmove W")
    with pytest.raises(ValueError, match="time must be a positive"):
        make_player(f"gtp:{command},time=0")


def test_the_cleanup_phase_counts_its_own_passes(fake):
    # Our player (black) passes first, the engine passes: the cleanup phase opens. Our player
    # passes again; that pass must not end the game: the engine is asked to clean up, plays E5,
    # and the game ends only on two passes in a row within the cleanup phase.
    command, log = fake("E5")
    with make_player(f"gtp:{command}") as engine:
        pos, game = play_one_game(Passer(), engine, 9, 7.5, seconds=None)
    heard = [line for line in log.read_text().splitlines() if "genmove" in line]
    assert heard == ["genmove W", "kgs-genmove_cleanup W", "kgs-genmove_cleanup W"]
    pass_ = 81
    e5 = 4 * 9 + 4
    assert [a for _, a in pos.moves] == [pass_, pass_, pass_, e5, pass_, pass_]
    assert game.how == "score" and game.result == "W+88.5"  # E5 stands: all of the board is white's


def test_openings_are_on_by_default_and_distinct(tmp_path):
    assert arena.DEFAULT_OPENINGS == commands.DEFAULT_OPENINGS >= 1
    match = run_match(Passer(name="a"), Passer(name="b"), games=6, size=5, komi=0.5, cleanup=False,
                      referee=False, progress=False, out_dir=tmp_path)
    starts = [[a for _, a in sgf.load(g.sgf_path).moves][: arena.DEFAULT_OPENINGS] for g in match.games]
    assert starts[0] == starts[1] and starts[2] == starts[3] and starts[4] == starts[5]
    assert len({tuple(s) for s in starts}) == 3
    # Two passers play each pair's games alike, colours swapped: 6 games, 3 sequences of moves.
    assert len(match.distinct_games) == 6 and match.move_sequences == 3
    assert "Distinct games: 6 of 6; 3 distinct sequences of moves (the same moves with the colours swapped" \
        in match.summary
    # No two pairs share an opening, not even mirrored or rotated.
    openings = list(itertools.islice(match_openings(5, 0.5, 1), 7))  # 6 first moves up to symmetry
    assert len({arena._canonical(o, 5) for o in openings[:6]}) == 6 and openings[6] in openings[:6]
    # Each move's time is in the record, the opening's moves have none.
    record = sgf.load(match.games[0].sgf_path)
    assert record.comments[: arena.DEFAULT_OPENINGS] == ("",) * arena.DEFAULT_OPENINGS
    assert all(c.endswith(" s") for c in record.comments[arena.DEFAULT_OPENINGS:])


def test_repeated_games_are_counted_once(tmp_path):
    # Without openings, two players that always pass play one game over and over.
    match = run_match(Passer(name="a"), Passer(name="b"), games=4, size=5, komi=0.5, cleanup=False, openings=0,
                      referee=False, progress=False)
    assert len(match.distinct_games) == 2 and match.distinct_result.games == 2
    assert match.result.games == 4
    assert "Distinct games: 2 of 4; over the distinct games a won 1 of 2" in match.summary
    assert match.move_sequences == 1 and "; 1 distinct sequence of moves" in match.summary


def test_gnugo_is_started_on_the_project_rules(gnugo_path, monkeypatch, tmp_path):
    flags = {"--chinese-rules", "--positional-superko", "--forbid-suicide"}
    assert gtp_client.with_gnugo_rules(["/usr/games/gnugo", "--level", "10"])[:2] == ["/usr/games/gnugo", "--mode"]
    assert gtp_client.with_gnugo_rules(["/bin/other", "--level", "10"]) == ["/bin/other", "--level", "10"]
    kept = gtp_client.with_gnugo_rules(["gnugo", "--mode", "gtp", "--japanese-rules"])  # a choice of its own stays
    assert "--japanese-rules" in kept and "--chinese-rules" not in kept and kept.count("--mode") == 1
    started = []
    real = gtp_client.GTPClient.__init__

    def record(self, command, *args, **kwargs):
        started.append(list(command))
        real(self, command, *args, **kwargs)

    monkeypatch.setattr(gtp_client.GTPClient, "__init__", record)
    for spec in (f"gtp:{gnugo_path} --mode gtp --level 1", f"{gnugo_path} --level 1", "gnugo:level=1"):
        with make_player(spec):
            pass
    from alphago_jax.zero import external_eval

    external_eval._start(external_eval.gnugo_command(gnugo_path, 1, 5, 7.5), 5, 7.5, 0, 0).close()
    arena.Referee(gnugo_path).count(5, 7.5, [(BLACK, 12)])
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "experiments"))
    import make_gnugo_dataset

    make_gnugo_dataset._start_engine(gnugo_path)
    make_gnugo_dataset._ENGINE.close()
    assert len(started) == 6
    for argv in started:
        assert flags <= set(argv), argv


def test_gnugo_counts_each_scored_game(gnugo_path, tmp_path):
    # One stone alone on the board (b's E5): b wins by either count, though GNU Go does not
    # give the whole board to a lone stone as Tromp-Taylor does.
    match = run_match(Passer(name="a"), Passer([40], name="b"), games=2, size=9, komi=7.5, cleanup=False, openings=0,
                      progress=False, out_dir=tmp_path)
    assert [g.result for g in match.games] == ["W+88.5", "B+73.5"]
    assert [sgf.winner_of(g.referee) for g in match.games] == [WHITE, BLACK]
    assert "names the same winner in 2." in match.summary
    assert "| GNU Go's count |" in (tmp_path / "results.md").read_text()
    differs = arena.GameResult(1, "a", "b", BLACK, "B+0.5", "score", 0.5, 3, referee="W+2.5")
    assert differs.referee_differs and not arena.GameResult(1, "a", "b", WHITE, "W+1", "score", -1, 3,
                                                            referee="W+3").referee_differs


# Engines that fail: one that sleeps through a genmove, one that exits at it, one that answers
# garbage. Each loses that game by forfeit, with the reason; the match goes on with a fresh engine.
FAILING = {
    "sleeps": 'case "$line" in genmove*) sleep 30;; esac',
    "exits": 'case "$line" in genmove*) exit 3;; esac',
    "banana": 'case "$line" in genmove*) printf "= banana\\n\\n"; continue;; esac',
}


@pytest.mark.parametrize("kind", sorted(FAILING))
def test_a_failing_engine_forfeits_and_the_match_goes_on(kind, tmp_path):
    script = tmp_path / f"{kind}.sh"
    script.write_text("#!/bin/sh\nwhile read line; do\n  " + FAILING[kind] + "\n"
                      '  case "$line" in list_commands) printf "= genmove\\nplay\\n\\n";; '
                      'name) printf "= failing\\n\\n";; version) printf "= 1\\n\\n";; *) printf "= \\n\\n";; esac\n'
                      "done\n")
    script.chmod(0o755)
    with make_player(f"gtp:{script},timeout=2") as engine:
        assert engine.timeout == 2
        match = run_match(Passer([12, 6], name="ours"), engine, games=2, size=5, komi=0.5, openings=0,
                          referee=False, progress=False, out_dir=tmp_path / "match")
        clients = [engine.client]
    assert [g.how for g in match.games] == ["engine failure"] * 2
    assert [g.result for g in match.games] == ["B+F", "W+F"]  # ours wins both, whichever colour
    reasons = {"sleeps": "did not answer 'genmove", "exits": "exited while answering", "banana": "'banana', not a move"}
    assert all(reasons[kind] in g.reason and g.reason.startswith("failing") for g in match.games)
    assert "Engine failures (forfeits): game 1 (failing" in match.summary
    record = sgf.load(match.games[0].sgf_path)
    assert record.result == "B+F" and record.comment.startswith("forfeit: failing") and reasons[kind] in record.comment
    assert not any(c.alive for c in clients)  # closed with the match: no engine outlives it
