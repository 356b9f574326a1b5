"""UCT, RAVE and GRAVE: AMAF statistics against a recount of the recorded playouts, GRAVE with
ref = 0 against RAVE, legality of every choice and a capture in one found; config errors; Go's
eye-keeping and simple-ko playouts.

Few compiled shapes: every search here runs on batches of 2 games, one playout per call of
``iterate`` driven from Python (a handful of compilations in all)."""

from __future__ import annotations

import collections

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards
from amaf_runs import CAPTURE, capture_states, check_the_capture_and_legal_choices, run_playouts, stack
from alphago_jax import games
from alphago_jax.search import amaf, search_for
from alphago_jax.search.grave import GraveConfig, GraveSearch, grave_beta, selection_values


def _recount(tree, traces, g, num_actions, num_codes):
    """Brute force for game ``g``: node visits, edge (n, w) and AMAF (n, w) from the traces."""
    parent, action, depth = (np.asarray(x[g]) for x in (tree.parent, tree.action, tree.depth))
    c = tree.capacity
    visits = np.zeros(c, np.int64)
    edge_n, edge_w = np.zeros((c, num_actions), np.int64), np.zeros((c, num_actions))
    amaf_n, amaf_w = np.zeros((c, num_codes), np.int64), np.zeros((c, num_codes))
    for t in traces:
        bottom, length, score = int(t.bottom[g]), int(t.length[g]), float(t.score[g])
        if bottom < 0:
            continue
        codes, acts = t.codes[g][:length], t.actions[g][:length]
        if depth[bottom] < t.tree_moves[g]:  # the tree was full: an edge without a child node
            a = acts[t.tree_moves[g] - 1]
            edge_n[bottom, a] += 1
            edge_w[bottom, a] += score
        x = bottom
        while x >= 0:
            visits[x] += 1
            for code in set(codes[depth[x]:].tolist()):
                amaf_n[x, code] += 1
                amaf_w[x, code] += score
            if parent[x] >= 0:
                edge_n[parent[x], action[x]] += 1
                edge_w[parent[x], action[x]] += score
            x = parent[x]
    return visits, edge_n, edge_w, amaf_n, amaf_w


# -- GRAVE on 5x5 Go (captures repeat move codes) with a tree too small for its playouts -------

@pytest.fixture(scope="module")
def go_run():
    game = games.make("go", size=5, komi=0.5, max_moves=40)
    search = GraveSearch(game, GraveConfig(algorithm="grave", playouts=40, ref=5, tree_capacity=41))
    states = stack([game.init(), game.step(game.init(), 12)])
    tree, traces = run_playouts(search, states, 60)
    return game, search, states, tree, traces


def test_amaf_counts_equal_a_recount_of_the_recorded_playouts(go_run):
    game, _, _, tree, traces = go_run
    assert int(np.max(np.asarray(tree.num_nodes))) == tree.capacity  # the full-tree case is covered
    repeated = any(len(set(t.codes[g][:t.length[g]].tolist())) < t.length[g] for t in traces for g in range(2))
    assert repeated, "no playout repeated a move code: the once-per-playout rule is not exercised"
    for g in range(2):
        visits, edge_n, edge_w, amaf_n, amaf_w = _recount(tree, traces, g, game.num_actions, game.num_move_codes)
        np.testing.assert_array_equal(np.asarray(tree.visits[g]), visits)
        np.testing.assert_array_equal(np.asarray(tree.edge_n[g]), edge_n)
        np.testing.assert_allclose(np.asarray(tree.edge_w[g]), edge_w)
        np.testing.assert_array_equal(np.asarray(tree.amaf_n[g]), amaf_n)
        np.testing.assert_allclose(np.asarray(tree.amaf_w[g]), amaf_w)
    chex.assert_trees_all_equal(tree.playouts, jnp.full((2,), 60, jnp.int32))


def test_recorded_playouts_are_legal_games_with_their_move_codes(go_run):
    game, _, states, _, traces = go_run
    step, code_of = jax.jit(game.step), jax.jit(game.move_code)
    for t in traces[::15]:
        for g in range(2):
            s = jax.tree_util.tree_map(lambda x: x[g], states)
            for i in range(int(t.length[g])):
                a = int(t.actions[g][i])
                assert bool(game.legal_action_mask(s)[a])
                assert int(code_of(s, a)) == int(t.codes[g][i]) and int(s.to_play) == int(t.players[g][i])
                s = step(s, a)
            assert bool(game.is_terminal(s))
            assert float(t.score[g]) == float(amaf.black_score(game, s))


# -- AtariGo 5x5: the capture in one, and GRAVE with ref = 0 against RAVE ----------------------

@pytest.fixture(scope="module")
def atari():
    game = games.make("atari_go", size=5)
    return game, capture_states(game)


@pytest.fixture(scope="module")
def searched(atari):
    """{algorithm: (config, tree after 200 playouts, search)} for UCT and GRAVE (Cazenave's defaults)."""
    game, states = atari
    runs = {}
    for algorithm in ("uct", "grave"):
        cfg = GraveConfig(algorithm=algorithm, playouts=200)
        search = GraveSearch(game, cfg)
        runs[algorithm] = (cfg, run_playouts(search, states, 200)[0], search)
    return runs


@pytest.mark.parametrize("algorithm", ["uct", "grave"])
def test_search_finds_the_capture_and_never_plays_illegal_moves(atari, searched, algorithm):
    game, states = atari
    _, tree, search = searched[algorithm]
    check_the_capture_and_legal_choices(game, states, search, tree)


@pytest.fixture(scope="module")
def ref0(atari):
    """GRAVE with ref = 0 and RAVE, the same bias, the same keys: (searches, trees, traces)."""
    game, states = atari
    searches = [GraveSearch(game, GraveConfig(algorithm=alg, playouts=48, bias=1e-3, ref=0))
                for alg in ("grave", "rave")]
    runs = [run_playouts(s, states, 48, seed=3) for s in searches]
    return searches, runs


def test_grave_with_ref_zero_is_rave(atari, ref0):
    game, states = atari
    _, ((t_grave, tr_grave), (t_rave, tr_rave)) = ref0
    chex.assert_trees_all_equal(tr_rave, tr_grave)  # the same choices, hence the same playouts
    chex.assert_trees_all_equal(t_rave, t_grave)
    # And a plain GRAVE (ref = 50 > the playouts here: the root is every node's reference) differs.
    plain = GraveSearch(game, GraveConfig(algorithm="grave", playouts=48, bias=1e-3, ref=50))
    t_plain, _ = run_playouts(plain, states, 48, seed=3)
    assert not np.array_equal(np.asarray(t_plain.edge_n), np.asarray(t_rave.edge_n))


def test_time_control_drives_the_search_in_chunks(atari, ref0):
    _, states = atari
    (search, _), _ = ref0
    out, tree, done = search_for(search, None, search.init(states), jax.random.PRNGKey(0), 0.0, chunk=8)
    assert done == 8
    chex.assert_trees_all_equal(tree.playouts, jnp.full((2,), 8, jnp.int32))
    chex.assert_trees_all_close(jnp.sum(out.visit_probs, -1), jnp.ones(2))


def test_grave_values_follow_the_formula(searched):
    cfg, tree, _ = searched["grave"]
    t = jax.tree_util.tree_map(lambda x: x[1], tree)  # the empty board
    node = int(np.argmax(np.asarray(t.visits[1:]))) + 1  # a busy node below the root
    ref = node if int(t.visits[node]) > cfg.ref else 0
    got = np.asarray(selection_values(cfg, t, node, ref, -1))
    codes, legal = np.asarray(t.codes[node]), np.asarray(t.legal[node])
    black = int(t.to_play[node]) > 0
    n, wb = np.asarray(t.edge_n[node], np.float64), np.asarray(t.edge_w[node], np.float64)
    na, wab = np.asarray(t.amaf_n[ref])[codes].astype(np.float64), np.asarray(t.amaf_w[ref])[codes].astype(np.float64)
    w, wa = (wb, wab) if black else (n - wb, na - wab)
    beta = na / np.maximum(na + n + cfg.bias * na * n, 1e-30)
    want = np.where(na > 0, (1 - beta) * w / np.maximum(n, 1) + beta * wa / np.maximum(na, 1),
                    np.where(n > 0, w / np.maximum(n, 1), 1e6))
    np.testing.assert_allclose(got[legal], want[legal], rtol=1e-5)
    assert np.all(np.isneginf(got[~legal]))
    np.testing.assert_allclose(np.asarray(grave_beta(n, na, cfg.bias)), beta, rtol=1e-6)


def test_finished_games_run_no_playouts(atari, ref0):
    game, states = atari
    (search, _), _ = ref0
    done = jax.jit(jax.vmap(game.step))(states, jnp.asarray([CAPTURE[4][0] * 5 + CAPTURE[4][1], 0]))
    assert bool(done.terminal[0])
    tree, traces = run_playouts(search, done, 3)
    assert int(tree.playouts[0]) == 0 and all(t.bottom[0] == -1 for t in traces)
    assert int(tree.playouts[1]) == 3


@pytest.mark.parametrize("field, value", [
    ("algorithm", "puct"), ("playouts", 0), ("ref", -1), ("bias", -1.0), ("c", -0.1),
    ("window", 0), ("rho", 0), ("tree_capacity", 10), ("max_moves", 0),
])
def test_bad_config_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        GraveConfig(**{"playouts": 16, field: value})


def test_go_playouts_do_not_fill_own_eyes():
    game = games.make("go", size=5)
    board = boards.parse("""
        . X . . .
        X X . . .
        . . . O O
        . . . O .
        . . . O O
    """)
    state = game.init_from_board(jnp.asarray(board, jnp.int8), 1)
    mask = np.asarray(amaf.playout_mask(game, state, True))
    legal = np.asarray(game.legal_action_mask(state))
    assert not mask[0] and legal[0]  # black's corner eye is kept
    assert not legal[19]  # white's eye: suicide for black
    assert not mask[25]  # no pass while other moves exist
    counts = collections.Counter(np.flatnonzero(legal & ~mask).tolist())
    assert set(counts) == {0, 25}


def test_simple_ko_playouts_step_superko_states_as_a_simple_ko_game_would():
    """``playout_superko=False``: from any point of a positional-superko game, the simple-ko
    rules step its states exactly as they step their own game's."""
    game = games.make("go", size=5, komi=0.5)
    simple = amaf.simple_ko_rules(game)
    assert simple.superko is False and simple.size == game.size and simple.komi == game.komi
    assert amaf.simple_ko_rules(games.make("nogo", size=5)) == games.make("nogo", size=5)
    assert GraveSearch(game, GraveConfig(playouts=8, playout_superko=False))._playout_game == simple
    step, step_simple = jax.jit(game.step), jax.jit(simple.step)
    rng = np.random.default_rng(3)
    switched, own = game.init(), simple.init()
    moves = captures = 0
    while not bool(own.terminal):
        legal = np.flatnonzero(np.asarray(own.legal))
        a = int(rng.choice(legal[:-1] if len(legal) > 1 else legal))  # pass only when forced
        stones = int(np.sum(np.asarray(own.board) != 0))
        switched = step(switched, a) if moves < 6 else step_simple(switched, a)
        own = step_simple(own, a)
        captures += int(np.sum(np.asarray(own.board) != 0)) < stones + (a < game.num_points)
        moves += 1
        if moves > 6:
            for field in ("board", "chain_id", "atari_lib", "legal", "ko", "passes", "terminal", "hash"):
                np.testing.assert_array_equal(np.asarray(getattr(switched, field)), np.asarray(getattr(own, field)),
                                              err_msg=f"{field} after move {moves}")
    assert moves > 20 and captures > 0, (moves, captures)
