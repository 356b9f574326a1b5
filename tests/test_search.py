"""PUCT and Gumbel search on mctx over the game rules: decisions, invariants, evaluators."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards
from alphago_jax import games
from alphago_jax.games import grid
from alphago_jax.nets import DualResNet
from alphago_jax.features import symmetry
from alphago_jax.search import SearchConfig, make_search, mixed_evaluator, network_evaluator, rollout_evaluator

CAPTURE_IN_ONE = """
. X . . .
X O X . .
. . . O .
. . . . .
. . . . .
"""


def _batch(state, n):
    return jax.tree_util.tree_map(lambda x: jnp.stack([x] * n), state)


@pytest.fixture(scope="module")
def atari5():
    return games.make("atari_go", size=5)


def test_pure_mcts_takes_the_winning_capture(atari5):
    game = atari5
    state = game.init_from_board(jnp.asarray(boards.parse(CAPTURE_IN_ONE), jnp.int8), 1)
    # Every one of the 20 legal moves needs visits before the exact win stands out from the
    # noisy random-playout values: a wide exploration constant and enough simulations.
    config = SearchConfig(num_simulations=256, c_puct=4.0, temperature=0.0, dirichlet_fraction=0.0)
    search = make_search(game, rollout_evaluator(game), config)
    out = search(None, _batch(state, 4), jax.random.PRNGKey(0))
    b3 = grid.from_vertex("B3", 5)
    np.testing.assert_array_equal(np.asarray(out.actions), b3)
    # Capturing ends the game: the edge's value is an exact win for the mover.
    np.testing.assert_allclose(np.asarray(out.q_values[:, b3]), 1.0)
    assert bool(jnp.all(out.next_states.terminal)) and bool(jnp.all(out.next_states.loser == -1))


def test_search_invariants_on_go():
    game = games.make("go", size=5, komi=0.5)
    key = jax.random.PRNGKey(3)
    # Three positions a few random moves in.
    states = jax.vmap(lambda _: game.init())(jnp.arange(3))
    step = jax.jit(jax.vmap(game.step))
    for i in range(6):
        mask = np.asarray(states.legal)
        rng = np.random.default_rng(i)
        acts = np.array([rng.choice(np.flatnonzero(m[:-1])) for m in mask], np.int32)
        states = step(states, jnp.asarray(acts))
    config = SearchConfig(num_simulations=24, temperature=1.0, temperature_moves=7)
    out = make_search(game, rollout_evaluator(game, max_moves=60), config)(None, states, key)
    a = game.num_actions
    chex.assert_shape([out.actions, out.root_value], [(3,), (3,)])
    chex.assert_shape([out.visit_probs, out.q_values], [(3, a), (3, a)])
    chex.assert_type([out.actions, out.visit_probs], [jnp.int32, jnp.float32])
    legal = np.asarray(states.legal)
    probs = np.asarray(out.visit_probs)
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-6)
    assert np.all(probs[~legal] == 0), "visits on an illegal action"
    assert np.all(legal[np.arange(3), np.asarray(out.actions)]), "an illegal move was chosen"
    assert np.all(probs[np.arange(3), np.asarray(out.actions)] > 0), "a move was chosen without visits"
    chex.assert_trees_all_equal(out.next_states, step(states, out.actions))
    assert np.all(np.abs(np.asarray(out.root_value)) <= 1.0)
    # Seven moves played with temperature_moves=7: from now on the most visited move is played.
    states7 = step(states, out.actions)
    out7 = make_search(game, rollout_evaluator(game, max_moves=60), config)(None, states7, key)
    visits7 = np.asarray(out7.visit_probs)
    np.testing.assert_array_equal(np.asarray(out7.actions), visits7.argmax(-1))


def _planes(state):
    b = state.board.reshape(5, 5)
    return jnp.stack([b == state.to_play, b == -state.to_play, jnp.ones_like(b, bool)], -1).astype(jnp.float32)


@pytest.fixture(scope="module")
def tiny_net():
    net = DualResNet(in_planes=3, blocks=1, filters=8, value_hidden=8)
    return (lambda v, x: net.apply(v, x)), net.init(jax.random.PRNGKey(0), jnp.zeros((1, 5, 5, 3)))


def test_averaging_over_all_symmetries_makes_the_evaluation_equivariant(tiny_net):
    apply_fn, variables = tiny_net
    game = games.make("go", size=5)
    board = boards.parse("""
        . X . . .
        . O X . .
        . . O . .
        . . . . X
        . . . . .
    """)
    k = 3
    states = jax.vmap(lambda b: game.init_from_board(b, -1))(
        jnp.asarray(np.stack([board, np.asarray(symmetry.apply_board(board, k))]), jnp.int8))
    key = jax.random.PRNGKey(0)
    logits, value = jax.jit(network_evaluator(apply_fn, _planes, "all"))(variables, states, key)
    np.testing.assert_allclose(np.asarray(value[0]), np.asarray(value[1]), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(symmetry.apply_policy(logits[0], k)), np.asarray(logits[1]), rtol=1e-4, atol=1e-5)
    # A single network evaluation is not equivariant, so the averaging is what did it.
    raw, _ = network_evaluator(apply_fn, _planes)(variables, states, key)
    assert not np.allclose(np.asarray(symmetry.apply_policy(raw[0], k)), np.asarray(raw[1]), atol=1e-5)
    with pytest.raises(ValueError, match="unknown symmetries"):
        network_evaluator(apply_fn, _planes, "some")


def test_mixed_evaluator_weights_value_and_rollout(tiny_net):
    apply_fn, variables = tiny_net
    game = games.make("go", size=5)
    states = jax.vmap(lambda _: game.init())(jnp.arange(2))
    net_eval, roll_eval = network_evaluator(apply_fn, _planes), rollout_evaluator(game)
    key = jax.random.PRNGKey(4)
    _, v = net_eval(variables, states, jax.random.split(key)[0])
    _, z = roll_eval(variables, states, jax.random.split(key)[1])
    for lam in (0.0, 0.5, 1.0):
        logits, mixed = mixed_evaluator(net_eval, roll_eval, lam)(variables, states, key)
        np.testing.assert_allclose(np.asarray(mixed), (1 - lam) * np.asarray(v) + lam * np.asarray(z), rtol=1e-6)
    with pytest.raises(ValueError, match="lam"):
        mixed_evaluator(net_eval, roll_eval, 1.5)


def test_gumbel_search_with_a_network_evaluator(tiny_net):
    apply_fn, variables = tiny_net
    game = games.make("go", size=5)
    evaluator = network_evaluator(apply_fn, _planes, "random")
    config = SearchConfig(num_simulations=8, algorithm="gumbel", gumbel_considered=4, temperature=0.0)
    states = jax.vmap(lambda _: game.init())(jnp.arange(2))
    out = make_search(game, evaluator, config)(variables, states, jax.random.PRNGKey(1))
    chex.assert_shape(out.visit_probs, (2, game.num_actions))
    assert np.all(np.asarray(states.legal)[np.arange(2), np.asarray(out.actions)])
    np.testing.assert_allclose(np.asarray(out.visit_probs).sum(-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("bad, match", [
    (dict(algorithm="alphabeta"), "unknown search algorithm"),
    (dict(num_simulations=0), "num_simulations"),
    (dict(temperature=-1.0), "temperature"),
])
def test_bad_config_is_named(bad, match):
    with pytest.raises(ValueError, match=match):
        SearchConfig(**bad)
