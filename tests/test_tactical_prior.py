"""The capture reader's prior (``search.tactical_moves``, ``tactical_evaluator``,
``features.alphago.net_moves``) on the 9x9 tactical suite, the root reading of a
``RootedEvaluator`` in ``TreeSearch``, and the ``tactics=`` option of the network players."""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.features.alphago import net_moves
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.play import registry, tactics
from alphago_jax.search import (RootedEvaluator, SearchConfig, TreeSearch, tactical_evaluator,
                                tactical_moves)

SIZE = tactics.SIZE
N = SIZE * SIZE
GAME = Go(size=SIZE)


@pytest.fixture(scope="module")
def suite():
    """The suite's problems and their positions as one batch of ``GoState``s."""
    problems = tactics.load_suite()
    boards = jnp.asarray(np.stack([p.setup for p in problems]), jnp.int8)
    colours = jnp.asarray([p.to_play for p in problems], jnp.int8)
    return problems, jax.vmap(GAME.init_from_board)(boards, colours)


@pytest.fixture(scope="module")
def read(suite):
    """``(without nets, with nets)``: ``tactical_moves`` of every suite position, bool[P, N + 1]."""
    _, states = suite
    reader = jax.jit(tactical_moves, static_argnums=(1, 2))
    return np.asarray(reader(states, SIZE, False)), np.asarray(reader(states, SIZE, True))


def _marked(row) -> set[int]:
    return set(np.flatnonzero(row).tolist())


def test_the_reader_finds_the_suites_captures_ladders_and_nets_and_no_wrong_move(suite, read):
    problems, _ = suite
    plain, with_nets = read
    assert not with_nets[:, N].any()  # never the pass
    for i, p in enumerate(problems):
        marked = _marked(with_nets[i])
        # Every move the reader names in the suite is a right one.
        assert marked <= p.right_actions, (p.name, [grid.to_vertex(a, SIZE) for a in marked])
        if p.category in ("capture-to-save", "ladder"):
            assert _marked(plain[i]) == p.right_actions, p.name
        if p.category == "net":
            # The net is read only with nets; the ataris that let the chain out are not marked.
            assert not plain[i].any() and marked == p.right_actions, p.name


def test_a_net_with_a_way_out_is_not_a_net(suite):
    problems, _ = suite
    head = next(p for p in problems if p.name == "net-head")
    e4 = grid.from_vertex("E4", SIZE)
    board = head.setup.copy()
    reader = jax.jit(functools.partial(net_moves, size=SIZE))

    def nets(board):
        state = GAME.init_from_board(jnp.asarray(board, jnp.int8), jnp.int8(head.to_play))
        return _marked(reader(state.board, state.chain_id, state.to_play, state.legal[:N]))

    assert nets(board) == {e4}
    # Without black C4, white's extension to D4 has three liberties: E4 no longer catches it.
    board[grid.from_vertex("C4", SIZE)] = 0
    assert e4 not in nets(board)


def test_tactical_evaluator_mixes_the_prior_and_keeps_the_value(suite, read):
    problems, states = suite
    plain, _ = read
    logits = jax.random.normal(jax.random.PRNGKey(0), (len(problems), N + 1))
    value = jnp.linspace(-0.9, 0.9, len(problems))
    base = lambda params, s, key: (logits, value)  # noqa: E731
    weight = 0.3
    out_logits, out_value = jax.jit(tactical_evaluator(base, SIZE, weight, nets=False))(None, states, None)
    chex.assert_trees_all_close(out_value, value)
    probs = np.asarray(jax.nn.softmax(logits, axis=-1))
    count = plain.sum(axis=1, keepdims=True)
    expected = np.where(count > 0, (1 - weight) * probs + weight * plain / np.maximum(count, 1), probs)
    np.testing.assert_allclose(np.asarray(jax.nn.softmax(out_logits, axis=-1)), expected, atol=1e-5)
    assert (count[:, 0] == 0).any() and (count[:, 0] > 0).any()  # both kinds of positions checked
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="weight must be in"):
            tactical_evaluator(base, SIZE, bad)


def test_a_rooted_evaluators_root_reading_gives_every_root_its_prior():
    """The root's prior is the root evaluator's on every move, a reused root too; other nodes
    get the leaf evaluator's."""
    a = N + 1
    favourite, next_favourite = grid.from_vertex("E5", SIZE), grid.from_vertex("D4", SIZE)

    def leaf(params, states, key):
        return jnp.zeros((states.board.shape[0], a)), jnp.zeros(states.board.shape[0])

    def root(params, states, key):  # E5 on the first move, D4 on the second
        point = jnp.where(states.move_count == 0, favourite, next_favourite)
        return 4.0 * jax.nn.one_hot(point, a), jnp.zeros(states.board.shape[0])

    search = TreeSearch(GAME, RootedEvaluator(leaf=leaf, root=root),
                        SearchConfig(num_simulations=8, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=64))
    tree = search.init(jax.tree_util.tree_map(lambda x: x[None], GAME.init()))
    key = jax.random.PRNGKey(0)
    tree = search.simulate(None, search.start(None, tree, key), key, 8)
    prior = np.asarray(tree.prior[0, 0])
    assert prior[favourite] == pytest.approx(np.exp(4.0) / (np.exp(4.0) + N), rel=1e-5)
    # E5's child, reused as the next root: its prior was the leaf's (uniform) until the next
    # move's start reads it as a root.
    child = int(tree.children[0, 0, favourite])
    assert int(tree.visits[0, child]) > 1
    leaf_prior = np.asarray(tree.prior[0, child])
    assert np.ptp(leaf_prior[leaf_prior > 0]) < 1e-6
    tree = search.start(None, search.advance(tree, jnp.asarray([favourite])), key)
    assert int(tree.visits[0, 0]) > 1  # reused, not fresh
    prior = np.asarray(tree.prior[0, 0])
    assert prior[next_favourite] == pytest.approx(np.exp(4.0) / (np.exp(4.0) + N - 1), rel=1e-5)


def test_a_network_player_with_the_tactical_prior_plays_and_says_so(suite):
    problems, _ = suite
    with pytest.raises(ValueError, match="tactics must be in"):
        registry.make_player("net:net=untrained,sims=8,tactics=1")
    player = registry.make_player("net:net=untrained,sims=8,nodes=64,tactics=0.5")
    assert player.name.endswith("-tactics0.5")
    problem = next(p for p in problems if p.name == "cts-edge-cutting-stone")
    tactics.set_up(player, problem)
    legal = player.pos.legal_mask(problem.to_play)
    assert legal[player.genmove(problem.to_play).action]


def test_root_tactics_weighs_the_roots_reading_apart_from_the_tree(suite, read):
    """``root_tactics`` sets the root's share alone (nets read there); the other nodes keep
    ``tactics``'. With 0 the root's prior is the network's own."""
    from alphago_jax.play.search_player import _guided

    problems, states = suite
    plain, with_nets = read
    logits = jax.random.normal(jax.random.PRNGKey(1), (len(problems), N + 1))
    base = lambda params, s, key: (logits, jnp.zeros(len(problems)))  # noqa: E731
    probs = np.asarray(jax.nn.softmax(logits, axis=-1))
    marked = with_nets.any(axis=1)
    for root_weight in (0.0, 0.1):
        guided = _guided(base, 0.0, 0.3, root_weight, GAME)
        leaf = np.asarray(jax.nn.softmax(guided.leaf(None, states, None)[0], axis=-1))
        root = np.asarray(jax.nn.softmax(guided.root(None, states, None)[0], axis=-1))
        mass = lambda p, moves: (p * moves).sum(axis=1)  # noqa: E731
        np.testing.assert_allclose(mass(leaf, plain), np.where(plain.any(axis=1), 0.7 * mass(probs, plain) + 0.3,
                                                               0.0), atol=1e-5)
        expected_root = np.where(marked, (1 - root_weight) * mass(probs, with_nets) + root_weight, 0.0)
        np.testing.assert_allclose(mass(root, with_nets), expected_root, atol=1e-5)
    player = registry.make_player("net:net=untrained,sims=8,nodes=64,tactics=0.3,root_tactics=0.1")
    assert player.name.endswith("-tactics0.3-root0.1")
    with pytest.raises(ValueError, match="root_tactics must be in"):
        registry.make_player("net:net=untrained,sims=8,root_tactics=1")
