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

Definitions used here:

- Liberties are real liberties (distinct empty points next to the chain), not pseudo-liberties.
- "Turns since": a stone's age is ``move_count - placed_at + 1`` (1 for the stone just played;
  setup stones count as placed at move 0). Needs a ``games.history.WithHistory`` state.
- The what-if planes (capture size, self-atari size, liberties after move) are computed for every
  legal point at once: captured stones are the opponent's chains whose only liberty is the point;
  the new chain is the stone and the own chains next to it; its liberties are the empty points
  and the just-captured points next to it, other than the point itself. Self-atari size is the
  new chain's size when it would have exactly one liberty.
- An own eye (sensibleness): an empty point whose four neighbours are p's stones or the edge,
  with at most one "fault" among its diagonals, where each opponent stone on a diagonal is a
  fault and a point on the edge of the board starts with one fault.
- Ladders are read by ``ladder_planes`` (see its docstring for the reading rules).

Cost: the what-if planes use dense ``[N, N]`` incidence arrays (N = size * size), O(N^2) per
position with no loop; the ladder reader runs a bounded loop only over the few ladder candidates
(about 20 per random 19x19 mid-game position), and dominates the time: on a 2-core CPU, 19x19
batch 256, about 3,400 positions/s without the ladder planes and 500 with them
(``experiments/bench_features.py``).
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
    """float32[N, depth]: one-hot of ``clip(value, first, first + depth - 1) - first`` where
    ``active``, zeros elsewhere."""
    idx = jnp.clip(value, first, first + depth - 1) - first
    return (jax.nn.one_hot(idx, depth, dtype=jnp.float32) * active[:, None]).astype(jnp.float32)


def chain_stats(board, chain_id, size: int):
    """Chain sizes and real liberty counts.

    Args:
      board: int8[N]; chain_id: int16[N] (-1 on empty points), as in ``GoState``.

    Returns:
      (sizes, libs), each int32[N + 1] indexed by chain id (index N collects nothing useful).
      Liberties are counted once per chain: an empty point adds one to each distinct chain
      among its four neighbours (a segment sum, O(N)).
    """
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
    """What a stone of ``to_play`` on each point would do (meaningful on empty points).

    Args:
      board: int8[N]; chain_id: int16[N]; atari_lib: int16[N]; to_play: int8[] (``GoState``).

    Returns:
      (captured, libs_after, new_size), each int32[N]: the opponent stones the move captures,
      the liberties of the move's chain after the captures, and the number of stones in that
      chain. Dense: ``[N, N]`` incidence arrays (candidate point x board point).
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
    """float32[size, size, 48] (49 with ``value_net``): AlphaGo's input planes of one state.

    Plane order as in the table of the module docstring (``PLANES`` gives each feature's first
    plane). Unbatched: for a batch, ``alphago_planes_batch`` gives the same planes faster than
    ``jax.vmap`` of this function (which works too).

    Args:
      state: a ``games.history.HistoryState`` of a Go-family game (it needs ``placed_at``).
      value_net: append the player-colour plane (1 where black is to move).
      ladders: read ladders; if False the two ladder planes are left at zero (cheaper).
    """
    board, chain_id, atari_lib, to_play = state.board, state.chain_id, state.atari_lib, state.to_play
    n = board.shape[-1]
    size = int(round(n ** 0.5))
    p = to_play.astype(jnp.int32)
    b = board.astype(jnp.int32)
    stone = b != 0
    legal = state.legal[:n]

    sizes, libs = chain_stats(board, chain_id, size)
    chain_libs = libs[jnp.where(stone, chain_id.astype(jnp.int32), n)]
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
    """(board, chain ids) int32[N] after colour ``c`` puts a stone on empty point ``x``.

    The stone joins its own neighbour chains (named ``x``); opponent chains left without
    liberties are removed. No legality check: a suicide leaves the stone without liberties.
    """
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


def _prey_turn(b, cid, pt, hunter, size: int):
    """The prey (chain through ``pt``, in atari) moves: it escapes if it can capture a hunter
    chain next to it; else it extends at its liberty and is captured with <= 1 liberty left,
    escapes with >= 3, and the ladder goes on with 2.

    Returns:
      (board, chain ids, status, liberties of the prey: bool[N]).
    """
    n = size * size
    chain = (cid == cid[pt]) & (b != 0)
    near = grid.dilate(chain, size)
    _, libs = chain_stats(b, cid, size)
    can_take = jnp.any((b == hunter) & near & (libs[jnp.where(b != 0, cid, n)] == 1))
    liberty = jnp.argmax((b == 0) & near)
    b2, cid2 = _place(b, cid, liberty, -hunter, size)
    lib2 = _liberties_of(b2, cid2, pt, size)
    count = jnp.sum(lib2)
    status = jnp.where(can_take | (count >= 3), _ESCAPED, jnp.where(count <= 1, _CAPTURED, _RUNNING))
    return b2, cid2, status, lib2


def _hunter_options(b, cid, pt, hunter, libs, size: int):
    """Both ataris of the prey (which has the two liberties ``libs``) and the prey's answers.

    Returns:
      (boards int32[2, N], chain ids int32[2, N], status int32[2], prey liberties bool[2, N]):
      for the hunter's stone on the lower-index liberty and on the other one, the position
      after the prey's answer (``_prey_turn``). A hunter stone without liberties is illegal:
      that option's status is ``_ESCAPED``.
    """
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
    """int32[]: how the ladder started by ``to_play`` playing ``q`` ends: ``_CAPTURED``,
    ``_ESCAPED``, or ``_RUNNING`` if cut short by ``max_steps`` hunter moves (default: the
    read's own bound, after which an unfinished read counts as escaped).

    Capture reading (``escape`` False): the prey is the opponent chain through ``pt``; it must
    be in atari after the move, then moves first. Escape reading (``escape`` True): the prey is
    the mover's chain through ``q`` after the move; the opponent hunts it when it has 2 liberties.

    The hunter's two choices at each turn are searched depth first (an explicit stack holds the
    second choice where both keep the ladder going), so the answer does not depend on the board's
    orientation. A line of play is cut after ``2 * size + 2`` hunter moves (the prey escapes), and
    the whole read after ``8 * size + 8`` hunter moves (an unfinished read counts as escaped).
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
    """bool[5N]: the ladder reads one position needs. Item ``k`` is point ``k % N``; items
    ``d * N + q`` (d < 4) read a capture of the opponent chain next to q in direction d (each
    chain once per point), items ``4 * N + q`` an escape by extending one of the mover's chains
    out of atari at q."""
    n = size * size
    b = board.astype(jnp.int32)
    cid = chain_id.astype(jnp.int32)
    p = to_play.astype(jnp.int32)
    _, libs = chain_stats(board, chain_id, size)
    chain_libs = libs[jnp.where(b != 0, cid, n)]
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
    """(ladder_capture, ladder_escape), each bool[B, N], for a batch of positions.

    The reads of the whole batch form one work list, read ``chunk`` at a time (vmapped), so a
    batch costs about its total reading work rather than B times its slowest position's (as
    ``jax.vmap(ladder_planes)`` would). A first pass reads every item for at most two hunter
    moves; a second pass reads the unfinished few in full.

    Args:
      board: int8[B, N]; chain_id: int16[B, N]; atari_lib: int16[B, N]; to_play: int8[B];
      legal: bool[B, N], the legal points; chunk: reads per loop step (default
        ``min(128, 8 * B)``).
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
    """(ladder_capture, ladder_escape), each bool[N], read by simulation for every candidate.

    Candidates: a legal move next to an opponent chain with exactly 2 liberties (it would be in
    atari: ladder capture if that chain then dies in the ladder, for any such chain), and a
    legal move on the only liberty of one of the mover's chains (ladder escape if the extended
    chain is not caught).

    Reading rules (a simplified ladder reader, as such planes usually are): the prey, in atari,
    escapes if it can capture a hunter chain next to it, else extends at its liberty; with 1
    liberty it is caught, with 3 or more it is free, with 2 the hunter ataris it on one of the
    two liberties, both searched (depth first, bounded: see ``_read_ladder``); an atari on a
    point where the hunter's stone would have no liberty is not allowed. One hunter move costs
    O(N); reads run ``LADDER_CHUNK`` at a time (vmapped) until all candidates are done. For a
    batch, ``ladder_planes_batch`` (or ``alphago_planes_batch``) shares one work list: prefer it
    to ``jax.vmap``, under which every position waits for the batch's slowest reads.

    Args:
      board: int8[N]; chain_id: int16[N]; atari_lib: int16[N]; to_play: int8[] (``GoState``);
      legal: bool[N], the legal points.
    """
    capture, escape = ladder_planes_batch(board[None], chain_id[None], atari_lib[None], to_play[None],
                                          legal[None], size)
    return capture[0], escape[0]


def alphago_planes_batch(states, value_net: bool = False, chunk: int | None = None) -> jnp.ndarray:
    """float32[B, size, size, 48] (49 with ``value_net``): ``alphago_planes`` of a batch.

    The same planes as ``jax.vmap(alphago_planes)``, faster: the ladder reads of the whole
    batch share one work list (``ladder_planes_batch``).

    Args:
      states: a batched ``HistoryState`` (leading axis B).
    """
    planes = jax.vmap(functools.partial(alphago_planes, value_net=value_net, ladders=False))(states)
    n = states.board.shape[-1]
    size = int(round(n ** 0.5))
    capture, escape = ladder_planes_batch(states.board, states.chain_id, states.atari_lib, states.to_play,
                                          states.legal[:, :n], size, chunk=chunk)
    ladder = jnp.stack([capture, escape], axis=-1).astype(jnp.float32).reshape(-1, size, size, 2)
    first = PLANES["ladder_capture"]
    return planes.at[..., first:first + 2].set(ladder)
