"""The 8 symmetries of the square board (the dihedral group D4) for planes, policies and moves.

Symmetry ``k = 4 * f + r`` in ``[0, 8)`` mirrors left-right if ``f``, then rotates ``r`` quarter
turns counter-clockwise, as ``np.rot90(np.fliplr(a) if f else a, r)`` does to a ``[row, col]``
picture; ``k = 0`` is the identity. ``apply`` maps planes ``[..., S, S, C]``, ``apply_board``
flat per-point arrays ``[..., S*S]``, ``apply_policy`` per-action arrays ``[..., S*S+1]`` and
``apply_action`` int actions (pass stays pass); they agree with each other. ``k`` is a Python
int, a traced int32 scalar, or an int array whose shape is a prefix of the batch shape (one
symmetry per example). Each map is one gather through a precomputed table: jit- and vmap-safe,
no branch per symmetry. ``compose(a, b)`` is "``b`` then ``a``" and ``inverse(k)`` undoes ``k``::

    ks = random_symmetries(key, batch)
    logits = net.apply(params, apply(planes, ks))     # in the rotated frame
    logits = apply_policy(logits, inverse(ks))        # back in the board's frame
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

NUM_SYMMETRIES = 8


def _transform(a: np.ndarray, k: int) -> np.ndarray:
    """Symmetry ``k`` of a numpy ``[S, S, ...]`` array (the definition the tables come from)."""
    if k >= 4:
        a = a[:, ::-1]
    return np.rot90(a, k % 4, axes=(0, 1))


def _group_tables() -> tuple[np.ndarray, np.ndarray]:
    probe = np.arange(9).reshape(3, 3)  # no non-trivial symmetry fixes it
    images = [_transform(probe, k) for k in range(NUM_SYMMETRIES)]

    def index_of(a):
        (hit,) = [k for k, im in enumerate(images) if np.array_equal(a, im)]
        return hit

    compose = np.array(
        [[index_of(_transform(images[b], a)) for b in range(NUM_SYMMETRIES)] for a in range(NUM_SYMMETRIES)],
        np.int32,
    )
    inverse = np.array([int(np.flatnonzero(compose[k] == 0)[0]) for k in range(NUM_SYMMETRIES)], np.int32)
    return compose, inverse


COMPOSE, INVERSE = _group_tables()
"""int32[8, 8] and int32[8]: ``COMPOSE[a, b]`` is ``b`` then ``a``; ``INVERSE[k]`` undoes ``k``."""


@functools.lru_cache(maxsize=None)
def gather_table(size: int) -> np.ndarray:
    """int32[8, S*S]: ``apply_board(x, k)[i] == x[gather_table(S)[k, i]]``."""
    idx = np.arange(size * size).reshape(size, size)
    return np.stack([_transform(idx, k).reshape(-1) for k in range(NUM_SYMMETRIES)]).astype(np.int32)


@functools.lru_cache(maxsize=None)
def _policy_gather_table(size: int) -> np.ndarray:
    """int32[8, S*S+1]: ``gather_table`` with the pass index fixed."""
    n = size * size
    return np.concatenate([gather_table(size), np.full((NUM_SYMMETRIES, 1), n, np.int32)], axis=1)


@functools.lru_cache(maxsize=None)
def action_table(size: int) -> np.ndarray:
    """int32[8, S*S+1]: ``action_table(S)[k, a]`` is the image of action ``a``; pass stays."""
    return np.argsort(_policy_gather_table(size), axis=1).astype(np.int32)


def inverse(k):
    """int32, shape of ``k``: the symmetry that undoes ``k``."""
    return jnp.asarray(INVERSE)[jnp.asarray(k, jnp.int32)]


def compose(a, b):
    """int32, broadcast shape of ``a`` and ``b``: the symmetry "``b`` then ``a``"."""
    return jnp.asarray(COMPOSE)[jnp.asarray(a, jnp.int32), jnp.asarray(b, jnp.int32)]


def random_symmetries(key, shape) -> jnp.ndarray:
    """int32[shape]: independent uniform symmetries (``shape`` an int batch size or a tuple)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return jax.random.randint(key, shape, 0, NUM_SYMMETRIES, dtype=jnp.int32)


def _gather(x: jnp.ndarray, k, table: np.ndarray, event_ndim: int, what: str) -> jnp.ndarray:
    """Gather axis ``-event_ndim`` of ``x`` through ``table[k]``, vmapping over ``k``'s axes."""
    x = jnp.asarray(x)
    k = jnp.asarray(k)
    if not jnp.issubdtype(k.dtype, jnp.integer):
        raise TypeError(f"symmetry index k must be an integer, got dtype {k.dtype}")
    batch_shape = x.shape[: x.ndim - event_ndim]
    if k.shape != batch_shape[: k.ndim]:
        raise ValueError(
            f"{what}: k of shape {k.shape} must be a scalar or a prefix of the batch shape {batch_shape}"
        )
    table = jnp.asarray(table)

    def one(x, k):
        return jnp.take(x, table[k], axis=x.ndim - event_ndim)

    fn = one
    for _ in range(k.ndim):
        fn = jax.vmap(fn)
    return fn(x, k.astype(jnp.int32))


def _side(n: int, what: str, shape) -> int:
    size = math.isqrt(n)
    if size * size != n or size < 1:
        raise ValueError(f"{what}: expected a square number of points on the last axis, got shape {shape}")
    return size


def apply(planes, k) -> jnp.ndarray:
    """Symmetry ``k`` of feature planes ``[..., S, S, C]`` (any dtype; same shape and dtype out)."""
    planes = jnp.asarray(planes)
    if planes.ndim < 3 or planes.shape[-3] != planes.shape[-2]:
        raise ValueError(f"apply: expected planes [..., S, S, C], got shape {planes.shape}")
    size, c = planes.shape[-2], planes.shape[-1]
    flat = planes.reshape(planes.shape[:-3] + (size * size, c))
    out = _gather(flat, k, gather_table(size), 2, "apply")
    return out.reshape(planes.shape)


def apply_board(board, k) -> jnp.ndarray:
    """Symmetry ``k`` of flat per-point arrays ``[..., S*S]`` such as ``state.board`` (same shape and dtype out)."""
    board = jnp.asarray(board)
    size = _side(board.shape[-1], "apply_board", board.shape)
    return _gather(board, k, gather_table(size), 1, "apply_board")


def apply_policy(policy, k) -> jnp.ndarray:
    """Symmetry ``k`` of per-action arrays ``[..., S*S+1]`` (logits, probabilities, masks); pass stays last."""
    policy = jnp.asarray(policy)
    size = _side(policy.shape[-1] - 1, "apply_policy", policy.shape)
    return _gather(policy, k, _policy_gather_table(size), 1, "apply_policy")


def apply_action(action, k, size: int) -> jnp.ndarray:
    """int32, the broadcast shape of ``action`` and ``k``: the image of actions in ``[0, size * size]``
    under symmetry ``k``; pass (``size * size``) stays pass. ``size`` is static."""
    table = jnp.asarray(action_table(size))
    return table[jnp.asarray(k, jnp.int32), jnp.asarray(action, jnp.int32)]


def augment(key, planes, policy=None):
    """``(planes, policy, ks)``: ``planes`` ``[B, S, S, C]`` and the optional ``policy`` ``[B, S*S+1]``
    (else None) under one random symmetry per example, and those symmetries ``int32[B]``."""
    ks = random_symmetries(key, planes.shape[0])
    mapped = apply(planes, ks)
    return mapped, (None if policy is None else apply_policy(policy, ks)), ks


__all__ = [
    "COMPOSE",
    "INVERSE",
    "NUM_SYMMETRIES",
    "action_table",
    "apply",
    "apply_action",
    "apply_board",
    "apply_policy",
    "augment",
    "compose",
    "gather_table",
    "inverse",
    "random_symmetries",
]
