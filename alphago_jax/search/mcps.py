"""Monte Carlo Permutation Search's statistics: a sliding window of playouts stored as bitsets.

MCPS (Cazenave, seed 002) scores an action ``a`` at a node ``s`` reached by the moves
``a_0 ... a_d`` from the root with three statistics and weights proportional to their counts:

- ``n, Q``: playouts that went through ``s`` and then played ``a`` (the edge's own);
- ``n~, Q~``: AMAF, playouts through the GRAVE reference of ``s`` in which ``a`` was played
  later (as in GRAVE);
- ``n^, Q^``: permutations, playouts of a sliding window that contain every move of
  ``{a_0, ..., a_d, a}``, in any order and at any point::

      value = (n Q + n~ Q~ + n^ Q^) / (n + n~ + n^)      (weights n / sum, n~ / sum, n^ / sum)

  which is the minimum-variance convex combination of three independent estimates; there is
  no bias hyperparameter.

The window (``PlayoutWindow``) keeps the last ``W`` playouts as bitsets: for every move code a
row of ``ceil(W / 32)`` uint32 words with bit ``i`` set when the playout in slot ``i`` contains
that code, plus the slots holding a black win, a white win, and a playout at all. The
permutation statistics of a path are then population counts of ANDs::

    P_s = filled & bits[a_0] & ... & bits[a_d]       the playouts containing the whole path
    n^(s, a) = popcount(P_s & bits[a]),  wins = popcount(P_s & bits[a] & won_by_mover)

A node's permutation statistics are computed once, when it has ``rho`` playouts (``freeze``),
for every move code, and stored: from then on the node is the permutation reference of its
subtree (a node's ``n^`` comes from its deepest frozen ancestor-or-self), so the bitset work is
``M x W / 32`` words once per node rather than per selection.

Everything here is unbatched (one game, one window) and vmap-safe; wins are stored from
black's side (a black win 1, a draw 1/2, a loss 0), as are all statistics of the GRAVE family
(``grave``), and turned into the mover's at selection.

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
    """The window with one more playout, in place of the oldest once full.

    Args:
      present: bool[M], the codes the playout contains (path and playout moves).
      black_score: float32[], 1 black won, 0 white won, 1/2 a draw.
      enable: bool[], False leaves the window unchanged (a batch member with nothing to add).
    """
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
    """uint32[K]: the window's playouts containing every code of ``codes[:count]``.

    Args:
      codes: int32[L] move codes (entries at or past ``count`` are ignored); count: int32[].
    """
    rows = window.bits[jnp.clip(codes, 0, window.bits.shape[0] - 1)]  # [L, K]
    used = (jnp.arange(codes.shape[0]) < count)[:, None]
    rows = jnp.where(used, rows, ~jnp.uint32(0))
    return jax.lax.reduce(rows, ~jnp.uint32(0), jax.lax.bitwise_and, (0,)) & window.filled


def _count(words) -> jnp.ndarray:
    return jnp.sum(jax.lax.population_count(words).astype(jnp.int32), axis=-1)


def permutation_counts(window: PlayoutWindow, path, codes) -> tuple[jnp.ndarray, jnp.ndarray]:
    """Permutation statistics of candidate ``codes`` after a path.

    Args:
      path: uint32[K], ``path_bits`` of the path (the playouts containing all its moves).
      codes: int32[...] candidate move codes.

    Returns:
      ``n^`` int32[...], the window's playouts containing the path and the code, and their
      black score float32[...] (black wins plus half the draws).
    """
    both = path & window.bits[codes]  # [..., K]
    n = _count(both)
    black = _count(both & window.black_wins)
    white = _count(both & window.white_wins)
    return n, black.astype(jnp.float32) + 0.5 * (n - black - white).astype(jnp.float32)


def mcps_weights(n, n_amaf, n_perm) -> tuple[jnp.ndarray, jnp.ndarray, jnp.ndarray]:
    """The seed's weights ``(n, n~, n^) / (n + n~ + n^)``, float32 (all 0 where every count is 0)."""
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
    """A node's frozen permutation statistics for every move code.

    Args:
      codes: int32[L], the moves from the root to the node in ``codes[:count]``.

    Returns:
      ``n^`` int32[M] and black score float32[M] of the playouts containing the path and code ``c``.
    """
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
