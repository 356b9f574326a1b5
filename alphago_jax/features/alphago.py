"""AlphaGo's 48 input planes (49 for the value network), Extended Data Table 2 of Silver et al. 2016.

=====================  ======  ==============================================================
feature                planes  on each point (p is the player to move)
=====================  ======  ==============================================================
stone colour           3       p's stone / the opponent's stone / empty
ones                   1       constant 1
turns since            8       a stone placed 1, 2, ..., 7, 8+ moves ago (one-hot)
liberties              8       a stone whose chain has 1, 2, ..., 7, 8+ liberties (one-hot)
capture size           8       a legal move that would capture 0, 1, ..., 6, 7+ stones
self-atari size        8       a legal move leaving its own chain of 1, ..., 7, 8+ stones in atari
liberties after move   8       a legal move whose chain would have 1, ..., 7, 8+ liberties
ladder capture         1       a legal move that ataris an enemy chain which then dies in a ladder
ladder escape          1       a legal move extending p's chain out of atari that escapes
sensibleness           1       a legal move that does not fill one of p's own eyes
zeros                  1       constant 0
player colour          1       (value network only) 1 if p is black
=====================  ======  ==============================================================

Liberties are real (distinct empty points next to the chain). A stone's age is
``move_count - placed_at + 1`` (setup stones: placed at move 0), so the state must be a
``games.history.WithHistory`` one. The what-if planes are computed for every legal point at
once: the move captures the opponent's chains whose only liberty is the point, and its chain
(the stone and the own chains next to it) has the empty and just-captured points next to it as
liberties. An own eye is an empty point whose four neighbours are p's stones or the edge, with
at most one "fault" among its diagonals (an opponent stone; a point on the edge starts with
one). Ladders: ``ladder_planes``.

The what-if planes use dense ``[N, N]`` incidence arrays (O(N^2), no loop); the ladder reader
loops only over the few candidates, yet dominates the cost (docs/benchmarks.md, "Input
features").
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games import grid

NUM_PLANES = 48
NUM_PLANES_VALUE = 49
_EDGE = 2  # board value of off-board neighbours

# First plane of each feature in the output (its width is the next start minus it).
PLANES = {
    "stone_colour": 0, "ones": 3, "turns_since": 4, "liberties": 12, "capture_size": 20,
    "self_atari_size": 28, "liberties_after": 36, "ladder_capture": 44, "ladder_escape": 45,
    "sensibleness": 46, "zeros": 47, "player_colour": 48,
}


def _counted(name: str, first: int) -> list[str]:
    return [f"{name} {first + i}" for i in range(7)] + [f"{name} {first + 7}+"]


# One short name per plane, in plane order (49: the value network's extra plane last).
PLANE_NAMES = (
    "player's stone", "opponent's stone", "empty", "ones",
    *_counted("turns since", 1), *_counted("liberties", 1), *_counted("captures", 0),
    *_counted("self-atari size", 1), *_counted("liberties after", 1),
    "ladder capture", "ladder escape", "sensible", "zeros", "black to play",
)


def _one_hot(value, active, depth, first):
    """float32[N, depth]: one-hot of ``clip(value, first, first + depth - 1) - first`` where ``active``."""
    idx = jnp.clip(value, first, first + depth - 1) - first
    return (jax.nn.one_hot(idx, depth, dtype=jnp.float32) * active[:, None]).astype(jnp.float32)


def chain_stats(board, chain_id, size: int):
    """``(sizes, libs)``, int32[N + 1] each, indexed by chain id (index N unused): chain sizes and
    real liberty counts of a ``GoState``'s ``board`` (int8[N]) and ``chain_id`` (int16[N])."""
    n = size * size
    cid = chain_id.astype(jnp.int32)
    stone = board != 0
    sizes = jax.ops.segment_sum(stone.astype(jnp.int32), jnp.where(stone, cid, n), num_segments=n + 1)
    nb = grid.neighbours(cid, size, -1)
    empty = board == 0
    segs = []
    for d in range(4):
        ok = empty & (nb[d] >= 0)
        for j in range(d):
            ok = ok & (nb[d] != nb[j])
        segs.append(jnp.where(ok, nb[d], n))
    libs = jax.ops.segment_sum(jnp.ones(4 * n, jnp.int32), jnp.concatenate(segs), num_segments=n + 1)
    return sizes, libs


def stone_liberties(board, chain_id, size: int):
    """int32[N]: the liberties of each stone's chain (``chain_stats``), 0 on empty points."""
    _, libs = chain_stats(board, chain_id, size)
    return jnp.where(board != 0, libs[chain_id.astype(jnp.int32)], 0)


@functools.lru_cache(maxsize=None)
def _adjacency(size: int) -> np.ndarray:
    """bool[N, N]: orthogonal adjacency of points."""
    n = size * size
    a = np.zeros((n, n), bool)
    t = grid.neighbour_table(size)
    for d in range(4):
        ok = t[:, d] >= 0
        a[np.arange(n)[ok], t[ok, d]] = True
    return a


def what_if(board, chain_id, atari_lib, to_play, size: int):
    """``(captured, libs_after, new_size)``, int32[N] each: for a stone of ``to_play`` on each
    (empty) point, the stones it captures, its chain's liberties after that, and the chain's size.

    Takes a ``GoState``'s ``board`` int8[N], ``chain_id`` and ``atari_lib`` int16[N], ``to_play``
    int8[]; dense ``[N, N]`` incidence arrays (candidate point x board point).
    """
    n = size * size
    p = to_play.astype(jnp.int32)
    b = board.astype(jnp.int32)
    cid = chain_id.astype(jnp.int32)
    lib = atari_lib.astype(jnp.int32)
    sizes, _ = chain_stats(board, chain_id, size)
    points = jnp.arange(n)
    nb_cid = grid.neighbours(cid, size, -1)
    nb_b = grid.neighbours(b, size, _EDGE)

    # touches[c, e]: chain c has a stone next to point e.
    touches = grid.any_of(nb[None, :] == points[:, None] for nb in nb_cid)
    # joined[q, e]: e is next to one of p's chains next to q (the chains a stone at q joins).
    joined = jnp.zeros((n, n), bool)
    new_size = jnp.ones(n, jnp.int32)
    for d in range(4):
        friend = nb_b[d] == p
        joined = joined | (friend[:, None] & touches[jnp.maximum(nb_cid[d], 0)])
        distinct = friend
        for j in range(d):
            distinct = distinct & (nb_cid[d] != nb_cid[j])
        new_size = new_size + jnp.where(distinct, sizes[jnp.maximum(nb_cid[d], 0)], 0)
    # taken[q, e]: e is an opponent stone whose chain has q as its only liberty.
    taken = ((b == -p) & (lib >= 0))[None, :] & (lib[None, :] == points[:, None])
    near = jnp.asarray(_adjacency(size)) | joined
    libset = ((b == 0)[None, :] | taken) & near & ~jnp.eye(n, dtype=bool)
    libs_after = jnp.sum(libset, axis=1, dtype=jnp.int32)
    captured = jnp.sum(taken, axis=1, dtype=jnp.int32)
    return captured, libs_after, new_size


def _diagonals(x, size: int, fill):
    """The four diagonal neighbours' values of every point, each ``[N]``."""
    p = jnp.pad(x.reshape(size, size), 1, constant_values=fill)
    return tuple(p[r:r + size, c:c + size].reshape(-1) for r in (0, 2) for c in (0, 2))


def own_eyes(board, to_play, size: int):
    """bool[N]: empty points that are eyes of ``to_play`` (see the module docstring)."""
    b = board.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    surrounded = functools.reduce(jnp.logical_and, [(v == p) | (v == _EDGE) for v in grid.neighbours(b, size, _EDGE)])
    diag = _diagonals(b, size, _EDGE)
    on_edge = grid.any_of(v == _EDGE for v in diag)
    faults = on_edge.astype(jnp.int32) + grid.sum_of((v == -p).astype(jnp.int32) for v in diag)
    return (b == 0) & surrounded & (faults <= 1)


def alphago_planes(state, value_net: bool = False, ladders: bool = True) -> jnp.ndarray:
    """float32[size, size, 48] (49 with ``value_net``): AlphaGo's input planes of one ``HistoryState``.

    Planes in the module table's order (``PLANES``: each feature's first plane); ``value_net``
    appends the player-colour plane; ``ladders=False`` leaves the two ladder planes at zero
    (cheaper). For a batch, ``alphago_planes_batch`` is faster than ``jax.vmap`` of this.
    """
    board, chain_id, atari_lib, to_play = state.board, state.chain_id, state.atari_lib, state.to_play
    n = board.shape[-1]
    size = int(round(n ** 0.5))
    p = to_play.astype(jnp.int32)
    b = board.astype(jnp.int32)
    stone = b != 0
    legal = state.legal[:n]

    chain_libs = stone_liberties(board, chain_id, size)
    age = state.move_count - state.placed_at + 1
    captured, libs_after, new_size = what_if(board, chain_id, atari_lib, to_play, size)
    if ladders:
        capture, escape = ladder_planes(board, chain_id, atari_lib, to_play, legal, size)
    else:
        capture = escape = jnp.zeros(n, bool)
    sensible = legal & ~own_eyes(board, to_play, size)

    f32 = lambda x: x.astype(jnp.float32)[:, None]  # noqa: E731
    planes = [
        f32(b == p), f32(b == -p), f32(b == 0),
        jnp.ones((n, 1), jnp.float32),
        _one_hot(age, stone, 8, 1),
        _one_hot(chain_libs, stone, 8, 1),
        _one_hot(captured, legal, 8, 0),
        _one_hot(new_size, legal & (libs_after == 1), 8, 1),
        _one_hot(libs_after, legal & (libs_after >= 1), 8, 1),
        f32(capture), f32(escape), f32(sensible),
        jnp.zeros((n, 1), jnp.float32),
    ]
    if value_net:
        planes.append(jnp.full((n, 1), p > 0, jnp.float32))
    out = jnp.concatenate(planes, axis=1)
    return out.reshape(size, size, out.shape[-1])


_RUNNING, _CAPTURED, _ESCAPED = 0, 1, 2
LADDER_CHUNK = 8  # ladder reads run this many at a time (vmapped), in a loop until all are done
_QUICK_STEPS = 2  # hunter moves of the first pass over all reads (see ladder_planes_batch)


def _place(b, cid, x, c, size: int):
    """(board, chain ids) int32[N] after colour ``c`` puts a stone on empty point ``x``: it joins
    its neighbour chains (named ``x``), captures, and is not checked for legality."""
    n = size * size
    points = jnp.arange(n)
    nbrs = jnp.asarray(grid.neighbour_table(size))[x]
    safe = jnp.maximum(nbrs, 0)
    nb_ids = jnp.where((nbrs >= 0) & (b[safe] == c), cid[safe], -2)
    merged = (points == x) | ((b == c) & jnp.any(cid[:, None] == nb_ids[None, :], axis=1))
    b = jnp.where(points == x, c, b)
    cid = jnp.where(merged, x, cid)
    # Opponent chains next to x left without liberties: four dense chain tests (cheaper on CPU
    # than a segment reduction over all chains).
    empty = b == 0
    dead = jnp.zeros(n, bool)
    for d in range(4):
        y = safe[d]
        chain = (cid == cid[y]) & (b == -c) & (nbrs[d] >= 0) & (b[y] == -c)
        dead = dead | (chain & ~jnp.any(grid.dilate(chain, size) & empty))
    return jnp.where(dead, 0, b), jnp.where(dead, -1, cid)


def _liberties_of(b, cid, pt, size: int):
    """bool[N]: the liberties of the chain through stone ``pt``."""
    chain = (cid == cid[pt]) & (b != 0)
    return (b == 0) & grid.dilate(chain, size)


def _takes_a_hunter(b, cid, near, hunter, size: int):
    """bool[]: a ``hunter`` chain in atari has a stone in ``near`` (bool[N], the prey and the
    points next to it): the prey can capture it."""
    _, libs = chain_stats(b, cid, size)
    return jnp.any((b == hunter) & near & (libs[jnp.where(b != 0, cid, size * size)] == 1))


def _prey_turn(b, cid, pt, hunter, size: int):
    """The prey (the chain through ``pt``, in atari) moves: ``(board, chain ids, status, its
    liberties bool[N])``. It escapes if it can capture a hunter chain next to it, else extends:
    caught with <= 1 liberty, free with >= 3, running with 2."""
    near = grid.dilate((cid == cid[pt]) & (b != 0), size)
    can_take = _takes_a_hunter(b, cid, near, hunter, size)
    liberty = jnp.argmax((b == 0) & near)
    b2, cid2 = _place(b, cid, liberty, -hunter, size)
    lib2 = _liberties_of(b2, cid2, pt, size)
    count = jnp.sum(lib2)
    status = jnp.where(can_take | (count >= 3), _ESCAPED, jnp.where(count <= 1, _CAPTURED, _RUNNING))
    return b2, cid2, status, lib2


def _hunter_options(b, cid, pt, hunter, libs, size: int):
    """Both ataris of the prey (two liberties ``libs``), lower index first, after the prey's
    answer: ``(boards int32[2, N], chain ids int32[2, N], status int32[2], prey liberties
    bool[2, N])``. A hunter stone without liberties is illegal: status ``_ESCAPED``."""
    n = size * size
    first = jnp.argmax(libs)
    last = n - 1 - jnp.argmax(libs[::-1])

    def attempt(a):
        b1, cid1 = _place(b, cid, a, hunter, size)
        legal = jnp.any(_liberties_of(b1, cid1, a, size))
        b2, cid2, status, lib2 = _prey_turn(b1, cid1, pt, hunter, size)
        return b2, cid2, jnp.where(legal, status, _ESCAPED), lib2

    return jax.vmap(attempt)(jnp.stack([first, last]))


def _read_ladder(b, cid, to_play, q, pt, escape, size: int, max_steps: int | None = None):
    """int32[]: how the ladder after ``to_play`` plays ``q`` ends: ``_CAPTURED``, ``_ESCAPED``, or
    ``_RUNNING`` if cut short by ``max_steps`` hunter moves (None: the read's own bound).

    Capture reading (``escape`` False): the prey is the opponent chain through ``pt``, in atari
    after the move, and moves first. Escape reading: the prey is the mover's chain through ``q``,
    hunted when it has 2 liberties. Both hunter choices are searched depth first (a stack holds
    the second), so the answer does not depend on the board's orientation. A line is cut after
    ``2 * size + 2`` hunter moves and the read after ``8 * size + 8``: unfinished, the prey escapes.
    """
    n = size * size
    depth_limit = 2 * size + 2
    p = to_play.astype(jnp.int32)
    b1, cid1 = _place(b, cid, q, p, size)
    prey = jnp.where(escape, q, pt)
    hunter = jnp.where(escape, -p, p)
    lib1 = _liberties_of(b1, cid1, prey, size)
    count = jnp.sum(lib1)

    # Capture reading: the prey (in atari) moves first.
    bc, cidc, sc, libc = _prey_turn(b1, cid1, prey, hunter, size)
    sc = jnp.where(count == 1, sc, _ESCAPED)
    # Escape reading: the hunter moves if the extended chain has exactly 2 liberties.
    se = jnp.where(count <= 1, _CAPTURED, jnp.where(count >= 3, _ESCAPED, _RUNNING))
    cur = (jnp.where(escape, b1, bc), jnp.where(escape, cid1, cidc), jnp.where(escape, lib1, libc), jnp.int32(0))
    limit = 4 * depth_limit if max_steps is None else min(max_steps, 4 * depth_limit)
    slots = min(depth_limit, limit)  # one push per hunter move at most, and a line is that deep
    stack = (jnp.zeros((slots, n), jnp.int8), jnp.zeros((slots, n), jnp.int16),
             jnp.zeros((slots, n), bool), jnp.zeros(slots, jnp.int32))
    state = (cur, stack, jnp.int32(0), jnp.where(escape, se, sc), jnp.int32(0))

    def body(carry):
        (b, cid, libs, depth), stack, sp, _, steps = carry
        bs, cids, status, libs2 = _hunter_options(b, cid, prey, hunter, libs, size)
        caught = jnp.any(status == _CAPTURED)
        run = (status == _RUNNING) & (depth + 1 < depth_limit)
        go_on = ~caught & jnp.any(run)
        push = ~caught & run[0] & run[1]
        pick = jnp.where(run[0], 0, 1)
        # Push the second choice; continue with the first (or the only) running one.
        top = jnp.minimum(sp, slots - 1)
        sb, scid, slib, sdepth = stack
        sb = sb.at[top].set(jnp.where(push, bs[1].astype(jnp.int8), sb[top]))
        scid = scid.at[top].set(jnp.where(push, cids[1].astype(jnp.int16), scid[top]))
        slib = slib.at[top].set(jnp.where(push, libs2[1], slib[top]))
        sdepth = sdepth.at[top].set(jnp.where(push, depth + 1, sdepth[top]))
        sp = sp + push
        # A dead line of play: back up to the last pushed choice, if any.
        pop = ~caught & ~go_on & (sp > 0)
        below = jnp.maximum(sp - 1, 0)
        nb = jnp.where(go_on, bs[pick], jnp.where(pop, sb[below].astype(jnp.int32), b))
        ncid = jnp.where(go_on, cids[pick], jnp.where(pop, scid[below].astype(jnp.int32), cid))
        nlib = jnp.where(go_on, libs2[pick], jnp.where(pop, slib[below], libs))
        ndepth = jnp.where(go_on, depth + 1, jnp.where(pop, sdepth[below], depth))
        sp = sp - pop
        status = jnp.where(caught, _CAPTURED, jnp.where(go_on | pop, _RUNNING, _ESCAPED))
        return (nb, ncid, nlib, ndepth), (sb, scid, slib, sdepth), sp, status, steps + 1

    def more(carry):
        return (carry[3] == _RUNNING) & (carry[4] < limit)

    status = jax.lax.while_loop(more, body, state)[3]
    return jnp.where((status == _RUNNING) & (max_steps is None), _ESCAPED, status)


def _ladder_items(board, chain_id, atari_lib, to_play, legal, size: int):
    """bool[5N]: the ladder reads one position needs: item ``d * N + q`` (d < 4) a capture of the
    opponent chain next to q in direction d, item ``4 * N + q`` an escape by extending at q."""
    n = size * size
    b = board.astype(jnp.int32)
    cid = chain_id.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    chain_libs = stone_liberties(board, chain_id, size)
    nb_cid = grid.neighbours(cid, size, -1)
    nb_b = grid.neighbours(b, size, _EDGE)
    nb_libs = grid.neighbours(chain_libs, size, 0)
    items = []
    for d in range(4):
        ok = legal & (nb_b[d] == -p) & (nb_libs[d] == 2)
        for j in range(d):
            ok = ok & (nb_cid[d] != nb_cid[j])
        items.append(ok)
    own_atari = (b == p) & (atari_lib >= 0)
    items.append(legal & (jnp.zeros(n + 1, bool).at[jnp.where(own_atari, atari_lib, n)].set(True)[:n]))
    return jnp.concatenate(items)


def ladder_planes_batch(board, chain_id, atari_lib, to_play, legal, size: int, chunk: int | None = None):
    """``(ladder_capture, ladder_escape)``, bool[B, N] each, of a batch: ``board`` int8[B, N],
    ``chain_id`` and ``atari_lib`` int16[B, N], ``to_play`` int8[B], ``legal`` bool[B, N].

    The batch's reads form one work list, ``chunk`` at a time (default ``min(128, 8 * B)``), so a
    batch costs its total reading work, not B times its slowest position's as under ``vmap``.
    """
    n = size * size
    batch = board.shape[0]
    chunk = chunk or min(128, LADDER_CHUNK * batch)
    valid = jax.vmap(functools.partial(_ladder_items, size=size))(board, chain_id, atari_lib, to_play, legal)
    valid = valid.reshape(-1)  # [B * 5N]
    total = batch * 5 * n
    b = board.astype(jnp.int32)
    cid = chain_id.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    table = jnp.asarray(grid.neighbour_table(size))
    pt_table = jnp.concatenate([jnp.maximum(table[:, d], 0) for d in range(4)] + [jnp.arange(n)])

    def run_reads(valid, max_steps):
        """Read the items in ``valid`` (bool[total]), ``chunk`` at a time; int8[total] statuses."""

        def read(item):
            g, k = item // (5 * n), item % (5 * n)
            return _read_ladder(b[g], cid[g], p[g], k % n, pt_table[k], k >= 4 * n, size, max_steps)

        def body(carry):
            left, status = carry
            idx = jnp.nonzero(left, size=chunk, fill_value=0)[0]
            live = jnp.arange(chunk) < jnp.sum(left)  # the first slots hold real items
            result = jax.vmap(read)(idx).astype(jnp.int8)
            slot = jnp.where(live, idx, total)  # padding slots write nowhere
            return left.at[slot].set(False, mode="drop"), status.at[slot].set(result, mode="drop")

        init = (valid, jnp.full(total, _ESCAPED, jnp.int8))
        return jax.lax.while_loop(lambda c: jnp.any(c[0]), body, init)[1]

    # Most reads end within a couple of hunter moves: read everything that far first, then
    # read the few unfinished ones again in full, so that a long read holds up few others.
    quick = run_reads(valid, _QUICK_STEPS)
    again = valid & (quick == _RUNNING)
    status = jnp.where(again, run_reads(again, None), quick)
    caught = status == _CAPTURED
    caught = caught.reshape(batch, 5, n)
    escape = valid.reshape(batch, 5, n)[:, 4] & ~caught[:, 4]
    return jnp.any(caught[:, :4], axis=1), escape


def ladder_planes(board, chain_id, atari_lib, to_play, legal, size: int):
    """``(ladder_capture, ladder_escape)``, bool[N] each, read by simulation for one position
    (``board`` int8[N], ``chain_id`` and ``atari_lib`` int16[N], ``to_play`` int8[], ``legal`` bool[N]).

    Ladder capture: a legal move next to an opponent chain with 2 liberties after which that
    chain dies in the ladder. Ladder escape: a legal move on the only liberty of one of the
    mover's chains that is not caught. A simplified reader: the prey escapes by capturing a
    hunter chain next to it, else extends; with 1 liberty it is caught, with 3 free, with 2 the
    hunter ataris it on either liberty (both searched, ``_read_ladder``), never with a stone
    left without liberties. For a batch, ``ladder_planes_batch`` is faster than ``jax.vmap``.
    """
    capture, escape = ladder_planes_batch(board[None], chain_id[None], atari_lib[None], to_play[None],
                                          legal[None], size)
    return capture[0], escape[0]


NET_CANDIDATES = 8  # (chain, net point) pairs ``net_moves`` reads in one position


def net_moves(board, chain_id, to_play, legal, size: int, candidates: int = NET_CANDIDATES):
    """bool[N]: the legal moves of ``to_play`` that catch an opponent chain in a net (geta), read
    for one position (``board`` int8[N], ``chain_id`` int16[N], ``to_play`` int8[], ``legal``
    bool[N]).

    A net is a stone next to both liberties of a chain with two (not on either), with two
    liberties itself, after which the chain dies whichever liberty it extends to: with one
    liberty left, or caught in the ladder that follows (``_read_ladder``'s escape reading, the
    hunter the mover). The chain must not be able to capture a stone next to it first. At most
    ``candidates`` (chain, point) pairs are read, the lowest chain ids first.
    """
    n = size * size
    b, cid, p = board.astype(jnp.int32), chain_id.astype(jnp.int32), to_play.astype(jnp.int32)
    empty, points = b == 0, jnp.arange(n)
    dilate_rows = jax.vmap(lambda m: grid.dilate(m, size))
    member = (cid[None, :] == points[:, None]) & (b != 0)[None, :]  # [chain id, point]
    libs = dilate_rows(member) & empty[None, :]
    prey = (b == -p) & (cid == points) & (jnp.sum(libs, axis=1) == 2)
    next_to = jax.vmap(lambda m: sum(grid.neighbours(m.astype(jnp.int32), size, 0)))(libs)
    pairs = prey[:, None] & (legal & empty)[None, :] & ~libs & (next_to == 2)
    idx = jnp.nonzero(pairs.reshape(-1), size=candidates, fill_value=0)[0]
    live = jnp.arange(candidates) < jnp.sum(pairs)

    def read(k):
        c, m = k // n, k % n
        b1, cid1 = _place(b, cid, m, p, size)
        safe = jnp.sum(_liberties_of(b1, cid1, m, size)) >= 2
        takes = _takes_a_hunter(b1, cid1, grid.dilate((cid1 == cid1[c]) & (b1 == -p), size), p, size)
        ways = jnp.stack([jnp.argmax(libs[c]), n - 1 - jnp.argmax(libs[c][::-1])])
        ends = jax.vmap(lambda r: _read_ladder(b1, cid1, -p, r, r, True, size))(ways)
        return safe & ~takes & jnp.all(ends == _CAPTURED), m

    caught, where = jax.vmap(read)(idx)
    return jnp.zeros(n + 1, bool).at[jnp.where(caught & live, where, n)].set(True)[:n]


def alphago_planes_batch(states, value_net: bool = False, chunk: int | None = None) -> jnp.ndarray:
    """float32[B, size, size, 48] (49 with ``value_net``): ``jax.vmap(alphago_planes)`` of a batched
    ``HistoryState``, faster (the batch's ladder reads share one work list)."""
    planes = jax.vmap(functools.partial(alphago_planes, value_net=value_net, ladders=False))(states)
    n = states.board.shape[-1]
    size = int(round(n ** 0.5))
    capture, escape = ladder_planes_batch(states.board, states.chain_id, states.atari_lib, states.to_play,
                                          states.legal[:, :n], size, chunk=chunk)
    ladder = jnp.stack([capture, escape], axis=-1).astype(jnp.float32).reshape(-1, size, size, 2)
    first = PLANES["ladder_capture"]
    return planes.at[..., first:first + 2].set(ladder)
