"""MCPS: the bitset window against a brute-force set-inclusion count, the seed's weights, frozen
statistics (equal to a recount over the window when frozen, unchanged afterwards), and a search
that finds a capture in one with legal choices only.

One MCPS search (AtariGo 5x5, a batch of 2, a window smaller than its playouts so that it
slides) serves every tree test; the window tests run on random data."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from amaf_runs import capture_states, check_the_capture_and_legal_choices, playouts
from alphago_jax import games
from alphago_jax.search import mcps
from alphago_jax.search.grave import GraveConfig, GraveSearch, selection_values

PLAYOUTS, WINDOW, RHO, REF = 200, 48, 8, 20


# -- the window on random data ---------------------------------------------------------------

def _brute_force(history, size, path, code):
    """(n, black score) over the last ``size`` playouts of ``history`` [(code set, score)] that
    contain ``path`` and ``code``."""
    recent = history[-size:]
    hits = [score for codes, score in recent if set(path) <= codes and code in codes]
    return len(hits), float(sum(hits))


@pytest.mark.parametrize("size", [40, 64])
def test_permutation_counts_equal_a_set_inclusion_count(size):
    rng = np.random.default_rng(size)
    m = 12
    add = jax.jit(mcps.window_add)
    counts = jax.jit(lambda w, codes, k: mcps.permutation_counts(w, mcps.path_bits(w, codes, k), jnp.arange(m)))
    window, history = mcps.empty_window(m, size), []
    for step in range(150):
        present = rng.random(m) < 0.4
        score = float(rng.choice([0.0, 0.5, 1.0]))
        window = add(window, jnp.asarray(present), jnp.float32(score))
        history.append((set(np.flatnonzero(present).tolist()), score))
        if step % 7:
            continue
        for k in range(4):  # paths of 0 to 3 codes (a repeated code is harmless)
            path = rng.integers(0, m, size=k)
            n, black = counts(window, jnp.asarray(np.pad(path, (0, 4 - k), constant_values=-1)), k)
            want = [_brute_force(history, size, path.tolist(), c) for c in range(m)]
            np.testing.assert_array_equal(np.asarray(n), [w[0] for w in want])
            np.testing.assert_allclose(np.asarray(black), [w[1] for w in want])
    assert int(window.next_slot) == 150 % size


def test_disabled_add_leaves_the_window_unchanged():
    window = mcps.window_add(mcps.empty_window(5, 40), jnp.ones(5, bool), jnp.float32(1.0))
    chex.assert_trees_all_equal(mcps.window_add(window, jnp.ones(5, bool), jnp.float32(0.0), False), window)


def test_weights_follow_the_seed_formula():
    rng = np.random.default_rng(0)
    n, na, nh = (rng.integers(0, 50, size=200) for _ in range(3))
    n[:5] = na[:5] = nh[:5] = 0
    beta, beta_a, beta_h = (np.asarray(x) for x in mcps.mcps_weights(n, na, nh))
    total = (n + na + nh).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        for got, k in ((beta, n), (beta_a, na), (beta_h, nh)):
            np.testing.assert_allclose(got[5:], (k / total)[5:], rtol=1e-6)
    np.testing.assert_allclose(beta[5:] + beta_a[5:] + beta_h[5:], 1.0, rtol=1e-6)
    assert np.all(beta[:5] == 0) and np.all(beta_a[:5] == 0) and np.all(beta_h[:5] == 0)
    w, wa, wh = (rng.random(200) * k for k in (n, na, nh))
    values = np.asarray(mcps.mcps_values(n, w, na, wa, nh, wh))
    with np.errstate(invalid="ignore", divide="ignore"):
        want = (w + wa + wh) / total  # weights proportional to counts: the pooled mean
    np.testing.assert_allclose(values[5:], want[5:], rtol=1e-5)
    assert np.all(values[:5] == mcps.UNSEEN)


# -- one MCPS search ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def run():
    game = games.make("atari_go", size=5)
    cfg = GraveConfig(algorithm="mcps", playouts=PLAYOUTS, window=WINDOW, rho=RHO, ref=REF)
    search = GraveSearch(game, cfg)
    states = capture_states(game)
    traces, snapshots = [], []  # snapshots: (playout index, game, node, visits, perm_n, perm_w) when frozen
    before = np.zeros((2, cfg.capacity), bool)
    for i, tree, trace in playouts(search, states, PLAYOUTS):
        traces.append(trace)
        frozen = np.asarray(tree.frozen)
        for g, x in zip(*np.nonzero(frozen & ~before)):
            snapshots.append((i, g, x, int(tree.visits[g, x]), np.asarray(tree.perm_n[g, x]),
                              np.asarray(tree.perm_w[g, x])))
        before = frozen
    return game, cfg, search, states, tree, traces, snapshots


def _path_codes(tree, g, x):
    codes = []
    while int(tree.parent[g, x]) >= 0:
        p = int(tree.parent[g, x])
        codes.append(int(tree.codes[g, p, tree.action[g, x]]))
        x = p
    return codes[::-1]


def test_frozen_statistics_equal_a_recount_over_the_window(run):
    game, _, _, _, tree, traces, snapshots = run
    assert len(snapshots) >= 10 and {g for _, g, *_ in snapshots} == {0, 1}
    assert max(i for i, *_ in snapshots) >= WINDOW  # some were frozen after the window slid
    for i, g, x, visits, perm_n, perm_w in snapshots:
        assert visits >= RHO
        history = [(set(t.codes[g][:t.length[g]].tolist()), float(t.score[g]))
                   for t in traces[:i + 1] if t.bottom[g] >= 0]
        path = _path_codes(tree, g, x)
        want = [_brute_force(history, WINDOW, path, c) for c in range(game.num_move_codes)]
        np.testing.assert_array_equal(perm_n, [w[0] for w in want])
        np.testing.assert_allclose(perm_w, [w[1] for w in want])


def test_frozen_statistics_do_not_change_afterwards(run):
    _, _, _, _, tree, _, snapshots = run
    for _, g, x, _, perm_n, perm_w in snapshots:
        np.testing.assert_array_equal(np.asarray(tree.perm_n[g, x]), perm_n)
        np.testing.assert_array_equal(np.asarray(tree.perm_w[g, x]), perm_w)
    frozen = np.asarray(tree.frozen)
    assert frozen[:, 0].all()
    assert frozen.sum() == len(snapshots)


def test_selection_combines_the_three_statistics_with_the_seed_weights(run):
    _, cfg, _, _, tree, _, _ = run
    t = jax.tree_util.tree_map(lambda a: a[1], tree)  # the empty board
    checked = 0
    for node in range(int(t.num_nodes)):
        if not (int(t.visits[node]) > 0 and not bool(t.terminal[node]) and 0 < int(t.depth[node]) <= 2):
            continue
        path = [node]
        while int(t.parent[path[-1]]) >= 0:
            path.append(int(t.parent[path[-1]]))
        path = path[::-1]  # root first
        ref = max([x for x in path if int(t.visits[x]) > cfg.ref], key=lambda x: int(t.depth[x]), default=0)
        frozen = [x for x in path if bool(t.frozen[x])]
        perm_ref = frozen[-1] if frozen else -1
        got = np.asarray(selection_values(cfg, t, node, ref, perm_ref))
        codes, legal = np.asarray(t.codes[node]), np.asarray(t.legal[node])
        black = int(t.to_play[node]) > 0

        def mine(k, wb):
            k, wb = np.asarray(k, np.float64), np.asarray(wb, np.float64)
            return wb if black else k - wb

        n = np.asarray(t.edge_n[node])
        na = np.asarray(t.amaf_n[ref])[codes]
        nh = np.asarray(t.perm_n[perm_ref])[codes] if perm_ref >= 0 else np.zeros_like(n)
        w, wa = mine(n, t.edge_w[node]), mine(na, np.asarray(t.amaf_w[ref])[codes])
        wh = mine(nh, np.asarray(t.perm_w[perm_ref])[codes]) if perm_ref >= 0 else np.zeros(n.shape)
        total = (n + na + nh).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            want = np.where(total > 0, (n / total) * (w / np.maximum(n, 1)) + (na / total) * (wa / np.maximum(na, 1))
                            + (nh / total) * (wh / np.maximum(nh, 1)), mcps.UNSEEN)
        np.testing.assert_allclose(got[legal], want[legal], rtol=1e-5)
        checked += perm_ref >= 0 and perm_ref != node
    assert checked > 0  # some node took its permutation statistics from a frozen ancestor


def test_mcps_finds_the_capture_and_plays_legal_moves(run):
    game, _, search, states, tree, _, _ = run
    check_the_capture_and_legal_choices(game, states, search, tree)


def test_window_keeps_min_of_w_and_the_tree_capacity(run):
    _, _, search, _, tree, _, _ = run
    assert tree.window.size == WINDOW and tree.window.bits.shape[-1] == mcps.num_words(WINDOW)
    big = GraveSearch(games.make("atari_go", size=5), GraveConfig(algorithm="mcps", playouts=16))
    assert big._window == 17  # 10,000 slots would never fill in a search of 16 playouts
