"""The networks' input sets (``features.zero.INPUTS``): the 6 liberty planes checked against a
flood fill; ``ZeroConfig.inputs``; network files that keep their inputs (older files: the 17
planes); players, ``--init`` and self-play that follow them."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import serialization

import featuregen
import featureref
from alphago_jax import cli, nets, zero
from alphago_jax.features import zero as planes
from alphago_jax.nets.saved import load_network, network_config, save_network
from alphago_jax.play import registry
from alphago_jax.search import make_search, network_evaluator
from alphago_jax.train import replay
from alphago_jax.zero import selfplay

SMOKE = zero.PRESETS["smoke"]  # 5x5, one block of 8 filters
LIBERTIES = dataclasses.replace(SMOKE, inputs="liberties")


def test_liberty_planes_match_a_flood_fill():
    game, states, _ = featuregen.play(7, seed=3, batch=4, steps=40)
    flat = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), states)
    got = np.asarray(jax.jit(jax.vmap(planes.liberty_planes))(flat))
    stones = np.asarray(jax.jit(jax.vmap(planes.zero_planes))(flat))
    assert got.shape == stones.shape[:3] + (23,)
    np.testing.assert_array_equal(got[..., :17], stones)
    boards, to_play = np.asarray(flat.board), np.asarray(flat.to_play)
    counted = 0
    for i in range(boards.shape[0]):
        want = np.zeros((49, 6), np.float32)
        for q in np.flatnonzero(boards[i]):
            libs = len(featureref.chain(boards[i].tolist(), int(q), 7)[1])
            side = 0 if boards[i, q] == to_play[i] else 3
            want[q, side + min(libs, 3) - 1] = 1
            counted += libs == 1
        np.testing.assert_array_equal(got[i, ..., 17:].reshape(49, 6), want, err_msg=f"position {i}")
    assert counted > 20  # the capture-biased games put many stones in atari
    assert len(planes.INPUTS["liberties"]) == 23 and planes.INPUTS["liberties"][17] == "own 1 liberty"


def test_inputs_is_a_checked_setting_that_sets_the_network():
    assert SMOKE.inputs == "stones" and SMOKE.net.in_planes == 17
    assert LIBERTIES.net.in_planes == 23
    assert zero.with_overrides(SMOKE, {"inputs": "liberties"}) == LIBERTIES
    with pytest.raises(ValueError, match="inputs.*stones, liberties"):
        dataclasses.replace(SMOKE, inputs="ladders")
    with pytest.raises(ValueError, match="no input set has 20 planes"):
        planes.inputs_of(20)


@pytest.fixture(scope="module")
def liberty_file(tmp_path_factory):
    net = LIBERTIES.net
    variables = nets.init_variables(net, jax.random.PRNGKey(0), 5)
    path = save_network(tmp_path_factory.mktemp("nets") / "lib.msgpack", variables, **network_config(net),
                        board_size=5, komi=0.5)
    return path, variables


def test_files_keep_their_inputs_and_players_follow_them(liberty_file, tmp_path):
    path, variables = liberty_file
    saved = load_network(path)
    assert saved.inputs == "liberties" and saved.net == LIBERTIES.net
    network = registry.saved_network(saved, "lib")
    assert network.planes is planes.liberty_planes and "liberty_planes" in network.key
    assert registry.saved_network(load_network(registry.shipped_network_path()), "shipped").planes is planes.zero_planes
    # A file without the field (written before it existed) has the 17 planes.
    record = serialization.msgpack_restore(path.read_bytes())
    stones = nets.init_variables(SMOKE.net, jax.random.PRNGKey(0), 5)
    old = save_network(tmp_path / "old.msgpack", stones, **network_config(SMOKE.net), board_size=5, komi=0.5)
    header = serialization.msgpack_restore(old.read_bytes())
    del header["config"]["inputs"]
    old.write_bytes(serialization.msgpack_serialize(header))
    assert load_network(old).inputs == "stones"
    # A header naming unknown planes, or planes its arrays do not fit, is refused by name.
    record["config"]["inputs"] = "ladders"
    (tmp_path / "bad.msgpack").write_bytes(serialization.msgpack_serialize(record))
    with pytest.raises(ValueError, match="bad.msgpack: not a usable network file: bad network description "
                                         ".*unknown input planes 'ladders'"):
        load_network(tmp_path / "bad.msgpack")
    record["config"]["inputs"] = "stones"
    (tmp_path / "misfit.msgpack").write_bytes(serialization.msgpack_serialize(record))
    with pytest.raises(ValueError, match="stem_conv.*shape"):
        load_network(tmp_path / "misfit.msgpack")
    with pytest.raises(ValueError, match="unknown input planes"):
        save_network(tmp_path / "never.msgpack", variables, **{**network_config(LIBERTIES.net), "inputs": "x"},
                     board_size=5, komi=0.5)
    assert not (tmp_path / "never.msgpack").exists()


def test_init_keeps_or_extends_the_inputs(liberty_file, tmp_path):
    path, variables = liberty_file
    assert zero.init_network(path, LIBERTIES).inputs == "liberties"
    with pytest.raises(ValueError, match=r"inputs=liberties, board 5\) does not fit this run's .*inputs=stones"):
        zero.init_network(path, SMOKE)
    # A network of the 17 planes starts a run of the 23: zero weights on the new planes, same outputs.
    stones = jax.tree_util.tree_map(np.asarray, nets.init_variables(SMOKE.net, jax.random.PRNGKey(2), 5))
    file = save_network(tmp_path / "stones.msgpack", stones, **network_config(SMOKE.net), board_size=5, komi=0.5)
    widened = zero.init_network(file, LIBERTIES)
    assert widened.net == LIBERTIES.net and widened.inputs == "liberties"
    _, states, _ = featuregen.play(5, seed=1, batch=2, steps=12)
    flat = jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), states)
    before = SMOKE.net.apply(stones, jax.vmap(planes.zero_planes)(flat))
    after = LIBERTIES.net.apply(widened.variables, jax.vmap(planes.liberty_planes)(flat))
    assert np.asarray(jax.vmap(planes.liberty_planes)(flat))[..., 17:].any()
    for b, a in zip(before, after):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)


def test_selfplay_records_the_networks_planes():
    config = dataclasses.replace(LIBERTIES, max_moves=12)
    game, net = config.game, config.net
    variables = jax.jit(lambda k: nets.init_variables(net, k, size=5))(jax.random.PRNGKey(1))
    evaluator = network_evaluator(lambda v, x: net.apply(v, x), planes.liberty_planes)
    search = make_search(game, evaluator, config.selfplay_search)
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search))
    sp = selfplay.selfplay_init(game, 2, inputs="liberties")
    assert sp.planes.shape == (2, 12, 5, 5, 23)
    buffer = replay.replay_init(64, replay.Examples(jnp.zeros((5, 5, 23), jnp.uint8), jnp.zeros(26), jnp.float32(0)))
    for t in range(6):
        sp, buffer, _ = move(variables, sp, buffer, jax.random.PRNGKey(t))
    checked = 0
    for b in range(2):  # each recorded position's planes are those of the position replayed
        state = game.init()
        for i, a in enumerate(np.asarray(sp.actions[b, :int(sp.length[b])])):
            want = np.asarray(planes.liberty_planes(state), np.uint8)
            np.testing.assert_array_equal(np.asarray(sp.planes[b, i]), want)
            state = game.step(state, int(a))
            checked += 1
    assert checked >= 6 and np.asarray(sp.planes[..., 17:]).any()


def test_a_run_trains_and_exports_the_planes_it_was_set_to(tmp_path):
    run = tmp_path / "run"
    assert cli.main(["train", "--preset", "smoke", "--no-progress", "--iterations", "1", "--set", "inputs=liberties",
                     "--set", "eval_games=0", "--set", "gate=none", "--out", str(run)]) == 0
    saved = load_network(zero.export_network(run, tmp_path / "run.msgpack"))
    assert saved.inputs == "liberties" and saved.info["train_steps"] == SMOKE.train_steps
    assert zero.init_network(run, LIBERTIES).net.in_planes == 23
