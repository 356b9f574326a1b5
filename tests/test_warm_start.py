"""The supervised warm start of AlphaGo Zero's network from game records (``zero.warm_start``).

Records are made here from random legal 5x5 games (``sgf.record_from_moves``), so the test
needs nothing from ``../shared``: every position's planes are checked against the planes of the
same position reached by stepping the rules, its policy against the recorded move and its value
against the result; records that cannot be used are skipped with their reason; a tiny network
fits the records' moves better than chance after a few steps.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import features, games, nets, sgf
from alphago_jax.games.history import WithHistory
from alphago_jax.playout import sample_legal
from alphago_jax.zero import warm_start

SIZE = 5


def random_games(count: int, moves: int, seed: int = 0) -> list[list[int]]:
    game = games.make("go", size=SIZE)
    out = []
    key = jax.random.PRNGKey(seed)
    for g in range(count):
        state, actions = game.init(), []
        for _ in range(moves + g % 3):
            key, k = jax.random.split(key)
            a = int(sample_legal(k, game.legal_action_mask(state)[None])[0])
            if game.is_terminal(game.step(state, a)):
                break
            actions.append(a)
            state = game.step(state, a)
        out.append(actions)
    return out


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("records")
    game = games.make("go", size=SIZE, komi=0.5)
    actions = random_games(6, 9)
    results = ["B+3.5", "W+R", None, "W+0.5", "B+R", "Draw"]
    for i, (moves, result) in enumerate(zip(actions, results)):
        sgf.save(sgf.record_from_moves(game, moves, result=result), folder / f"game-{i}.sgf")
    sgf.save(sgf.record_from_moves(games.make("go", size=7), [3, 4]), folder / "other-size.sgf")
    (folder / "broken.sgf").write_text("(;GM[1]SZ[5];B[aa];W[")
    return folder, actions, results


def test_positions_planes_moves_and_results(records):
    folder, actions, results = records
    data = warm_start.record_examples([folder], size=SIZE, komi=0.5, batch=4)
    assert data.games == 6 and data.skipped == 2
    assert any("other-size.sgf: board size 7" in r for r in data.reasons)
    assert any("broken.sgf" in r for r in data.reasons)
    ex = data.examples
    assert ex.planes.dtype == np.uint8 and ex.planes.shape == (sum(map(len, actions)), SIZE, SIZE, 17)
    # The files sort as game-0 .. game-5: positions come game by game, move by move.
    game = WithHistory(games.make("go", size=SIZE, komi=0.5), boards=8)
    row = 0
    for g, (moves, result) in enumerate(zip(actions, results)):
        winner = {"B": 1, "W": -1}.get((result or "?")[0], 0)
        state = game.init()
        for a in moves:
            np.testing.assert_array_equal(ex.planes[row], np.asarray(features.zero_planes(state), np.uint8))
            assert np.argmax(ex.policy[row]) == a and ex.policy[row].sum() == 1
            assert ex.value[row] == winner * int(state.to_play)
            assert data.game[row] == g
            state = game.step(state, a)
            row += 1


def test_a_tiny_network_learns_the_moves(records):
    folder, _, _ = records
    data = warm_start.record_examples([folder], size=SIZE, komi=0.5)
    net = nets.DualResNet(blocks=1, filters=8, value_hidden=8)
    result = warm_start.train_supervised(data, net, steps=60, batch=32, held_out=0.0, progress=False)
    assert result.held_out == {} and result.metrics["policy_loss"].shape == (60,)
    assert result.metrics["policy_loss"][-10:].mean() < result.metrics["policy_loss"][:10].mean()
    scored = warm_start.evaluate_examples(net, result.state.variables, data.examples)
    assert scored["positions"] == data.examples.value.shape[0]
    assert scored["policy_accuracy"] > 2.0 / (SIZE * SIZE)  # twice chance on the training games
    # Held-out games are whole games: every 2nd here.
    train, test = warm_start.split_games(data, 0.5)
    assert train.value.shape[0] + test.value.shape[0] == data.examples.value.shape[0]
    held = set(np.unique(data.game[data.game % 2 == 1]))
    assert len(held) == 3


def test_no_usable_records_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="no .sgf files"):
        warm_start.record_examples([tmp_path], size=5)
    sgf.save(sgf.record_from_moves(games.make("go", size=7), [3]), tmp_path / "a.sgf")
    with pytest.raises(ValueError, match="no usable 5x5 game records.*board size 7"):
        warm_start.record_examples([tmp_path / "a.sgf"], size=5)


def test_legal_moves_only(tmp_path):
    game = games.make("go", size=SIZE)
    # Move 3 plays on an occupied point: the rules reject it, so the record is left out.
    sgf.save(sgf.record_from_moves(game, [0, 1, 0]), tmp_path / "bad.sgf")
    sgf.save(sgf.record_from_moves(game, [0, 1, 2]), tmp_path / "good.sgf")
    data = warm_start.record_examples(sorted(tmp_path.glob("*.sgf")), size=SIZE)
    assert data.games == 1 and data.skipped == 1 and "at move 3" in data.reasons[0]
    assert jnp.asarray(data.examples.value).shape == (3,)
