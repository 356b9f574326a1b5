"""Go's positional superko history: a Bloom filter of past positions and exact look-ups in the
history of hashes (uint32[H, 2], 64-bit additive Zobrist hashes as two words; the filter indexes
word 1).

``Go._superko_repeats`` passes ``confirm_repeats`` only the Bloom filter's hits and the history
rows that are the position plus one own stone; its loop runs once per candidate of the busiest
game in a batch, rarely more than once. Dense alternatives were slower (docs/benchmarks.md,
"Accelerator check").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np


def bloom_bits(bloom, h1):
    """Two (word index, bit mask) pairs for hash word(s) ``h1`` (uint32) in a table uint32[W]: the
    top bits of ``h1`` and of ``h1`` times an odd constant."""
    shift = 32 - (_log2(bloom.shape[0]) + 5)
    out = []
    for mult in (1, 0x9E3779B1):
        idx = (h1 * np.uint32(mult)) >> shift
        out.append((idx >> 5, jnp.left_shift(jnp.uint32(1), idx & 31)))
    return out


def bloom_contains(bloom, h1):
    """bool[...]: whether hashes (word 1, uint32[...]) may be in the table; no false negatives."""
    (w0, b0), (w1, b1) = bloom_bits(bloom, h1)
    return ((bloom[w0] & b0) != 0) & ((bloom[w1] & b1) != 0)


def bloom_insert(bloom, h1):
    """The table with hash word 1 ``h1`` (uint32[]) added."""
    words = jnp.arange(bloom.shape[0])
    for w, bit in bloom_bits(bloom, h1):
        bloom = jnp.where(words == w, bloom | bit, bloom)
    return bloom


def _log2(x: int) -> int:
    return int(x).bit_length() - 1


def confirm_repeats(history, valid, full_hash, maybe, plain, plain_points):
    """Exact history look-ups for the few candidates the pre-filters left, one per iteration.

    Args:
      history: uint32[H, 2]; valid: bool[H], rows in use.
      full_hash: point -> uint32[2], the hash the move there would produce.
      maybe: bool[N], candidates that may repeat (Bloom filter hits).
      plain: bool[H], history rows equal to this position plus one own stone.
      plain_points: int32[H], the point of that stone.

    Returns:
      (bool[N] candidates whose hash is in the history, bool[N] points of plain matches).
    """
    n = maybe.shape[0]
    points = jnp.arange(n)

    def body(carry):
        left, rows, found, found_plain = carry
        q = jnp.argmax(left)
        h = full_hash(q)
        hit = jnp.any(valid & (history[:, 0] == h[0]) & (history[:, 1] == h[1]))
        this = (points == q) & left[q]
        i = jnp.argmax(rows)
        that = (points == plain_points[i]) & rows[i]
        rows = rows & (jnp.arange(rows.shape[0]) != i)
        return left & ~this, rows, found | (this & hit), found_plain | that

    def more(carry):
        return jnp.any(carry[0]) | jnp.any(carry[1])

    none = jnp.zeros(n, bool)
    _, _, found, found_plain = jax.lax.while_loop(more, body, (maybe, plain, none, none))
    return found, found_plain
