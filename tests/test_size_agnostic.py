"""Networks that play every board size (KataGo's fully convolutional heads, ``size_agnostic``):
one set of parameters on 5x5, 9x9 and 19x19; their files; ``--init`` across board sizes."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import nets, zero
from alphago_jax.nets.saved import load_network, network_config, save_network
from alphago_jax.play import registry

SMOKE = zero.PRESETS["smoke"]  # 5x5, one block of 8 filters
AGNOSTIC = dataclasses.replace(SMOKE, size_agnostic=True)


def _shapes(tree):
    return jax.tree_util.tree_map(lambda x: tuple(x.shape), tree)


@pytest.fixture(scope="module")
def net_and_variables():
    net = AGNOSTIC.net
    return net, nets.init_variables(net, jax.random.PRNGKey(0), 9)


def test_one_set_of_parameters_runs_on_every_size(net_and_variables):
    net, variables = net_and_variables
    assert net.size_agnostic and net.pools(0)  # the tower pools too: its features know the board
    for size in (5, 19):  # parameters made on 9x9, run unchanged on other boards
        assert _shapes(nets.init_variables(net, jax.random.PRNGKey(0), size)) == _shapes(variables)
        logits, value = net.apply(variables, jnp.zeros((3, size, size, 17), jnp.uint8))
        assert logits.shape == (3, size * size + 1) and value.shape == (3,)
        assert np.isfinite(np.asarray(logits)).all() and (np.abs(np.asarray(value)) <= 1).all()
    # The sized heads of AlphaGo Zero do not: their fully connected layers grow with the board.
    sized = SMOKE.net
    assert _shapes(nets.init_variables(sized, jax.random.PRNGKey(0), 5)) != _shapes(
        nets.init_variables(sized, jax.random.PRNGKey(0), 9))


def test_the_pooled_heads_see_the_board_size(net_and_variables):
    # Pooled features include the mean scaled by (S - 14) / 10: an empty board gives other
    # outputs on 9x9 than on 19x19, as it must (komi and territory differ with the size).
    net, variables = net_and_variables
    v9 = net.apply(variables, jnp.ones((1, 9, 9, 17), jnp.uint8))[1]
    v19 = net.apply(variables, jnp.ones((1, 19, 19, 17), jnp.uint8))[1]
    assert not np.allclose(np.asarray(v9), np.asarray(v19))


def test_files_and_players_of_a_size_agnostic_network(net_and_variables, tmp_path):
    net, variables = net_and_variables
    path = save_network(tmp_path / "any.msgpack", variables, **network_config(net), board_size=9, komi=7.5)
    saved = load_network(path)
    assert saved.net == net and saved.plays(9) and saved.plays(19)
    network = registry.saved_network(saved, "any")
    assert network.variables(19) is network.variables(9)  # the same arrays for every board
    sized = SMOKE.net
    other = save_network(tmp_path / "sized.msgpack", nets.init_variables(sized, jax.random.PRNGKey(0), 5),
                         **network_config(sized), board_size=5, komi=0.5)
    with pytest.raises(ValueError, match="plays 5x5, not 9x9"):
        registry.saved_network(load_network(other), "sized").variables(9)


def test_init_across_board_sizes(net_and_variables, tmp_path):
    net, variables = net_and_variables
    nine = save_network(tmp_path / "nine.msgpack", variables, **network_config(net), board_size=9, komi=7.5)
    started = zero.init_network(nine, AGNOSTIC)  # a 5x5 run from a 9x9 network
    assert started.net == AGNOSTIC.net
    jax.tree_util.tree_map(np.testing.assert_array_equal, started.variables, jax.tree_util.tree_map(
        np.asarray, variables))
    sized = dataclasses.replace(SMOKE, board_size=7)
    seven = save_network(tmp_path / "seven.msgpack", nets.init_variables(sized.net, jax.random.PRNGKey(0), 7),
                         **network_config(sized.net), board_size=7, komi=7.5)
    with pytest.raises(ValueError, match="only a size-agnostic network"):
        zero.init_network(seven, SMOKE)
    with pytest.raises(ValueError, match="size-agnostic heads, board 9\\) does not fit"):
        zero.init_network(nine, SMOKE)  # a size-agnostic network into a run with sized heads


def test_size_agnostic_is_a_checked_setting():
    with pytest.raises(ValueError, match="size_agnostic"):
        dataclasses.replace(SMOKE, size_agnostic="yes")
