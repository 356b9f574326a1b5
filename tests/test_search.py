"""Searches over the game rules: tactics without a network, invariants, tree reuse, leaf batching,
time control, move choice and evaluators."""

from __future__ import annotations

import collections
import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards
import tactics
from alphago_jax import games
from alphago_jax.games.history import WithHistory
from alphago_jax.features import symmetry
from alphago_jax.nets import DualResNet, RolloutPolicy
from alphago_jax.search import (
    SearchConfig,
    choose_moves,
    make_search,
    mixed_evaluator,
    move_budget,
    network_evaluator,
    policy_rollout_evaluator,
    rollout_evaluator,
    search_for,
)
from alphago_jax.search.time_control import TIME_CHUNK, time_chunk

# Pure MCTS (uniform prior, random playouts) needs about A^2 simulations to see that every move
# but one lets the opponent capture: each move's reply has to be found among A replies.
TACTIC_SIMULATIONS = 2048
TACTIC_C_PUCT = 2.0


def _stack(states):
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def _setup(game, diagram, to_play):
    return game.init_from_board(jnp.asarray(boards.parse(diagram), jnp.int8), to_play)


def _tactic_choices(leaf_batch: int):
    """{position index: (chosen action, visit probabilities)}; positions of a game share one search."""
    groups = collections.defaultdict(list)
    for i, (name, cfg, *_rest) in enumerate(tactics.POSITIONS):
        groups[(name, tuple(sorted(cfg.items())))].append(i)
    config = SearchConfig(num_simulations=TACTIC_SIMULATIONS, c_puct=TACTIC_C_PUCT, temperature=0.0,
                          dirichlet_fraction=0.0, leaf_batch=leaf_batch)
    found = {}
    for (name, cfg), members in groups.items():
        game = games.make(name, **dict(cfg))
        states = _stack([_setup(game, tactics.POSITIONS[i][2], tactics.POSITIONS[i][3]) for i in members])
        out = make_search(game, rollout_evaluator(game), config)(None, states, jax.random.PRNGKey(0))
        for j, i in enumerate(members):
            found[i] = (int(out.actions[j]), np.asarray(out.visit_probs[j]))
    return found


@pytest.fixture(scope="module")
def tactics_single_leaf():
    return _tactic_choices(leaf_batch=1)


def _expected(i):
    _, cfg, _, _, (row, col), _ = tactics.POSITIONS[i]
    return row * cfg["size"] + col


def _print_table(found, leaf_batch):
    """The markdown rows of docs/results.md (shown with ``pytest -s``)."""
    print(f"\n{TACTIC_SIMULATIONS} simulations, c_puct {TACTIC_C_PUCT}, {leaf_batch} leaves per call")
    print("| game | position | to play | move | played | its visit share |")
    for i, (a, probs) in sorted(found.items()):
        name, cfg, _, to_play, (row, col), what = tactics.POSITIONS[i]
        size = cfg["size"]
        print(f"| {name} {size}x{size} | {what} | {'black' if to_play == 1 else 'white'} | ({row}, {col}) | "
              f"({a // size}, {a % size}) | {probs[_expected(i)]:.2f} |")


def test_pure_mcts_finds_the_only_move_in_every_tactical_position(tactics_single_leaf):
    assert len(tactics.POSITIONS) >= 10
    _print_table(tactics_single_leaf, 1)
    missed = [f"{tactics.POSITIONS[i][0]} {tactics.POSITIONS[i][5]}: played {a}, wanted {_expected(i)}"
              for i, (a, _) in tactics_single_leaf.items() if a != _expected(i)]
    assert not missed, "\n".join(missed)


def test_leaf_batching_finds_the_same_moves(tactics_single_leaf):
    batched = _tactic_choices(leaf_batch=8)
    _print_table(batched, 8)
    for i, (a, probs) in batched.items():
        assert a == tactics_single_leaf[i][0] == _expected(i), tactics.POSITIONS[i][5]
        np.testing.assert_allclose(probs.sum(), 1.0, rtol=1e-6)


# -- invariants over random positions, for every game ------------------------------------------

GAMES = {
    "go": dict(size=5, komi=0.5),
    "atari_go": dict(size=5),
    "nogo": dict(size=5),
    "hex": dict(size=5, swap=True),
}


def _random_positions(game, key, batch: int, max_moves: int = 14):
    """A batch of positions after a random number (0..max_moves) of random legal moves each."""

    def play(key):
        k_len, k_moves = jax.random.split(key)
        lengths = jax.random.randint(k_len, (batch,), 0, max_moves + 1)
        states = jax.vmap(lambda _: game.init())(jnp.arange(batch))

        def body(states, xs):
            t, k = xs
            mask = jax.vmap(game.legal_action_mask)(states)
            logits = jnp.where(mask, 0.0, -jnp.inf)
            actions = jax.random.categorical(k, logits).astype(jnp.int32)
            moved = jax.vmap(game.step)(states, actions)
            going = (t < lengths) & ~jax.vmap(game.is_terminal)(states)
            return jax.tree_util.tree_map(
                lambda m, s: jnp.where(going.reshape((-1,) + (1,) * (s.ndim - 1)), m, s), moved, states), None

        states, _ = jax.lax.scan(body, states, (jnp.arange(max_moves), jax.random.split(k_moves, max_moves)))
        return states

    return jax.jit(play)(key)


@pytest.mark.parametrize("name, algorithm, leaf_batch", [
    ("go", "puct", 1), ("go", "puct", 4), ("go", "muzero", 1),
    ("atari_go", "puct", 1), ("nogo", "puct", 1), ("hex", "puct", 1),
])
def test_search_invariants_on_random_positions(name, algorithm, leaf_batch):
    game = games.make(name, **GAMES[name])
    sims, batch = 16, 6
    config = SearchConfig(num_simulations=sims, algorithm=algorithm, leaf_batch=leaf_batch, temperature=1.0)
    search = make_search(game, rollout_evaluator(game, max_moves=60), config)
    a = game.num_actions
    for seed in range(3):
        states = _random_positions(game, jax.random.PRNGKey(seed), batch)
        key = jax.random.PRNGKey(100 + seed)
        out = search(None, states, key)
        chex.assert_shape([out.actions, out.root_value], [(batch,), (batch,)])
        chex.assert_shape([out.visit_probs, out.q_values], [(batch, a), (batch, a)])
        chex.assert_type([out.actions, out.visit_probs], [jnp.int32, jnp.float32])
        chex.assert_trees_all_equal(out, search(None, states, key))  # deterministic for a key
        legal = np.asarray(jax.vmap(game.legal_action_mask)(states))
        live = ~np.asarray(jax.vmap(game.is_terminal)(states))
        rows = np.arange(batch)
        probs, actions = np.asarray(out.visit_probs), np.asarray(out.actions)
        np.testing.assert_allclose(probs[live].sum(-1), 1.0, rtol=1e-6)
        assert np.all(probs[~legal] == 0), "visits on an illegal action"
        assert np.all(legal[rows, actions][live]), "an illegal move was chosen"
        assert np.all(np.abs(np.asarray(out.root_value)) <= 1.0 + 1e-6)
        chex.assert_trees_all_equal(out.next_states, jax.vmap(game.step)(states, out.actions))
        if algorithm == "puct":
            _, tree = search.run(None, search.init(states), key)
            visits = np.asarray(tree.root_visits())
            np.testing.assert_array_equal(visits.sum(-1)[live], sims)
            np.testing.assert_array_equal(np.asarray(tree.visits[:, 0])[live], sims + 1)


def test_temperature_moves_then_the_most_visited():
    game = games.make("go", size=5, komi=0.5)
    states = _random_positions(game, jax.random.PRNGKey(7), 4, max_moves=0)
    config = SearchConfig(num_simulations=16, temperature=1.0, temperature_moves=1)
    search = make_search(game, rollout_evaluator(game, max_moves=40), config)
    after_one = search(None, states, jax.random.PRNGKey(0)).next_states
    assert np.all(np.asarray(after_one.move_count) == 1)
    out = search(None, after_one, jax.random.PRNGKey(1))  # past temperature_moves: the most visited
    np.testing.assert_array_equal(np.asarray(out.actions), np.asarray(out.visit_probs).argmax(-1))


def test_value_weighted_choice():
    visits = jnp.array([[10.0, 9.0, 0.0]])
    q = jnp.array([[-0.5, 0.5, 0.0]])
    legal = jnp.array([[True, True, True]])
    count = jnp.zeros((1,), jnp.int32)
    key = jax.random.PRNGKey(0)
    by_visits = choose_moves(key, visits, q, legal, count, SearchConfig(temperature=0.0))
    by_value = choose_moves(key, visits, q, legal, count, SearchConfig(temperature=0.0, move_choice="value_weighted"))
    assert int(by_visits[0]) == 0 and int(by_value[0]) == 1  # 10 * 0.5 < 9 * 1.5
    draws = jax.vmap(lambda k: choose_moves(k, visits, q, legal, count, SearchConfig(move_choice="value_weighted")))(
        jax.random.split(key, 2000))
    share = float(jnp.mean(draws == 1))
    assert abs(share - 13.5 / 18.5) < 0.04  # drawn in proportion to visits * (1 + Q)


# -- tree reuse ------------------------------------------------------------------------------------


def _subtree_nodes(tree, b, root):
    """Old node indices of ``root``'s subtree, in index order (a plain-Python walk)."""
    children = np.asarray(tree.children[b])
    nodes, stack = [], [root]
    while stack:
        n = stack.pop()
        nodes.append(n)
        stack.extend(int(c) for c in children[n] if c >= 0)
    return sorted(nodes)


@pytest.fixture(scope="module")
def reuse_setup():
    game = games.make("go", size=5, komi=0.5)
    sims = 32
    config = SearchConfig(num_simulations=sims, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=4 * sims)
    search = make_search(game, rollout_evaluator(game, max_moves=60), config)
    states = _random_positions(game, jax.random.PRNGKey(11), 3, max_moves=4)
    out, tree = search.run(None, search.init(states), jax.random.PRNGKey(0))
    return game, search, states, out, tree


def test_reused_subtree_keeps_its_statistics(reuse_setup):
    game, search, states, out, tree = reuse_setup
    moved = search.advance(tree, out.actions)
    chex.assert_trees_all_equal(moved.root_states(), jax.vmap(game.step)(states, out.actions))
    for b in range(3):
        child = int(tree.children[b, 0, int(out.actions[b])])
        old = _subtree_nodes(tree, b, child)
        new_of = {o: i for i, o in enumerate(old)}
        assert int(moved.num_nodes[b]) == len(old)
        for name in ("visits", "value_sum", "raw_value", "prior", "legal", "terminal", "expanded"):
            np.testing.assert_array_equal(np.asarray(getattr(moved, name)[b, :len(old)]),
                                          np.asarray(getattr(tree, name)[b, old]), err_msg=name)
        kids = np.asarray(tree.children[b, old])
        np.testing.assert_array_equal(np.asarray(moved.children[b, :len(old)]),
                                      np.vectorize(lambda c: new_of.get(int(c), -1))(kids))
        parents = [-1] + [new_of[int(p)] for p in np.asarray(tree.parent[b, old[1:]])]
        np.testing.assert_array_equal(np.asarray(moved.parent[b, :len(old)]), parents)
        chex.assert_trees_all_equal(jax.tree_util.tree_map(lambda x: x[b, :len(old)], moved.states),
                                    jax.tree_util.tree_map(lambda x: x[b, np.asarray(old)], tree.states))


def test_search_on_a_reused_tree_holds_more_visits(reuse_setup):
    game, search, states, out, tree = reuse_setup
    moved = search.advance(tree, out.actions)
    carried = np.asarray(moved.visits[:, 0])
    assert np.all(carried > 1)
    out2, tree2 = search.run(None, moved, jax.random.PRNGKey(1))
    _, fresh = search.run(None, search.init(out.next_states), jax.random.PRNGKey(1))
    sims = search.config.num_simulations
    np.testing.assert_array_equal(np.asarray(tree2.visits[:, 0]), carried + sims)
    np.testing.assert_array_equal(np.asarray(fresh.visits[:, 0]), sims + 1)
    np.testing.assert_array_equal(np.asarray(tree2.root_visits()).sum(-1), carried - 1 + sims)
    # The fused step (search, then advance with the chosen move) equals the two calls.
    fused_out, fused_tree = search.step(None, moved, jax.random.PRNGKey(1))
    chex.assert_trees_all_equal(fused_out, out2)
    chex.assert_trees_all_equal(fused_tree, search.advance(tree2, out2.actions))


def test_opponent_move_outside_the_tree_starts_fresh(reuse_setup):
    game, search, states, out, tree = reuse_setup
    visits = np.asarray(tree.root_visits())
    legal = np.asarray(tree.legal[:, 0])
    unvisited = np.array([np.flatnonzero(legal[b] & (visits[b] == 0))[0] for b in range(3)], np.int32)
    moved = search.advance(tree, jnp.asarray(unvisited))
    np.testing.assert_array_equal(np.asarray(moved.num_nodes), 1)
    np.testing.assert_array_equal(np.asarray(moved.visits[:, 0]), 0)
    chex.assert_trees_all_equal(moved.root_states(), jax.vmap(game.step)(states, jnp.asarray(unvisited)))
    out2, tree2 = search.run(None, moved, jax.random.PRNGKey(2))
    np.testing.assert_array_equal(np.asarray(tree2.visits[:, 0]), search.config.num_simulations + 1)


def test_a_large_subtree_is_cut_to_fit_the_next_search(reuse_setup):
    game, _, states, _, _ = reuse_setup
    sims = 32
    search = make_search(game, rollout_evaluator(game, max_moves=60), SearchConfig(
        num_simulations=sims, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=sims + 6))
    out, tree = search.run(None, search.init(states), jax.random.PRNGKey(0))
    for _ in range(3):  # keep playing on the cut trees: they stay trees
        moved = search.advance(tree, out.actions)
        n = np.asarray(moved.num_nodes)
        assert np.all(n <= 6)
        for b in range(3):
            parents = np.asarray(moved.parent[b, 1:n[b]])
            assert np.all((parents >= 0) & (parents < np.arange(1, n[b])))
            kids = np.asarray(moved.children[b, :n[b]])
            assert np.all(kids < n[b])
        out, tree = search.run(None, moved, jax.random.PRNGKey(3))
        np.testing.assert_array_equal(np.asarray(tree.visits[:, 0]), np.asarray(moved.visits[:, 0]) + sims
                                      + (np.asarray(moved.visits[:, 0]) == 0))


# -- time control ----------------------------------------------------------------------------------


def test_move_budget():
    assert move_budget(300.0, empty_points=81 * 3, margin=0.0) == pytest.approx(300.0 / 81)
    assert move_budget(10.0, empty_points=0, margin=0.0) == pytest.approx(1.0)  # at least 10 moves to come
    assert move_budget(30.0, 5, empty_points=300, margin=0.5) == pytest.approx(5.5)  # byo-yomi: 5 stones
    assert move_budget(10.0, empty_points=3, min_moves=1, margin=0.0) == pytest.approx(3.0)  # 30% cap
    assert move_budget(0.0, empty_points=50) == 0.0


def test_search_runs_in_chunks_until_the_budget_or_the_tree_is_spent():
    game = games.make("go", size=5, komi=0.5)
    chunk = 8
    search = make_search(game, rollout_evaluator(game, max_moves=60), SearchConfig(
        num_simulations=chunk, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=64 * chunk))
    states = _random_positions(game, jax.random.PRNGKey(5), 2, max_moves=3)
    ticks = iter(np.arange(0.0, 100.0, 0.5))  # every clock reading advances half a second

    out, tree, sims = search_for(search, None, search.init(states), jax.random.PRNGKey(0), 3.0,
                                 clock=lambda: next(ticks))
    # Readings: start 0; chunk k runs from 0.5 (2k - 1) to k; the third would end past 3 s.
    assert sims == 3 * chunk
    np.testing.assert_array_equal(np.asarray(tree.visits[:, 0]), sims + 1)
    np.testing.assert_allclose(np.asarray(out.visit_probs).sum(-1), 1.0, rtol=1e-6)

    small = make_search(game, rollout_evaluator(game, max_moves=60), SearchConfig(
        num_simulations=chunk, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=2 * chunk + 1))
    out, tree, sims = search_for(small, None, small.init(states), jax.random.PRNGKey(0), 1e9)
    assert 2 * chunk <= sims and np.all(np.asarray(tree.num_nodes) <= 2 * chunk + 1)
    assert np.all(np.asarray(tree.visits[:, 0]) <= sims + 1)


def test_a_timed_search_overruns_by_one_short_chunk_whatever_its_fixed_effort():
    """A player of 64 simulations per move given time for one chunk searches 16, not 64: the
    chunk of a timed search is ``TIME_CHUNK`` (a multiple of ``leaf_batch``, at most the effort)."""
    game = games.make("go", size=5, komi=0.5)
    config = SearchConfig(num_simulations=64, temperature=0.0, dirichlet_fraction=0.0, tree_capacity=129)
    search = make_search(game, rollout_evaluator(game, max_moves=60), config)
    states = _random_positions(game, jax.random.PRNGKey(5), 2, max_moves=3)
    ticks = iter(np.arange(0.0, 100.0, 0.5))  # the first chunk already takes the whole budget
    _, tree, sims = search_for(search, None, search.init(states), jax.random.PRNGKey(0), 0.4,
                               clock=lambda: next(ticks))
    assert sims == TIME_CHUNK == 16
    np.testing.assert_array_equal(np.asarray(tree.visits[:, 0]), sims + 1)
    assert time_chunk(dataclasses.replace(config, leaf_batch=8)) == 16
    assert time_chunk(dataclasses.replace(config, num_simulations=60, leaf_batch=6)) == 12
    assert time_chunk(dataclasses.replace(config, num_simulations=8)) == 8
    assert time_chunk(dataclasses.replace(config, num_simulations=32, leaf_batch=32)) == 32


# -- evaluators ------------------------------------------------------------------------------------


def test_rollout_policy_playouts_find_the_capture():
    name, cfg, diagram, to_play, (row, col), _ = tactics.POSITIONS[0]
    game = games.make(name, **cfg)
    policy = RolloutPolicy(size=cfg["size"])
    evaluator = policy_rollout_evaluator(game, policy, pick=lambda p: p["rollout"])
    config = SearchConfig(num_simulations=512, c_puct=TACTIC_C_PUCT, temperature=0.0, dirichlet_fraction=0.0)
    states = _stack([_setup(game, diagram, to_play)] * 2)
    params = {"rollout": policy.init(jax.random.PRNGKey(0))}  # zero weights: uniform over legal moves
    out = make_search(game, evaluator, config)(params, states, jax.random.PRNGKey(0))
    np.testing.assert_array_equal(np.asarray(out.actions), row * cfg["size"] + col)


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


def test_rollout_evaluator_plays_out_a_history_games_inner_game():
    game = games.make("go", size=5)
    with_history = WithHistory(game, boards=2)
    step = jax.vmap(with_history.step)
    states = jax.vmap(lambda _: with_history.init())(jnp.arange(3))
    for action in ([6, 12, 25], [7, 13, 25], [8, 25, 25]):  # one action per game; the third passes twice
        states = step(states, jnp.asarray(action))
    key = jax.random.PRNGKey(3)
    logits, z = rollout_evaluator(with_history, keep_eyes=True)(None, states, key)
    _, z_inner = rollout_evaluator(game, keep_eyes=True)(None, states.inner, key)
    assert logits.shape == (3, game.num_actions) and not np.any(np.asarray(logits))
    np.testing.assert_array_equal(np.asarray(z), np.asarray(z_inner))
    assert bool(states.terminal[2]) and set(np.asarray(z).tolist()) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_search_with_a_network_evaluator(tiny_net, algorithm):
    apply_fn, variables = tiny_net
    game = games.make("go", size=5)
    evaluator = network_evaluator(apply_fn, _planes, "random")
    config = SearchConfig(num_simulations=8, algorithm=algorithm, gumbel_considered=4, temperature=0.0,
                          leaf_batch=4 if algorithm == "puct" else 1)
    states = jax.vmap(lambda _: game.init())(jnp.arange(2))
    out = make_search(game, evaluator, config)(variables, states, jax.random.PRNGKey(1))
    chex.assert_shape(out.visit_probs, (2, game.num_actions))
    assert np.all(np.asarray(states.legal)[np.arange(2), np.asarray(out.actions)])
    np.testing.assert_allclose(np.asarray(out.visit_probs).sum(-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("bad, match", [
    (dict(algorithm="alphabeta"), "unknown search algorithm"),
    (dict(num_simulations=0), "num_simulations"),
    (dict(temperature=-1.0), "temperature"),
    (dict(move_choice="best"), "move_choice"),
    (dict(num_simulations=10, leaf_batch=4), "leaf_batch"),
    (dict(algorithm="gumbel", num_simulations=8, leaf_batch=4), "leaf_batch"),
    (dict(num_simulations=10, tree_capacity=5), "tree_capacity"),
])
def test_bad_config_is_named(bad, match):
    with pytest.raises(ValueError, match=match):
        SearchConfig(**bad)
