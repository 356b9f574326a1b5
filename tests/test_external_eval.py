"""Matches against GNU Go (``zero.external_eval``) and their place in AlphaGo Zero's evaluation.

- A scripted player (random legal moves, then always passing) plays 4 games on 5x5 against
  GNU Go at level 0: every game is replayed move by move through the rules (``Position``,
  which reopens a game after two passes as the cleanup phase does) and scored again by a
  numpy Tromp-Taylor count written here, which must give the match's scores and outcomes;
  the player's passes show which colour it had in each game.
- Fake engines that die (at start, in mid-game) give errors naming the game, and every engine
  the match started is closed.
- ``zero.train`` on a 9x9 smoke-size run with ``gnugo_level=0, gnugo_games=2`` logs
  ``win_gnugo`` and ``elo_gnugo``; resumed with a GNU Go path that does not exist, it says so
  once and goes on without those games.

Everything that needs GNU Go skips, saying why, where it is not installed.
"""

from __future__ import annotations

import csv
import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games, sgf, zero
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.history import WithHistory
from alphago_jax.gtp_client import GTPError
from alphago_jax.play.position import Position
from alphago_jax.playout import sample_legal
from alphago_jax.zero import external_eval
from alphago_jax.train.evaluation import MatchResult

SIZE, KOMI, GAMES, PASS_FROM = 5, 0.5, 4, 6
SMOKE = zero.PRESETS["smoke"]


def passing_mover(game, start: int):
    """Random legal moves that are not passes until move ``start``, then passes only."""
    n = game.size * game.size

    def mover(params, states, key):
        points = jax.vmap(game.legal_action_mask)(states).at[:, n].set(False)
        pick = sample_legal(key, points)
        stop = (states.inner.move_count >= start) | ~points.any(axis=-1)
        return jnp.where(stop, n, pick).astype(jnp.int32)

    return mover


def tromp_taylor(board: np.ndarray, size: int, komi: float) -> float:
    """Black area - white area - komi, by flood fill of each empty region (numpy, no JAX)."""
    board = board.reshape(size, size)
    seen = np.zeros_like(board, bool)
    area = {BLACK: int((board == BLACK).sum()), WHITE: int((board == WHITE).sum())}
    for r0 in range(size):
        for c0 in range(size):
            if board[r0, c0] != 0 or seen[r0, c0]:
                continue
            region, borders, todo = 0, set(), [(r0, c0)]
            seen[r0, c0] = True
            while todo:
                r, c = todo.pop()
                region += 1
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < size and 0 <= cc < size:
                        if board[rr, cc] == 0 and not seen[rr, cc]:
                            seen[rr, cc] = True
                            todo.append((rr, cc))
                        elif board[rr, cc] != 0:
                            borders.add(int(board[rr, cc]))
            if len(borders) == 1:
                area[borders.pop()] += region
    return area[BLACK] - area[WHITE] - komi


@pytest.fixture(scope="module")
def game():
    return WithHistory(games.make("go", size=SIZE, komi=KOMI), boards=8)


@pytest.fixture(scope="module")
def match(game, gnugo_path):
    play = external_eval.GnuGoMatch(game, passing_mover(game, PASS_FROM))
    return play(None, jax.random.PRNGKey(3), games=GAMES, level=0, gnugo=gnugo_path)


def test_games_are_legal_complete_and_scored_by_area(game, match):
    n = SIZE * SIZE
    assert match.moves.shape == (GAMES, game.max_moves) and match.level == 0
    assert set(match.endings) <= set(external_eval.ENDINGS)
    assert match.cleanup.any(), "the player's passes should have led GNU Go into a cleanup phase"
    for i in range(GAMES):
        actions = [int(a) for a in match.moves[i] if a >= 0]
        assert (match.moves[i, len(actions):] == -1).all()
        pos = Position(game.game)
        for k, a in enumerate(actions):  # raises IllegalMove, naming it, on an illegal move
            pos.play(BLACK if k % 2 == 0 else WHITE, a)
        score = tromp_taylor(pos.board, SIZE, KOMI)
        assert score == pytest.approx(pos.score()) == pytest.approx(float(match.scores[i]))
        # Colours alternate: the network is black in the even games, and passes from move PASS_FROM on.
        mine = actions[0::2] if i % 2 == 0 else actions[1::2]
        assert n not in mine[: PASS_FROM // 2] and set(mine[PASS_FROM // 2:]) <= {n}, (i, actions)
        colour = BLACK if i % 2 == 0 else WHITE
        if match.endings[i] == "score":
            assert actions[-2:] == [n, n], "a scored game ends with two passes in a row"
            passes_before_end = [k for k in range(1, len(actions) - 1) if actions[k - 1] == actions[k] == n]
            assert match.cleanup[i] == bool(passes_before_end), "the first two passes open the cleanup phase"
        elif match.endings[i] == "move limit":
            assert len(actions) == game.max_moves
        if match.endings[i] in ("score", "move limit"):
            assert match.outcomes[i] == np.sign(score * colour)
        else:  # GNU Go resigned or played a move the rules forbid: the network wins
            assert match.outcomes[i] == 1
    result = MatchResult.from_outcomes("passer", "gnugo", match.outcomes)
    assert result.games == GAMES


def test_cleanup_captures_dead_stones(game, match):
    """In a cleanup phase GNU Go removes the passer's dead stones: it ends with more area than
    the same game stopped at the first two passes would give it (never less)."""
    n, gains = SIZE * SIZE, []
    for i in np.flatnonzero(match.cleanup):
        actions = [int(a) for a in match.moves[i] if a >= 0]
        first = next(k for k in range(1, len(actions)) if actions[k - 1] == actions[k] == n)
        pos = Position(game.game)
        for k, a in enumerate(actions[: first + 1]):
            pos.play(BLACK if k % 2 == 0 else WHITE, a)
        gnugo = WHITE if i % 2 == 0 else BLACK
        gains.append((match.scores[i] - pos.score()) * gnugo)
    assert gains and min(gains) >= 0 and max(gains) > 0, gains


def fake_engine(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_dead_engines_give_clear_errors_and_are_closed(game, tmp_path, monkeypatch):
    started = []

    class Recorded(external_eval.GTPClient):
        def __init__(self, command, **kwargs):
            assert kwargs == {"timeout": external_eval.ENGINE_TIMEOUT}  # a hung GNU Go cannot block the run
            super().__init__(command, **kwargs)
            started.append(self)

    monkeypatch.setattr(external_eval, "GTPClient", Recorded)
    play = external_eval.GnuGoMatch(game, passing_mover(game, PASS_FROM))
    with pytest.raises(GTPError, match="not installed"):
        monkeypatch.setattr(external_eval, "find_gnugo", lambda: None)
        play(None, jax.random.PRNGKey(0), games=2, level=0)
    with pytest.raises(GTPError, match="game 1 did not start"):
        play(None, jax.random.PRNGKey(0), games=2, level=0, gnugo=fake_engine(tmp_path, "dies", "exit 1\n"))
    # Answers the set-up commands, then dies at its first genmove: move 1 of game 2, where it is black.
    mid_game = fake_engine(tmp_path, "mid", 'while read line; do case "$line" in genmove*) exit 3;; '
                                            "*) printf '= \\n\\n';; esac; done\n")
    with pytest.raises(GTPError, match=r"game 2, move 1\).*exited while answering"):
        play(None, jax.random.PRNGKey(0), games=2, level=0, gnugo=mid_game)
    assert len(started) == 3 and all(client._proc.poll() is not None for client in started)
    with pytest.raises(ValueError, match="even"):
        play(None, jax.random.PRNGKey(0), games=3, level=0, gnugo=mid_game)


def test_another_engine_plays_by_its_command_line_unseeded(game, tmp_path):
    """An engine that is not GNU Go (here one that, as KataGo, knows neither ``set_random_seed``
    nor ``kgs-genmove_cleanup``, and always passes) plays the match from its command line: plain
    ``genmove`` in the cleanup phase too."""
    log = tmp_path / "heard"
    engine = fake_engine(tmp_path, "passer", f'while read line; do echo "$line" >> {log}; case "$line" in '
                                             "set_random_seed*|kgs-*) printf '? unknown command\\n\\n';; "
                                             "list_commands) printf '= genmove\\nplay\\nquit\\n\\n';; "
                                             "genmove*) printf '= pass\\n\\n';; quit) exit 0;; "
                                             "*) printf '= \\n\\n';; esac; done\n")
    play = external_eval.GnuGoMatch(game, passing_mover(game, PASS_FROM))
    out = play(None, jax.random.PRNGKey(1), games=2, level=1, command=[engine])
    assert out.level == 1 and set(out.endings) == {"score"} and out.cleanup.all()
    heard = log.read_text()
    assert "set_random_seed" not in heard and "genmove" in heard and "boardsize 5" in heard
    assert "kgs-genmove_cleanup" not in heard
    # The passer loses nothing it did not have: the network's stones stand, so it wins every game.
    np.testing.assert_array_equal(out.outcomes, [1.0, 1.0])


def test_katago_settings_and_a_missing_katago(tmp_path, monkeypatch):
    config = zero.with_overrides(SMOKE, {"katago_visits": "2", "katago_games": "4"})
    assert (config.katago_visits, config.katago_games) == (2, 4)
    assert zero.config.config_differences(SMOKE, config) == []  # evaluation-only: free on resume
    assert "katago" in zero.evaluate.matches_at(config, 1, None)
    assert "katago" not in zero.evaluate.matches_at(SMOKE, 1, None)
    for bad, why in (({"katago_visits": 0}, "katago_visits"), ({"katago_games": 3}, "even")):
        with pytest.raises(ValueError, match=why):
            dataclasses.replace(SMOKE, **bad)
    monkeypatch.setenv("ALPHAGO_JAX_KATAGO_DIR", str(tmp_path))  # nothing installed there
    said = []
    assert zero.evaluate.with_katago(config, said.append).katago_visits is None
    assert len(said) == 1 and "alphago-jax katago install" in said[0]
    assert zero.evaluate.with_katago(SMOKE, said.append) is SMOKE and len(said) == 1


def test_config_fields_are_validated():
    assert SMOKE.gnugo_level is None and SMOKE.gnugo_games % 2 == 0
    config = zero.with_overrides(SMOKE, {"gnugo_level": "1", "gnugo_games": "4", "gnugo_path": "/opt/gnugo"})
    assert (config.gnugo_level, config.gnugo_games, config.gnugo_path) == (1, 4, "/opt/gnugo")
    for bad, why in (({"gnugo_games": 3}, "even"), ({"gnugo_games": 0}, "gnugo_games"),
                     ({"gnugo_level": -1}, "gnugo_level"), ({"gnugo_level": True}, "gnugo_level"),
                     ({"gnugo_path": ""}, "gnugo_path")):
        with pytest.raises(ValueError, match=why):
            dataclasses.replace(SMOKE, **bad)
    # Evaluation-only settings: a resumed run may change them.
    assert zero.config.config_differences(SMOKE, config) == []
    said = []
    assert zero.evaluate.gnugo_binary(SMOKE, said.append) is None and said == []  # off: nothing to say
    missing = dataclasses.replace(SMOKE, gnugo_level=0, gnugo_path="/nonexistent/gnugo")
    assert zero.evaluate.gnugo_binary(missing, said.append) is None
    assert len(said) == 1 and "/nonexistent/gnugo" in said[0]
    assert "win_gnugo" in zero.PLOT_PANELS[1] and "elo_gnugo" in zero.PLOT_PANELS[2]


def read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_training_run_logs_its_games_against_gnugo(gnugo_path, tmp_path):
    config = dataclasses.replace(SMOKE, board_size=9, komi=7.5, workers=1, eval_games=2, gate=None, iterations=1,
                                 gnugo_level=0, gnugo_games=2)
    said = []
    result = zero.train(config, tmp_path, progress=False, log=said.append)
    rows = read_csv(result.metrics)
    assert [int(r["step"]) for r in rows] == [0, 1]
    for row in rows:  # at the start and after the last iteration
        assert float(row["win_gnugo"]) in (0.0, 0.5, 1.0)
        assert float(row["win_gnugo_low"]) <= float(row["win_gnugo"]) <= float(row["win_gnugo_high"])
        assert "elo_gnugo" in row
    assert sum("vs GNU Go(0)" in line for line in said) == 2, said
    record = sgf.load(tmp_path / "sample_gnugo.sgf")
    assert record.size == 9 and record.white_name == "GNU Go, level 0" and record.moves

    # Resumed with a GNU Go that is not there: said once, the run goes on without those games.
    missing = dataclasses.replace(config, iterations=3, gnugo_path=str(tmp_path / "no-gnugo"))
    said.clear()
    zero.train(missing, tmp_path, resume=True, progress=False, log=said.append)
    assert sum("no evaluation against GNU Go" in line for line in said) == 1, said
    rows = read_csv(result.metrics)
    assert [int(r["step"]) for r in rows] == [0, 1, 2, 3]
    assert rows[-1]["win_gnugo"] == "" and not math.isnan(float(rows[-1]["win_random"]))
