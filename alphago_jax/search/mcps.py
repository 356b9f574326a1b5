"""Monte Carlo Permutation Search's statistics: a sliding window of playouts stored as bitsets.

MCPS (Cazenave, "Monte Carlo Permutation Search", arXiv:2510.06381, 2025) scores action ``a``
at node ``s``, reached by ``a_0 ... a_d`` from the root, from three statistics: the edge's own
``n, Q``; AMAF ``n~, Q~`` at the GRAVE reference of ``s``; and permutations ``n^, Q^``, the
window's playouts that contain every move of ``{a_0, ..., a_d, a}`` in any order::

    value = (n Q + n~ Q~ + n^ Q^) / (n + n~ + n^)

the minimum-variance convex combination of independent estimates, with no bias hyperparameter.
``PlayoutWindow`` keeps the last ``W`` playouts as one row of ``ceil(W / 32)`` uint32 words per
move code (bit ``i``: the playout in slot ``i`` contains the code), so the statistics are
popcounts of ANDs::

    P_s = filled & bits[a_0] & ... & bits[a_d]       the playouts containing the whole path
    n^(s, a) = popcount(P_s & bits[a]),  wins = popcount(P_s & bits[a] & won_by_mover)

A node's statistics are computed for every code once, when it has ``rho`` playouts (``freeze``),
and serve its whole subtree. Everything here is unbatched and vmap-safe; wins are black's (win
1, draw 1/2), turned into the mover's at selection.

Layer: pure ``jax``; no game, no tree.
"""

from __future__ import annotations

import flax.struct
import jax
import jax.numpy as jnp

WORD_BITS = 32
UNSEEN = 1e6  # the value of an action no statistic has seen yet (Cazenave's first-play urgency)


@flax.struct.dataclass
class PlayoutWindow:
    """The last ``size`` playouts as bitsets. K = ceil(size / 32) words, M move codes.

    Attributes:
      bits: uint32[M, K], bit ``i`` of row ``c``: the playout in slot ``i`` contains code ``c``.
      black_wins: uint32[K], the slots whose playout black won.
      white_wins: uint32[K], the slots whose playout white won (neither: a draw).
      filled: uint32[K], the slots holding a playout.
      next_slot: int32[], the slot the next playout overwrites (the oldest once full).
      size: static, the window length W.
    """

    bits: jnp.ndarray
    black_wins: jnp.ndarray
    white_wins: jnp.ndarray
    filled: jnp.ndarray
    next_slot: jnp.ndarray
    size: int = flax.struct.field(pytree_node=False, default=1)


def num_words(size: int) -> int:
    """uint32 words of a window of ``size`` slots."""
    return -(-size // WORD_BITS)


def empty_window(num_codes: int, size: int) -> PlayoutWindow:
    """A window of ``size`` slots over ``num_codes`` move codes, holding no playout."""
    if size < 1:
        raise ValueError(f"window size must be at least 1, got {size}")
    k = num_words(size)
    zeros = jnp.zeros((k,), jnp.uint32)
    return PlayoutWindow(bits=jnp.zeros((num_codes, k), jnp.uint32), black_wins=zeros, white_wins=zeros,
                         filled=zeros, next_slot=jnp.int32(0), size=size)


def window_add(window: PlayoutWindow, present, black_score, enable=True) -> PlayoutWindow:
    """The window with one more playout (codes ``present`` bool[M], ``black_score`` float32[] in
    {0, 1/2, 1}) in place of the oldest once full; unchanged where ``enable`` (bool[]) is False."""
    slot = window.next_slot
    word = slot // WORD_BITS
    bit = jnp.left_shift(jnp.uint32(1), (slot % WORD_BITS).astype(jnp.uint32))
    on = jnp.asarray(enable)

    def put(col, flag):  # overwrite the slot's bit of one word (or a column of words)
        return jnp.where(on, (col & ~bit) | jnp.where(flag, bit, jnp.uint32(0)), col)

    bits = window.bits.at[:, word].set(put(window.bits[:, word], present))
    return window.replace(
        bits=bits,
        black_wins=window.black_wins.at[word].set(put(window.black_wins[word], black_score > 0.5)),
        white_wins=window.white_wins.at[word].set(put(window.white_wins[word], black_score < 0.5)),
        filled=window.filled.at[word].set(put(window.filled[word], True)),
        next_slot=jnp.where(on, (slot + 1) % window.size, slot).astype(jnp.int32),
    )


def path_bits(window: PlayoutWindow, codes, count) -> jnp.ndarray:
    """uint32[K]: the window's playouts containing every code of ``codes[:count]`` (int32[L], int32[])."""
    rows = window.bits[jnp.clip(codes, 0, window.bits.shape[0] - 1)]  # [L, K]
    used = (jnp.arange(codes.shape[0]) < count)[:, None]
    rows = jnp.where(used, rows, ~jnp.uint32(0))
    return jax.lax.reduce(rows, ~jnp.uint32(0), jax.lax.bitwise_and, (0,)) & window.filled


def _count(words) -> jnp.ndarray:
    return jnp.sum(jax.lax.population_count(words).astype(jnp.int32), axis=-1)


def permutation_counts(window: PlayoutWindow, path, codes) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(n^ int32[...], black score float32[...])``: the window's playouts containing the path
    (``path_bits``, uint32[K]) and each candidate of ``codes`` (int32[...]), and their black wins
    plus half their draws."""
    both = path & window.bits[codes]  # [..., K]
    n = _count(both)
    black = _count(both & window.black_wins)
    white = _count(both & window.white_wins)
    return n, black.astype(jnp.float32) + 0.5 * (n - black - white).astype(jnp.float32)


def mcps_weights(n, n_amaf, n_perm) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """MCPS's weights ``(n, n~, n^) / (n + n~ + n^)``, float32 (all 0 where every count is 0)."""
    n, n_amaf, n_perm = (jnp.asarray(x, jnp.float32) for x in (n, n_amaf, n_perm))
    total = n + n_amaf + n_perm
    safe = jnp.maximum(total, 1.0)
    return n / safe, n_amaf / safe, n_perm / safe


def mcps_values(n, wins, n_amaf, wins_amaf, n_perm, wins_perm) -> jnp.ndarray:
    """float32[...]: ``beta Q + beta~ Q~ + beta^ Q^`` with ``mcps_weights``; ``UNSEEN`` where no
    statistic has a sample. ``wins*`` are the mover's (win 1, draw 1/2) summed over the samples."""
    beta, beta_amaf, beta_perm = mcps_weights(n, n_amaf, n_perm)

    def rate(w, k):
        return jnp.asarray(w, jnp.float32) / jnp.maximum(jnp.asarray(k, jnp.float32), 1.0)

    value = beta * rate(wins, n) + beta_amaf * rate(wins_amaf, n_amaf) + beta_perm * rate(wins_perm, n_perm)
    return jnp.where(jnp.asarray(n) + jnp.asarray(n_amaf) + jnp.asarray(n_perm) > 0, value, UNSEEN)


def freeze(window: PlayoutWindow, codes, count) -> tuple[jnp.ndarray, jnp.ndarray]:
    """A node's permutation statistics for every code ``c``, ``(n^ int32[M], black score float32[M])``,
    given the moves from the root to it in ``codes[:count]`` (int32[L])."""
    return permutation_counts(window, path_bits(window, codes, count), jnp.arange(window.bits.shape[0]))


__all__ = [
    "PlayoutWindow",
    "UNSEEN",
    "empty_window",
    "freeze",
    "mcps_values",
    "mcps_weights",
    "num_words",
    "path_bits",
    "permutation_counts",
    "window_add",
]
