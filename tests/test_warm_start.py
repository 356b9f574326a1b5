"""The supervised warm start of AlphaGo Zero's network from game records (``zero.warm_start``).

Records are made here from random legal 5x5 games (``sgf.record_from_moves``), so the test
needs nothing from ``../shared``: every position's planes are checked against the planes of the
same position reached by stepping the rules, its policy against the recorded move and its value
against the result; records that cannot be used are skipped with their reason; a tiny network
fits the records' moves better than chance after a few steps.
"""

from __future__ import annotations

import dataclasses

import chex
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


@pytest.mark.parametrize("inputs", ["stones", "liberties"])
def test_positions_planes_moves_and_results(records, inputs):
    folder, actions, results = records
    data = warm_start.record_examples([folder], size=SIZE, komi=0.5, batch=4, inputs=inputs)
    assert data.games == 6 and data.skipped == 2
    assert any("other-size.sgf: board size 7" in r for r in data.reasons)
    assert any("broken.sgf" in r for r in data.reasons)
    ex = data.examples
    planes_of = features.zero.planes_function(inputs)
    assert ex.planes.dtype == np.uint8
    assert ex.planes.shape == (sum(map(len, actions)), SIZE, SIZE, features.zero.num_planes(inputs))
    # The files sort as game-0 .. game-5: positions come game by game, move by move.
    game = WithHistory(games.make("go", size=SIZE, komi=0.5), boards=8)
    row = 0
    for g, (moves, result) in enumerate(zip(actions, results)):
        winner = {"B": 1, "W": -1}.get((result or "?")[0], 0)
        state = game.init()
        for a in moves:
            np.testing.assert_array_equal(ex.planes[row], np.asarray(planes_of(state), np.uint8))
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


def with_teacher(folder, actions) -> None:
    """A teacher's arrays beside each ``game-i.sgf`` (as ``experiments/katago_teacher.py`` writes
    them), with targets a network can read off the board: the ownership of each point is its
    stone for the player to move (+1 theirs, -1 the opponent's, 0 empty), the score their count."""
    game = games.make("go", size=SIZE, komi=0.5)
    for i, moves in enumerate(actions):
        state, own = game.init(), []
        for a in moves:
            own.append(np.asarray(state.board, np.float32) * int(state.to_play))
            state = game.step(state, a)
        own = np.stack(own)
        policy = np.full((len(moves), SIZE * SIZE + 1), 1.0 / (SIZE * SIZE + 1), np.float16)
        np.savez(folder / f"game-{i}.npz", policy=policy, value=np.zeros(len(moves), np.float32),
                 score=own.sum(-1), ownership=own.astype(np.float16))


def test_fitting_only_the_heads_keeps_moves_and_values(records, tmp_path):
    from alphago_jax import cli, zero
    from alphago_jax.nets.saved import load_network, save_network

    folder, actions, _ = records
    with_teacher(folder, actions)
    data = warm_start.teacher_examples(folder, size=SIZE, komi=0.5)
    config = zero.with_overrides(zero.PRESETS["tiny"], {"ownership_weight": "1", "score_weight": "0.1"})
    plain = jax.jit(nets.init_variables, static_argnums=(0, 2))(
        dataclasses.replace(config.net, ownership=False, score=False), jax.random.PRNGKey(1), SIZE)
    source = save_network(tmp_path / "plain.msgpack", plain, blocks=config.blocks, filters=config.filters,
                          value_hidden=config.value_hidden, board_size=SIZE, komi=0.5)
    init = zero.init_network(str(source), config)  # the heads it lacks start fresh
    result = warm_start.fit_heads(data, config.net, init.variables, steps=80, batch=32, learning_rate=3e-2,
                                  held_out=0.0, progress=False)
    assert result.metrics["ownership_loss"][-10:].mean() < 0.8 * result.metrics["ownership_loss"][:10].mean()
    before = warm_start.evaluate_heads(config.net, init.variables, data.examples)
    after = warm_start.evaluate_heads(config.net, result.state.variables, data.examples)
    assert after["ownership_loss"] < before["ownership_loss"] and after["ownership_agreement"] > 0.8, (before, after)
    fitted = result.state.variables
    for name in ("params", "batch_stats"):  # everything but the two heads, bit for bit
        kept = {k: v for k, v in fitted[name].items() if k not in warm_start.AUX_HEADS}
        chex.assert_trees_all_equal(kept, plain[name])
    x = jnp.asarray(data.examples.planes[:16])
    moves_values = jax.jit(nets.policy_value_apply(config.net))
    chex.assert_trees_all_equal(moves_values(fitted, x), moves_values(init.variables, x))

    bare = dataclasses.replace(config.net, ownership=False, score=False)
    with pytest.raises(ValueError, match="none of the heads"):
        warm_start.fit_heads(data, bare, plain, steps=1, progress=False)

    # The command: a network file with both heads, read back with them; no teacher, a clear error.
    out = tmp_path / "heads"
    argv = ["warm-start", "--records", str(folder), "--out", str(out), "--init", str(source), "--preset", "tiny",
            "--set", "ownership_weight=1", "--set", "score_weight=0.1", "--heads-only", "--steps", "5",
            "--batch", "8", "--held-out", "0.5", "--no-progress"]
    assert cli.main(argv) == 0
    saved = load_network(out / zero.WARM_START_FILE)
    step = saved.info["chain"][-1]
    assert saved.net.ownership and saved.net.score and step["heads_only"]
    held = sum(len(actions[g]) for g in (1, 3, 5))  # every other game of the six
    assert step["held_out"]["positions"] == held
    with pytest.raises(SystemExit):  # argparse's usage error: a share of the games is at most one half
        cli.main(argv[:-2] + ["0.9", "--no-progress"])
    # Every game held out: the network scored on the whole record set, which leaves none to train on.
    assert cli.main(argv[:-7] + ["--steps", "0", "--held-out", "1", "--no-progress"]) == 0
    scored = load_network(out / zero.WARM_START_FILE).info["chain"][-1]
    assert scored["held_out"]["positions"] == len(data.examples.value)
    assert cli.main(argv[:-2] + ["1", "--no-progress"]) == 2
    assert cli.main(argv[:1] + ["--records", str(tmp_path / "none")] + argv[3:]) == 2


def test_records_that_say_who_owns_what_train_the_ownership_and_score_heads(records, tmp_path, capsys):
    from alphago_jax import cli, zero
    from alphago_jax.nets.saved import load_network, save_network
    from alphago_jax.train.replay import NO_OWNER

    _, actions, _ = records
    game = games.make("go", size=SIZE, komi=0.5)
    folder = tmp_path / "owned"
    folder.mkdir()
    black, white = range(0, 10), range(15, 25)  # 10 - 10 - 0.5: white by half a point
    sgf.save(sgf.record_from_moves(game, actions[0], result="W+0.5", black_area=black, white_area=white),
             folder / "game-0.sgf")
    sgf.save(sgf.record_from_moves(game, actions[1], result="W+R"), folder / "game-1.sgf")
    record = sgf.load(folder / "game-0.sgf")  # TB / TW read back
    assert record.black_area == tuple(black) and record.white_area == tuple(white)
    assert sgf.load(folder / "game-1.sgf").final_owner() is None
    owner = record.final_owner()
    assert owner.sum() == 0 and (owner == 0).sum() == 5

    data = warm_start.record_examples([folder], size=SIZE, komi=0.5)
    assert data.games == 2 and data.owned == 1
    first, rest = len(actions[0]), slice(len(actions[0]), None)
    to_play = np.where(np.arange(first) % 2 == 0, 1, -1)
    np.testing.assert_array_equal(data.examples.ownership[:first], owner[None, :] * to_play[:, None])
    np.testing.assert_array_equal(data.examples.score[:first], -0.5 * to_play)
    assert (data.examples.ownership[rest] == NO_OWNER).all() and np.isnan(data.examples.score[rest]).all()

    # The command fits the heads of a network that lacks them to these records.
    config = zero.with_overrides(zero.PRESETS["tiny"], {"ownership_weight": "1", "score_weight": "0.1"})
    plain = nets.init_variables(dataclasses.replace(config.net, ownership=False, score=False),
                                jax.random.PRNGKey(1), SIZE)
    source = save_network(tmp_path / "plain.msgpack", plain, blocks=config.blocks, filters=config.filters,
                          value_hidden=config.value_hidden, board_size=SIZE, komi=0.5)
    argv = ["warm-start", "--records", str(folder), "--out", str(tmp_path / "heads"), "--init", str(source),
            "--preset", "tiny", "--set", "ownership_weight=1", "--set", "score_weight=0.1", "--heads-only",
            "--steps", "3", "--batch", "8", "--no-progress"]
    assert cli.main(argv) == 0
    assert "1 of them with who owns what" in capsys.readouterr().out
    assert load_network(tmp_path / "heads" / zero.WARM_START_FILE).net.ownership
    (folder / "game-0.sgf").unlink()  # no record says who owns what: refused, saying why
    assert cli.main(argv) == 2
    assert "records with ownership targets" in capsys.readouterr().err

    (folder / "bad.sgf").write_text("(;GM[1]SZ[5];B[aa]TB[zz])")
    with pytest.raises(sgf.SGFError, match="TB/TW off the board"):
        sgf.load(folder / "bad.sgf")


def test_held_out_games_that_say_who_owns_what_score_the_heads(records, tmp_path):
    from alphago_jax import zero

    _, actions, _ = records
    game = games.make("go", size=SIZE, komi=0.5)
    for i, moves in enumerate(actions[:2]):  # every 2nd game held out: game-1
        sgf.save(sgf.record_from_moves(game, moves, result="W+0.5", black_area=range(0, 10),
                                       white_area=range(15, 25)), tmp_path / f"game-{i}.sgf")
    data = warm_start.record_examples([tmp_path], size=SIZE, komi=0.5)
    config = zero.with_overrides(zero.PRESETS["tiny"], {"ownership_weight": "1", "score_weight": "0.1"})
    result = warm_start.train_supervised(data, config.net, steps=2, batch=8, held_out=0.5, ownership_weight=1.0,
                                         score_weight=0.1, progress=False)
    _, test = warm_start.split_games(data, 0.5)
    expected = {**warm_start.evaluate_examples(config.net, result.state.variables, test),
                **warm_start.evaluate_heads(config.net, result.state.variables, test)}
    assert result.held_out == pytest.approx(expected) and result.held_out["positions"] == len(actions[1])
    assert result.held_out["ownership_loss"] > 0 and 0 <= result.held_out["ownership_agreement"] <= 1
    # A network without the heads: the moves and values alone.
    bare = dataclasses.replace(config.net, ownership=False, score=False)
    plain = warm_start.train_supervised(data, bare, steps=1, batch=8, held_out=0.5, progress=False)
    assert set(plain.held_out) == {"policy_accuracy", "value_loss", "positions"}


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A tiny network with moves of its own, learnt from other games (and settled batch statistics),
    to keep: (those games' folder, its variables, its network file)."""
    from alphago_jax import zero
    from alphago_jax.nets.saved import save_network

    config, tmp = zero.PRESETS["tiny"], tmp_path_factory.mktemp("plain")
    game, other = games.make("go", size=SIZE, komi=0.5), tmp / "other"
    other.mkdir()
    for i, moves in enumerate(random_games(6, 9, seed=5)):
        sgf.save(sgf.record_from_moves(game, moves, result="B+1.5"), other / f"game-{i}.sgf")
    variables = warm_start.train_supervised(warm_start.record_examples([other], size=SIZE, komi=0.5), config.net,
                                            steps=40, batch=32, held_out=0.0, progress=False).state.variables
    source = save_network(tmp / "plain.msgpack", variables, blocks=config.blocks, filters=config.filters,
                          value_hidden=config.value_hidden, board_size=SIZE, komi=0.5)
    return other, variables, source


def policy_drift(net, variables, planes, policy) -> float:
    """Mean KL divergence from ``policy`` [N, A] to ``variables``' move probabilities on ``planes``."""
    log_p = jax.nn.log_softmax(nets.policy_value_apply(net)(variables, jnp.asarray(planes))[0], axis=-1)
    return float(jnp.mean(jnp.sum(jax.scipy.special.xlogy(policy, policy) - policy * log_p, -1)))


def copy_records(source, folder):
    """The 5x5 records of ``source`` alone in ``folder`` (another test puts a teacher's arrays beside them)."""
    folder.mkdir()
    for path in source.glob("game-*.sgf"):
        (folder / path.name).write_bytes(path.read_bytes())
    return folder


def warm_started(folder, source, flags, out):
    """The network of 60 steps of ``alphago-jax warm-start`` on ``folder`` from ``source``, with ``flags``."""
    from alphago_jax import cli, zero
    from alphago_jax.nets.saved import load_network

    argv = ["warm-start", "--records", str(folder), "--out", str(out), "--init", str(source), "--preset", "tiny",
            *flags, "--steps", "60", "--batch", "16", "--held-out", "0.5", "--no-progress"]
    assert cli.main(argv) == 0
    return load_network(out / zero.WARM_START_FILE)


def test_keeping_the_policy_learns_results_with_the_moves_of_the_init_network(records, plain, tmp_path, capsys):
    from alphago_jax import cli, zero

    folder = copy_records(records[0], tmp_path / "records")
    config = zero.PRESETS["tiny"]
    data = warm_start.record_examples([folder], size=SIZE, komi=0.5)
    _, variables, source = plain
    kept = warm_start.own_policy(config.net, variables, data.examples, batch=16)  # two batches and a part
    logits, _ = nets.policy_value_apply(config.net)(variables, jnp.asarray(data.examples.planes))
    np.testing.assert_allclose(kept.policy, jax.nn.softmax(logits, axis=-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(kept.value, data.examples.value)  # the results stay the records'

    def drift(flags, out):  # mean KL from --init's move probabilities to the trained network's
        saved = warm_started(folder, source, flags, out)
        return policy_drift(config.net, saved.variables, data.examples.planes, kept.policy), saved

    kept_kl, saved = drift(["--keep-policy"], tmp_path / "kept")
    moved_kl, _ = drift([], tmp_path / "moved")  # towards the recorded moves
    assert saved.info["chain"][-1]["keep_policy"] and kept_kl < 0.5 * moved_kl, (kept_kl, moved_kl)
    argv = ["warm-start", "--records", str(folder), "--out", str(tmp_path / "none"), "--preset", "tiny",
            "--keep-policy", "--no-progress"]
    assert cli.main(argv) == 2  # no network to keep
    assert "--keep-policy" in capsys.readouterr().err


def test_keeping_the_values_learns_moves_with_the_judgement_of_the_init_network(records, plain, tmp_path, capsys):
    from alphago_jax import cli, zero

    folder = copy_records(records[0], tmp_path / "records")
    config = zero.PRESETS["tiny"]
    data = warm_start.record_examples([folder], size=SIZE, komi=0.5)
    _, variables, source = plain
    apply = nets.policy_value_apply(config.net)
    kept = warm_start.own_values(config.net, variables, data.examples, batch=16)
    np.testing.assert_allclose(kept.value, apply(variables, jnp.asarray(data.examples.planes))[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(kept.policy, data.examples.policy)  # the moves stay the records'

    def drift(flags, out):  # mean squared change of the values from --init's, and the policy's KL drift
        saved = warm_started(folder, source, flags, out)
        values = apply(saved.variables, jnp.asarray(data.examples.planes))[1]
        own = warm_start.own_policy(config.net, variables, data.examples).policy
        return float(jnp.mean((values - kept.value) ** 2)), policy_drift(config.net, saved.variables,
                                                                          data.examples.planes, own), saved

    kept_value, kept_kl, saved = drift(["--keep-values"], tmp_path / "kept")
    moved_value, moved_kl, _ = drift([], tmp_path / "moved")  # towards the recorded results too
    assert saved.info["chain"][-1]["keep_values"] and kept_value < 0.7 * moved_value, (kept_value, moved_value)
    assert kept_kl > 0.5 * moved_kl, (kept_kl, moved_kl)  # the moves were learnt all the same
    argv = ["warm-start", "--records", str(folder), "--out", str(tmp_path / "both"), "--init", str(source),
            "--preset", "tiny", "--keep-values", "--keep-policy", "--no-progress"]
    assert cli.main(argv) == 2
    assert "--keep-values" in capsys.readouterr().err


def test_a_teacher_may_label_some_positions_of_a_record(records, tmp_path):
    folder, actions, _ = records
    folder = copy_records(folder, tmp_path / "teacher")
    with_teacher(folder, actions)
    full = warm_start.teacher_examples(folder, size=SIZE, komi=0.5)
    for path in folder.glob("*.npz"):  # the odd positions alone, as experiments/tactical_teacher.py writes
        with np.load(path) as a:
            arrays = dict(a)
        index = np.arange(1, len(arrays["value"]), 2)
        np.savez(path, index=index.astype(np.int32), **{k: v[index] for k, v in arrays.items()})
    part = warm_start.teacher_examples(folder, size=SIZE, komi=0.5)
    first = np.searchsorted(full.game, np.arange(full.games))  # each record's first row
    odd = (np.arange(len(full.game)) - first[full.game]) % 2 == 1
    for name in ("planes", "policy", "value", "ownership", "score"):
        np.testing.assert_array_equal(getattr(part.examples, name), getattr(full.examples, name)[odd], err_msg=name)
    np.testing.assert_array_equal(part.game, full.game[odd])
    assert part.games == full.games == len(actions)
    broken = sorted(folder.glob("*.npz"))[0]
    with np.load(broken) as a:
        arrays = dict(a)
    arrays["index"][-1] = 99  # past the record's positions
    np.savez(broken, **arrays)
    with pytest.raises(ValueError, match=f"{broken.name}: .* labelled, of the record's .* at \\["):
        warm_start.teacher_examples(folder, size=SIZE, komi=0.5)


def test_an_anchor_holds_the_init_network_where_the_new_targets_do_not_reach(records, plain, tmp_path, capsys):
    from alphago_jax import cli, zero
    from alphago_jax.nets.saved import load_network

    folder, actions, _ = records
    teacher = copy_records(folder, tmp_path / "teacher")
    with_teacher(teacher, actions)
    for path in teacher.glob("*.npz"):  # every move a pass: targets far from the network's own moves
        with np.load(path) as a:
            arrays = dict(a)
        arrays["policy"] = np.eye(SIZE * SIZE + 1, dtype=np.float16)[np.full(len(arrays["value"]), SIZE * SIZE)]
        np.savez(path, **arrays)
    other, variables, source = plain
    config = zero.PRESETS["tiny"]
    mine = warm_start.record_examples([other], size=SIZE, komi=0.5).examples
    own = warm_start.own_targets(config.net, variables, mine, batch=16)
    logits, value = nets.policy_value_apply(config.net)(variables, jnp.asarray(mine.planes))
    np.testing.assert_allclose(own.policy, jax.nn.softmax(logits, axis=-1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(own.value, value, rtol=1e-5, atol=1e-6)
    assert own.ownership is None and own.score is None  # the tiny network has no such heads

    def drift(flags, out):
        argv = ["warm-start", "--records", str(teacher), "--out", str(out), "--init", str(source), "--preset", "tiny",
                *flags, "--steps", "60", "--batch", "16", "--learning-rate", "3e-3", "--held-out", "0",
                "--no-progress"]
        assert cli.main(argv) == 0
        saved = load_network(out / zero.WARM_START_FILE)
        return policy_drift(config.net, saved.variables, mine.planes, own.policy), saved

    held_kl, saved = drift(["--anchor", str(other), "--anchor-share", "0.75"], tmp_path / "held")
    free_kl, _ = drift([], tmp_path / "free")
    assert saved.info["chain"][-1]["anchor"] == {"records": str(other), "share": 0.75}
    assert held_kl < 0.5 * free_kl, (held_kl, free_kl)
    assert "anchor: " in capsys.readouterr().out
    argv = ["warm-start", "--records", str(teacher), "--out", str(tmp_path / "none"), "--preset", "tiny",
            "--anchor", str(other), "--no-progress"]
    assert cli.main(argv) == 2  # no network to hold
    assert "--anchor" in capsys.readouterr().err
