"""AlphaGo's fast rollout policy (``nets.rollout``): features against plain-Python references,
hand-made tactical positions, masking, sampling and the log-likelihood's gradient.

Random positions come from capture-biased random play on 9x9 (``gamegen.biased_action``), so
that ataris, captures and self-ataris occur often. Everything runs on 5x5 and 9x9.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax.games.go import Go
from alphago_jax.nets import rollout
from alphago_jax.nets.rollout import NUM_PATTERNS, OFFSETS, RolloutPolicy
from boards import JitGame, parse, show
from gamegen import biased_action

SIZE = 9
N = SIZE * SIZE
POLICY = RolloutPolicy(size=SIZE)
POLICY5 = RolloutPolicy(size=5)


@functools.partial(jax.jit, static_argnums=(0, 2, 3))
def _positions(game, key, batch, steps):
    def one(key):
        def body(s, k):
            a = jnp.where(s.terminal, game.num_points, biased_action(k, s, game.num_points, capture_p=0.3))
            s2 = game.step(s, a)
            return s2, s2

        _, states = jax.lax.scan(body, game.init(), jax.random.split(key, steps))
        return states

    states = jax.vmap(one)(jax.random.split(key, batch))
    return jax.tree_util.tree_map(lambda x: x.reshape((batch * steps,) + x.shape[2:]), states)


@functools.lru_cache(maxsize=None)
def positions():
    """About 300 non-terminal 9x9 positions (a stacked GoState) from 6 games of 60 moves."""
    states = _positions(Go(size=SIZE), jax.random.PRNGKey(7), 6, 60)
    keep = np.flatnonzero(~np.asarray(states.terminal))
    return jax.tree_util.tree_map(lambda x: x[keep], states)


batched_features = jax.jit(jax.vmap(POLICY.features))
batched_logits = jax.jit(jax.vmap(POLICY.logits, in_axes=(None, 0)))
features5 = jax.jit(POLICY5.features)


def take(states, i):
    return jax.tree_util.tree_map(lambda x: x[i], states)


# ------------------------------------------------------------------ plain-Python references
def ref_pattern(board, to_play, size, q):
    """The 3x3 pattern index of point q, neighbour by neighbour."""
    r, c = divmod(q, size)
    idx = 0
    for k, (dr, dc) in enumerate(OFFSETS):
        rr, cc = r + dr, c + dc
        if not (0 <= rr < size and 0 <= cc < size):
            code = 3
        else:
            v = int(board[rr * size + cc])
            code = 0 if v == 0 else (1 if v == to_play else 2)
        idx += code * 4 ** k
    return idx


def _nbrs(q, size):
    r, c = divmod(q, size)
    for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
        if 0 <= rr < size and 0 <= cc < size:
            yield rr * size + cc


def _chain(board, q, size):
    colour, seen, todo = board[q], {q}, [q]
    while todo:
        x = todo.pop()
        for y in _nbrs(x, size):
            if board[y] == colour and y not in seen:
                seen.add(y)
                todo.append(y)
    return seen


def _libs(board, chain, size):
    return {y for x in chain for y in _nbrs(x, size) if board[y] == 0}


def ref_flags(board, to_play, size, q):
    """(save_atari, capture, self_atari, exact liberties after the move) for an empty point q."""
    b = [int(v) for v in board]
    extends = any(b[y] == to_play and len(_libs(b, _chain(b, y, size), size)) == 1 for y in _nbrs(q, size))
    b[q] = to_play
    captured = False
    for y in _nbrs(q, size):
        if b[y] == -to_play:
            ch = _chain(b, y, size)
            if not _libs(b, ch, size):
                captured = True
                for x in ch:
                    b[x] = 0
    libs = len(_libs(b, _chain(b, q, size), size))
    return extends and libs >= 2, captured, (not captured) and libs == 1, libs


# ------------------------------------------------------------------------------- tests
def test_shapes_and_dtypes():
    params = POLICY.init(jax.random.PRNGKey(0))
    assert set(params) == set(rollout.PARAM_SHAPES)
    for name, shape in rollout.PARAM_SHAPES.items():
        chex.assert_shape(params[name], shape)
        chex.assert_type(params[name], jnp.float32)
    states = positions()
    b = states.board.shape[0]
    f = batched_features(states)
    chex.assert_shape([f.pattern, f.response, f.neighbour, f.distance], (b, N))
    chex.assert_type([f.pattern, f.response, f.neighbour, f.distance], jnp.int32)
    chex.assert_shape([f.save_atari, f.capture, f.self_atari], (b, N))
    chex.assert_type([f.save_atari, f.capture, f.self_atari, f.legal], bool)
    chex.assert_shape(f.legal, (b, N + 1))
    assert np.all((np.asarray(f.pattern) >= 0) & (np.asarray(f.pattern) < NUM_PATTERNS))
    assert np.all((np.asarray(f.distance) >= 0) & (np.asarray(f.distance) < rollout.NUM_DISTANCE))
    logits = batched_logits(params, states)
    chex.assert_shape(logits, (b, N + 1))
    chex.assert_type(logits, jnp.float32)
    s0 = take(states, 0)
    a = jax.jit(POLICY.sample)(params, s0, jax.random.PRNGKey(1))
    chex.assert_shape(a, ())
    chex.assert_type(a, jnp.int32)
    lp = jax.jit(POLICY.log_prob)(params, s0, a)
    chex.assert_shape(lp, ())
    chex.assert_tree_all_finite(lp)
    with pytest.raises(ValueError, match="size=5"):
        POLICY5.features(s0)


def test_pattern_index_matches_python_encoding():
    states = positions()
    f = batched_features(states)
    boards, to_play = np.asarray(states.board), np.asarray(states.to_play)
    pattern = np.asarray(f.pattern)
    for i in range(0, boards.shape[0], 7):
        want = [ref_pattern(boards[i], int(to_play[i]), SIZE, q) for q in range(N)]
        np.testing.assert_array_equal(pattern[i], want, err_msg=show(boards[i]))


def test_pattern_index_edges_and_corners_by_hand():
    g = JitGame(Go(size=5))
    state = g.setup("""
        . X . . .
        O . . . .
        . . X O .
        . . . . .
        . . . . .
    """, to_play=1)
    f = features5(state)
    pattern = np.asarray(f.pattern)
    # A5, the top-left corner: NW N NE W off board (3); E = B5 own (1); SW off; S = A4 opp (2); SE empty.
    a5 = 3 * (1 + 4 + 16 + 64) + 1 * 4 ** 4 + 3 * 4 ** 5 + 2 * 4 ** 6 + 0
    assert pattern[g.point("A5")] == a5
    # E1, the bottom-right corner: NW = D2 empty, N = E2 empty, W = D1 empty, the rest off board.
    assert pattern[g.point("E1")] == 3 * (4 ** 2 + 4 ** 4 + 4 ** 5 + 4 ** 6 + 4 ** 7)
    # C4 (top edge is two rows up): NW B5 own, N C5 empty, NE D5 empty, W B4 empty, E D4 empty,
    # SW B3 empty, S C3 own, SE D3 opp.
    assert pattern[g.point("C4")] == 1 + 1 * 4 ** 6 + 2 * 4 ** 7
    # From white's side the same point reads own/opp swapped.
    fw = features5(state.replace(to_play=jnp.int8(-1)))
    assert int(fw.pattern[g.point("C4")]) == 2 + 2 * 4 ** 6 + 1 * 4 ** 7
    assert int(fw.pattern[g.point("A5")]) == 3 * (1 + 4 + 16 + 64) + 2 * 4 ** 4 + 3 * 4 ** 5 + 1 * 4 ** 6


def test_colour_symmetry():
    """Swapping the colours and the player to move changes no feature and no logit."""
    states = positions()
    swapped = states.replace(board=-states.board, to_play=-states.to_play)
    # chain_id, atari_lib, legal and last_move do not depend on colours: the swapped state is
    # the state the rules would reach with the colours exchanged.
    f, fs = batched_features(states), batched_features(swapped)
    for a, b in zip(f, fs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    params = POLICY.init(jax.random.PRNGKey(3), scale=1.0)
    np.testing.assert_array_equal(np.asarray(batched_logits(params, states)), np.asarray(batched_logits(params, swapped)))


def test_tactical_flags_match_python_reference():
    """Capture exactly; self-atari and save-atari exactly for moves that capture nothing; for
    capturing moves, save-atari is a lower bound (see the module docstring)."""
    states = positions()
    f = batched_features(states)
    boards, to_play, legal = np.asarray(states.board), np.asarray(states.to_play), np.asarray(states.legal)
    save, cap, sa = np.asarray(f.save_atari), np.asarray(f.capture), np.asarray(f.self_atari)
    counts = np.zeros(3, int)
    for i in range(0, boards.shape[0], 2):
        for q in np.flatnonzero(legal[i, :N]):
            r_save, r_cap, r_sa, _ = ref_flags(boards[i], int(to_play[i]), SIZE, int(q))
            msg = f"point {q}, to play {to_play[i]}\n{show(boards[i])}"
            assert cap[i, q] == r_cap, msg
            assert sa[i, q] == r_sa, msg
            if r_cap:
                assert not save[i, q] or r_save, msg
            else:
                assert save[i, q] == r_save, msg
            counts += [r_save, r_cap, r_sa]
        assert not np.any((save[i] | cap[i] | sa[i]) & ~legal[i, :N])
    assert np.all(counts >= 10), counts  # the positions do exercise every flag


# Hand-made positions, black (X) to move: {vertex: (save_atari, capture, self_atari)}.
TACTICS = [
    ("""
        . . . . .
        . X O X .
        . . X . .
        . . . . .
        . . . . .
     """, {"C5": (False, True, False), "D5": (False, False, False)}),
    # C4 is in atari; C5 gives it two liberties.
    ("""
        . . . . .
        . O X O .
        . . O . .
        . . . . .
        . . . . .
     """, {"C5": (True, False, False)}),
    # B5 is in atari; A5 extends it to one liberty (A4): not saved, self-atari.
    ("""
        . X O . .
        . O . . .
        . . . . .
        . . . . .
        . . . . .
     """, {"A5": (False, False, True), "A4": (False, False, False)}),
    # B4 is surrounded on three sides; A5 would have only B5.
    ("""
        . . . . .
        O . O . .
        . O . . .
        . . . . .
        . . . . .
     """, {"B4": (False, False, True), "C3": (False, False, False), "A5": (False, False, True)}),
    # A5-C5 has two liberties (A4, C4): A4 leaves it only C4; C4 leaves A4, D4 and C3.
    ("""
        X X X O .
        . O . . .
        O . . . .
        . . . . .
        . . . . .
     """, {"A4": (False, False, True), "C4": (False, False, False)}),
]


@pytest.mark.parametrize("diagram,expected", TACTICS)
def test_tactical_flags_on_hand_made_positions(diagram, expected):
    g = JitGame(Go(size=5))
    for colour in (1, -1):  # the same position with the colours swapped, the other side to move
        board = parse(diagram) * colour
        f = features5(g.setup(board.astype(np.int8), to_play=colour))
        for vertex, (save, capture, self_atari) in expected.items():
            q = g.point(vertex)
            got = (bool(f.save_atari[q]), bool(f.capture[q]), bool(f.self_atari[q]))
            assert got == (save, capture, self_atari), f"{vertex}, colour {colour}\n{show(board)}"


def test_last_move_features():
    states = positions()
    f = batched_features(states)
    last = np.asarray(states.last_move)
    pattern, response = np.asarray(f.pattern), np.asarray(f.response)
    neighbour, distance = np.asarray(f.neighbour), np.asarray(f.distance)
    assert np.any(last == N)  # some passes
    # Unbatched jit agrees with the batched features (they once differed on GPU).
    one = jax.jit(POLICY.features)
    for i in range(0, last.shape[0], 25):
        for a, b in zip(one(take(states, i)), take(f, i)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for i in range(0, last.shape[0], 5):
        for q in range(N):
            r, c = divmod(q, SIZE)
            if 0 <= last[i] < N:
                lr, lc = divmod(int(last[i]), SIZE)
                off = (r - lr, c - lc)
                k = OFFSETS.index(off) if off in OFFSETS else -1
                d = min(abs(r - lr) + abs(c - lc), 17)
                want_dist = max(d, 1) - 1
            else:
                k, want_dist = -1, rollout.NO_LAST_MOVE
            assert neighbour[i, q] == k
            assert response[i, q] == (-1 if k < 0 else k * NUM_PATTERNS + pattern[i, q])
            assert distance[i, q] == want_dist


def test_illegal_moves_never_sampled():
    states = positions()
    params = POLICY.init(jax.random.PRNGKey(5), scale=3.0)
    # Make illegal-looking moves attractive too: large weights everywhere.
    params = jax.tree_util.tree_map(lambda x: x * 10.0, params)
    keys = jax.random.split(jax.random.PRNGKey(6), 64)
    sample = jax.jit(jax.vmap(jax.vmap(POLICY.sample, in_axes=(None, None, 0)), in_axes=(None, 0, None)))
    actions = np.asarray(sample(params, states, keys))  # [positions, 64]
    legal = np.asarray(states.legal)
    chosen = np.take_along_axis(legal, actions, axis=1)
    assert chosen.all()
    # With nothing legal (a finished game) the sampler answers pass.
    done = take(states, 0).replace(legal=jnp.zeros(N + 1, bool))
    assert int(jax.jit(POLICY.sample)(params, done, keys[0])) == N


def test_zero_weights_give_uniform_policy():
    states = positions()
    params = POLICY.init(jax.random.PRNGKey(0))
    probs = np.asarray(jax.nn.softmax(batched_logits(params, states), axis=-1))
    legal = np.asarray(states.legal)
    want = legal / legal.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probs, want, atol=1e-6)


def test_sampling_follows_the_softmax():
    g = JitGame(Go(size=5))
    state = g.step(g.setup("""
        . . . . .
        . X O X .
        . . X . .
        . O . . .
        . . . . .
    """, to_play=-1), g.point("D2"))
    params = POLICY5.init(jax.random.PRNGKey(2), scale=1.0)
    probs = np.asarray(jax.nn.softmax(POLICY5.logits(params, state)))
    draws = 40_000
    keys = jax.random.split(jax.random.PRNGKey(9), draws)
    actions = np.asarray(jax.jit(jax.vmap(POLICY5.sample, in_axes=(None, None, 0)))(params, state, keys))
    freq = np.bincount(actions, minlength=26) / draws
    tol = 5 * np.sqrt(probs * (1 - probs) / draws) + 1e-4  # five standard errors
    assert np.all(np.abs(freq - probs) <= tol), (freq, probs)
    assert np.all(freq[~np.asarray(state.legal)] == 0)


def _one_hots(f, legal_actions):
    """Per parameter, float64 [actions, size]: the active entries of each action's features."""
    out = {name: np.zeros((len(legal_actions),) + (int(np.prod(s)) if s else 1,)) for name, s in rollout.PARAM_SHAPES.items()}
    g = {k: np.asarray(v) for k, v in f._asdict().items()}
    for j, a in enumerate(legal_actions):
        if a == N:
            out["pass"][j, 0] = 1
            continue
        out["pattern"][j, g["pattern"][a]] = 1
        if g["response"][a] >= 0:
            out["response"][j, g["response"][a]] = 1
        if g["neighbour"][a] >= 0:
            out["neighbour"][j, g["neighbour"][a]] = 1
        out["distance"][j, g["distance"][a]] = 1
        for name in ("save_atari", "capture", "self_atari"):
            out[name][j, 0] = float(g[name][a])
    return out


def test_log_likelihood_gradient_is_sparse_and_exact():
    """d log p(a) / dw = φ(a) - Σ_b p(b) φ(b): non-zero only on features of legal moves."""
    states = positions()
    params = POLICY.init(jax.random.PRNGKey(4), scale=0.5)
    grad = jax.jit(jax.grad(POLICY.log_prob))
    fs = batched_features(states)
    for i in (3, 60, 150, 250):
        s = take(states, i)
        f = take(fs, i)
        legal_actions = np.flatnonzero(np.asarray(s.legal))
        a = int(legal_actions[len(legal_actions) // 3])
        g = grad(params, s, jnp.int32(a))
        chex.assert_tree_all_finite(g)
        p = np.asarray(jax.nn.softmax(POLICY.logits(params, s)), np.float64)[legal_actions]
        hots = _one_hots(f, legal_actions)
        j = int(np.flatnonzero(legal_actions == a)[0])
        active_any = set()
        for name, shape in rollout.PARAM_SHAPES.items():
            want = hots[name][j] - p @ hots[name]
            got = np.asarray(g[name], np.float64).reshape(-1)
            np.testing.assert_allclose(got, want, atol=2e-5, err_msg=name)
            nz = np.flatnonzero(got)
            active = np.flatnonzero(hots[name].any(axis=0))
            assert set(nz) <= set(active), name  # sparse: only features some legal move uses
            active_any |= {(name, int(x)) for x in nz}
        assert ("pattern", int(f.pattern[a])) in active_any
        assert len(active_any) < 2 * len(legal_actions) * 5  # a few entries per legal move
