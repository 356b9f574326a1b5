"""The 8 board symmetries: group tables, inverses, agreement between maps, and Go's rules commuting.

Symmetry ``k = 4 * f + r`` is "mirror left-right if f, then rotate r quarter turns counter-
clockwise" (``np.rot90``), checked here against numpy directly.
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gamegen
from alphago_jax import games
from alphago_jax.features import symmetry as sym

K = np.arange(sym.NUM_SYMMETRIES)


def numpy_transform(a: np.ndarray, k: int) -> np.ndarray:
    """Reference: symmetry ``k`` of a ``[S, S, ...]`` numpy array, written out per case."""
    if k >= 4:
        a = np.fliplr(a)
    return np.rot90(a, k % 4)


# --- the group -------------------------------------------------------------------------------


def test_group_tables_form_d4():
    c, inv = sym.COMPOSE, sym.INVERSE
    chex.assert_shape(c, (8, 8))
    chex.assert_shape(inv, (8,))
    assert (c[0] == K).all() and (c[:, 0] == K).all(), "0 is the identity"
    for row in c:
        assert sorted(row) == list(K), "every row of a group table is a permutation"
    for a in K:
        assert c[a, inv[a]] == 0 and c[inv[a], a] == 0
        for b in K:
            for d in K:
                assert c[a, c[b, d]] == c[c[a, b], d], "associativity"
    assert [k for k in K if inv[k] == k] == [0, 2, 4, 5, 6, 7], "identity, half turn, 4 mirrors"
    assert not np.array_equal(c, c.T), "D4 is not abelian"
    np.testing.assert_array_equal(np.asarray(sym.inverse(jnp.arange(8))), inv)
    np.testing.assert_array_equal(np.asarray(sym.compose(K[:, None], K[None, :])), c)


def test_definition_matches_numpy_and_compose_table():
    size = 4  # even size: no centre point to hide mistakes
    x = np.arange(size * size * 2).reshape(size, size, 2)
    images = {k: np.asarray(sym.apply(x, k)) for k in K}
    for k in K:
        np.testing.assert_array_equal(images[k], numpy_transform(x, k), err_msg=f"k={k}")
        for b in K:
            twice = np.asarray(sym.apply(images[b], k))
            np.testing.assert_array_equal(twice, images[int(sym.COMPOSE[k, b])])
    # Concretely: rotation 1 takes the top-right corner to the top-left; mirror 4 swaps columns.
    top_right = size - 1
    assert int(sym.apply_action(top_right, 1, size)) == 0
    assert int(sym.apply_action(0, 4, size)) == size - 1


# --- inverses and agreement between the maps -------------------------------------------------


@pytest.fixture(scope="module")
def jitted():
    """The maps jitted with k traced (one compile per shape)."""
    return {
        "apply": jax.jit(sym.apply),
        "apply_policy": jax.jit(sym.apply_policy),
        "apply_board": jax.jit(sym.apply_board),
        "apply_action": jax.jit(sym.apply_action, static_argnums=2),
    }


@pytest.mark.parametrize("size", [5, 7])
def test_map_then_inverse_is_identity(jitted, size):
    rng = np.random.default_rng(size)
    n = size * size
    b = 8
    planes = jnp.asarray(rng.normal(size=(b, size, size, 3)).astype(np.float32))
    policy = jnp.asarray(rng.normal(size=(b, n + 1)).astype(np.float32))
    board = jnp.asarray(rng.integers(-1, 2, size=(b, n)).astype(np.int8))
    actions = jnp.arange(n + 1)
    ks = jnp.arange(8, dtype=jnp.int32)  # one symmetry per example
    inv = sym.inverse(ks)

    out = jitted["apply"](jitted["apply"](planes, ks), inv)
    chex.assert_trees_all_equal(out, planes)
    chex.assert_type(out, jnp.float32)
    out = jitted["apply_policy"](jitted["apply_policy"](policy, ks), inv)
    chex.assert_trees_all_equal(out, policy)
    out = jitted["apply_board"](jitted["apply_board"](board, ks), inv)
    chex.assert_trees_all_equal(out, board)
    chex.assert_type(out, jnp.int8)

    mapped = jitted["apply_action"](actions[None, :], ks[:, None], size)
    chex.assert_shape(mapped, (8, n + 1))
    chex.assert_type(mapped, jnp.int32)
    back = jitted["apply_action"](mapped, inv[:, None], size)
    chex.assert_trees_all_equal(back, jnp.broadcast_to(actions, (8, n + 1)).astype(jnp.int32))
    np.testing.assert_array_equal(np.asarray(mapped[:, n]), n, err_msg="pass stays put")
    for k in range(8):
        assert sorted(np.asarray(mapped[k])) == list(range(n + 1)), "a permutation of the actions"

    # A scalar (traced) k maps the whole batch the same way.
    for k in (1, 6):
        kk = jnp.int32(k)
        chex.assert_trees_all_equal(
            jitted["apply"](planes, kk), jitted["apply"](planes, jnp.full((b,), k, jnp.int32))
        )


@pytest.mark.parametrize("size", [5, 7])
def test_maps_agree(jitted, size):
    n = size * size
    points = jnp.arange(n)
    onehot_planes = jax.nn.one_hot(points, n).reshape(n, size, size, 1)  # [N, S, S, 1]
    onehot_policy = jax.nn.one_hot(jnp.arange(n + 1), n + 1)  # [N+1, N+1]
    for k in range(8):
        kk = jnp.int32(k)
        img = np.asarray(jitted["apply_action"](jnp.arange(n + 1), kk, size))
        mapped = np.asarray(jitted["apply"](onehot_planes, kk)).reshape(n, n)
        np.testing.assert_array_equal(mapped.argmax(-1), img[:n], err_msg=f"planes vs actions, k={k}")
        np.testing.assert_array_equal(mapped.sum(-1), 1.0)
        mapped = np.asarray(jitted["apply_policy"](onehot_policy, kk))
        np.testing.assert_array_equal(mapped.argmax(-1), img, err_msg=f"policy vs actions, k={k}")
        flat = np.asarray(jitted["apply_board"](onehot_planes[..., 0].reshape(n, n), kk))
        np.testing.assert_array_equal(flat, mapped[:n, :n], err_msg=f"board vs policy, k={k}")


def test_vmap_and_argument_errors():
    x = jnp.arange(2 * 3 * 3 * 1, dtype=jnp.float32).reshape(2, 3, 3, 1)
    ks = jnp.array([3, 5], jnp.int32)
    by_vmap = jax.vmap(sym.apply)(x, ks)
    chex.assert_trees_all_equal(by_vmap, sym.apply(x, ks))
    for i in range(2):
        np.testing.assert_array_equal(np.asarray(by_vmap[i]), numpy_transform(np.asarray(x[i]), int(ks[i])))
    with pytest.raises(ValueError, match="prefix"):
        sym.apply(x, jnp.zeros(3, jnp.int32))
    with pytest.raises(ValueError, match="S, S"):
        sym.apply(jnp.zeros((3, 4, 1)), 0)
    with pytest.raises(ValueError, match="square"):
        sym.apply_policy(jnp.zeros(11), 0)
    with pytest.raises(TypeError, match="integer"):
        sym.apply(x, 1.0)


def test_random_symmetries_and_augment():
    ks = sym.random_symmetries(jax.random.PRNGKey(0), 512)
    chex.assert_shape(ks, (512,))
    chex.assert_type(ks, jnp.int32)
    assert set(np.asarray(ks).tolist()) == set(range(8))
    chex.assert_shape(sym.random_symmetries(jax.random.PRNGKey(1), (2, 3)), (2, 3))

    size, b = 5, 16
    n = size * size
    targets = jax.random.randint(jax.random.PRNGKey(2), (b,), 0, n + 1)
    policy = jax.nn.one_hot(targets, n + 1)
    planes = policy[:, :n].reshape(b, size, size, 1)  # the target point marked on a plane
    mplanes, mpolicy, ks = jax.jit(sym.augment)(jax.random.PRNGKey(3), planes, policy)
    chex.assert_shape([mplanes, mpolicy, ks], [(b, size, size, 1), (b, n + 1), (b,)])
    chex.assert_type([mplanes, mpolicy, ks], [jnp.float32, jnp.float32, jnp.int32])
    chex.assert_trees_all_equal(mplanes.reshape(b, n), mpolicy[:, :n])
    chex.assert_trees_all_equal(jnp.argmax(mpolicy, -1), sym.apply_action(targets, ks, size))
    _, none, _ = sym.augment(jax.random.PRNGKey(3), planes)
    assert none is None


# --- Go's rules commute with the symmetries --------------------------------------------------


@functools.partial(jax.jit, static_argnums=(0, 2, 3))
def _play_mirrored(game, key, batch: int, steps: int):
    """Random games (capture-biased), each played under all 8 symmetries in lockstep.

    Symmetry 0 is the identity, so copy 0 of each game is the game itself: it picks the moves,
    and copy ``k`` plays their images under ``k``.

    Returns boards ``[T, G, 8, N]`` and legal masks ``[T, G, 8, N+1]`` after every move.
    """
    n, size = game.num_points, game.size
    ks = jnp.arange(8, dtype=jnp.int32)

    def one(key):
        def body(states, key):
            base = jax.tree_util.tree_map(lambda x: x[0], states)
            a = jnp.where(base.terminal, n, gamegen.biased_action(key, base, n))
            states = jax.vmap(game.step)(states, sym.apply_action(a, ks, size))
            return states, (states.board, states.legal)

        states = jax.vmap(lambda _: game.init())(ks)
        _, out = jax.lax.scan(body, states, jax.random.split(key, steps))
        return out

    out = jax.vmap(one)(jax.random.split(key, batch))  # [G, T, ...]
    return jax.tree_util.tree_map(lambda x: jnp.swapaxes(x, 0, 1), out)


@pytest.mark.parametrize("size,superko,batch", [(5, True, 16), (7, True, 8), (5, False, 8)])
def test_rules_commute_with_symmetries(size, superko, batch):
    game = games.make("go", size=size, superko=superko)
    n = size * size
    steps = game.max_moves
    mboards, mlegal = _play_mirrored(game, jax.random.PRNGKey(size), batch, steps)
    chex.assert_shape([mboards, mlegal], [(steps, batch, 8, n), (steps, batch, 8, n + 1)])
    chex.assert_type([mboards, mlegal], [jnp.int8, jnp.bool_])
    boards, legal = mboards[:, :, 0], mlegal[:, :, 0]
    ks = jnp.arange(8, dtype=jnp.int32)
    # Expected: every position of the game itself mapped by every symmetry, [T, G, 8, ...].
    want_boards = jax.vmap(lambda k: sym.apply_board(boards, k), out_axes=2)(ks)
    want_legal = jax.vmap(lambda k: sym.apply_policy(legal, k), out_axes=2)(ks)
    chex.assert_trees_all_equal(mboards, want_boards)
    chex.assert_trees_all_equal(mlegal, want_legal)
    # The games are not trivial: they capture, and some moves are not legal.
    b = np.asarray(boards)
    stones = np.abs(b).sum(-1)
    assert (np.diff(stones, axis=0) < 0).any(), "some move captured"
    assert (~np.asarray(legal)[:, :, :n] & (b == 0)).any(), "some empty point was illegal"
