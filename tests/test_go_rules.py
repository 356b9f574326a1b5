"""Go rules: hand-made positions, and property tests against an independent numpy reference.

Positions are ASCII diagrams (``boards.parse``; row 0 is the top edge, ``X`` black, ``O``
white) started with ``init_from_board``; moves are GTP vertices. The reference rules in the
helpers below (flood fills over Python lists) share nothing with ``go.py`` except the public
Zobrist key table: captures, suicide, liberties, chains, ko, positional superko (a set of every
board so far), Tromp-Taylor area.

Compilation dominates on a small CPU, so each game configuration below is jitted once
(``engine``, cached per configuration) and every test reuses it.
"""

from __future__ import annotations

import collections
import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import boards
from alphago_jax import games
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.go import zobrist_keys

# The few configurations compiled by this file.
GO5 = games.make("go", size=5, komi=0.5)  # positional superko, suicide illegal
GO5_SIMPLE = games.make("go", size=5, komi=0.0, superko=False)  # simple ko; integer komi can draw
GO5_SUICIDE = games.make("go", size=5, komi=0.5, allow_suicide=True)  # positional superko
GO7 = games.make("go", size=7, komi=7.5)


# ----------------------------------------------------------------------------- engines
class Engine:
    """The jitted functions of one game configuration, called with fixed dtypes."""

    def __init__(self, game):
        self.game = game
        self.size = game.size
        self.n = game.num_points
        self._init = jax.jit(game.init_from_board)
        self._step = jax.jit(game.step)
        self._area = jax.jit(game.area)
        self._score = jax.jit(game.score)
        self._returns = jax.jit(game.returns)

    def setup(self, position, to_play=BLACK):
        board = boards.parse(position) if isinstance(position, str) else np.asarray(position, np.int8)
        return self._init(jnp.asarray(board, jnp.int8), jnp.int8(to_play))

    def empty(self):
        return self.setup(np.zeros(self.n, np.int8))

    def step(self, state, action):
        return self._step(state, jnp.int32(action))

    def point(self, vertex):
        return grid.from_vertex(vertex, self.size)

    def play(self, state, vertices):
        """Play GTP vertices in turn, asserting that each is in the legal mask."""
        for v in vertices.split():
            a = self.point(v)
            assert bool(state.legal[a]), f"{v} unexpectedly illegal in\n{boards.show(state.board)}"
            state = self.step(state, a)
            assert not bool(state.terminal), f"game ended after {v}"
        return state

    def area(self, state):
        return np.asarray(self._area(state))

    def score(self, state):
        return float(self._score(state))

    def returns(self, state):
        return np.asarray(self._returns(state))


@functools.lru_cache(maxsize=None)
def engine(game) -> Engine:
    return Engine(game)


@pytest.fixture(scope="module")
def go5():
    return engine(GO5)


@pytest.fixture(scope="module")
def go5_simple():
    return engine(GO5_SIMPLE)


@pytest.fixture(scope="module")
def go5_suicide():
    return engine(GO5_SUICIDE)


@pytest.fixture(scope="module")
def go7():
    return engine(GO7)


# ------------------------------------------------------------- independent reference rules
Chain = collections.namedtuple("Chain", "colour stones libs")


@functools.lru_cache(maxsize=None)
def _neighbours(size):
    out = []
    for p in range(size * size):
        r, c = divmod(p, size)
        candidates = ((p - size, r > 0), (p + size, r < size - 1), (p - 1, c > 0), (p + 1, c < size - 1))
        out.append([q for q, on_board in candidates if on_board])
    return out


def _size(board):
    return int(round(np.sqrt(len(board))))


def ref_chains(board):
    """Flood fill: (label per point, -1 on empty; list of Chain(colour, stones, liberties))."""
    board = [int(v) for v in board]
    nb = _neighbours(_size(board))
    labels = [-1] * len(board)
    chains = []
    for p, colour in enumerate(board):
        if colour == 0 or labels[p] >= 0:
            continue
        k, stack, stones, libs = len(chains), [p], [], set()
        labels[p] = k
        while stack:
            q = stack.pop()
            stones.append(q)
            for r in nb[q]:
                if board[r] == 0:
                    libs.add(r)
                elif board[r] == colour and labels[r] < 0:
                    labels[r] = k
                    stack.append(r)
        chains.append(Chain(colour, sorted(stones), libs))
    return labels, chains


def ref_play(board, point, colour):
    """Place a stone, remove enemy chains left without liberties, then the own chain if it has none.

    Returns (new board, captured points, suicided points).
    """
    b = np.array(board, np.int8)
    b[point] = colour
    _, chains = ref_chains(b)
    captured = sorted(s for ch in chains if ch.colour == -colour and not ch.libs for s in ch.stones)
    b[captured] = 0
    labels, chains = ref_chains(b)
    own = chains[labels[point]]
    suicided = own.stones if not own.libs else []
    b[suicided] = 0
    return b, captured, suicided


def ref_moves(board, colour, allow_suicide):
    """{point: resulting board} for every empty point ``colour`` may play, before any ko rule."""
    labels, chains = ref_chains(board)
    nb = _neighbours(_size(board))
    out = {}
    for p in np.flatnonzero(np.asarray(board) == 0):
        opp = {labels[q] for q in nb[p] if board[q] == -colour}
        own = {labels[q] for q in nb[p] if board[q] == colour}
        dead = [k for k in opp if chains[k].libs == {p}]
        breathes = any(board[q] == 0 for q in nb[p]) or bool(dead) or any(len(chains[k].libs) > 1 for k in own)
        if not breathes and not allow_suicide:
            continue
        b = np.array(board, np.int8)
        b[p] = colour
        for k in dead:
            b[chains[k].stones] = 0
        if not breathes:
            b[p] = 0
            for k in own:
                b[chains[k].stones] = 0
        out[int(p)] = b
    return out


def ref_legal(board, colour, allow_suicide, forbidden):
    """bool[N + 1] legal actions: rule-legal points whose result is not in ``forbidden``; pass."""
    legal = np.zeros(len(board) + 1, bool)
    for p, b in ref_moves(board, colour, allow_suicide).items():
        legal[p] = b.tobytes() not in forbidden
    legal[-1] = True
    return legal


def ref_area(board):
    """(black, white) Tromp-Taylor area: stones plus empty regions bordering only that colour."""
    board = [int(v) for v in board]
    nb = _neighbours(_size(board))
    area = {1: board.count(1), -1: board.count(-1)}
    seen = set()
    for p, v in enumerate(board):
        if v != 0 or p in seen:
            continue
        region, border, stack = 0, set(), [p]
        seen.add(p)
        while stack:
            q = stack.pop()
            region += 1
            for r in nb[q]:
                if board[r] == 0 and r not in seen:
                    seen.add(r)
                    stack.append(r)
                elif board[r] != 0:
                    border.add(board[r])
        if len(border) == 1:
            area[border.pop()] += region
    return np.array([area[1], area[-1]])


def ref_hash(board):
    """uint32[2]: additive Zobrist hash recomputed from scratch with the public key table."""
    board = np.asarray(board)
    keys = zobrist_keys(_size(board)).astype(np.uint64)  # [colour (black, white), word, N]
    total = keys[0][:, board == 1].sum(axis=1) + keys[1][:, board == -1].sum(axis=1)
    return (total % 2**32).astype(np.uint32)


def ref_returns(board, komi):
    a = ref_area(board)
    s = np.sign(a[0] - a[1] - komi)
    return np.array([s, -s], np.float32)


def remove_dead(board):
    """A setup board without chains that have no liberty (all removed at once)."""
    b = np.array(board, np.int8)
    _, chains = ref_chains(b)
    for ch in chains:
        if not ch.libs:
            b[ch.stones] = 0
    return b


# ------------------------------------------------------------------------ assertions
def host(state):
    return jax.device_get(state)


def fields(state):
    return {f.name: np.asarray(getattr(state, f.name)) for f in dataclasses.fields(state)}


def assert_same_state(a, b, what=""):
    fa, fb = fields(host(a)), fields(host(b))
    for name in fa:
        np.testing.assert_array_equal(fa[name], fb[name], err_msg=f"{what}: field {name} differs")


def vertices(points, size):
    return [grid.to_vertex(int(p), size) for p in points]


def assert_board_facts(s, context=""):
    """Chains, chain ids, atari liberties and the hash of host state ``s`` match the reference."""
    board = np.asarray(s.board)
    size = _size(board)
    where = f"{context}\n{boards.show(board)}"
    labels, chains = ref_chains(board)
    for ch in chains:
        assert ch.libs, f"chain at {vertices(ch.stones, size)} has no liberty{where}"
    cid = np.asarray(s.chain_id)
    assert (cid[board == 0] == -1).all(), f"chain_id set on empty points{where}"
    names = set()
    expected_atari = np.full(board.shape, -1)
    for ch in chains:
        ids = set(cid[ch.stones].tolist())
        assert len(ids) == 1, f"chain {vertices(ch.stones, size)} has chain ids {ids}{where}"
        (i,) = ids
        assert i in ch.stones, f"chain id {i} of {vertices(ch.stones, size)} is not one of its stones{where}"
        names.add(i)
        if len(ch.libs) == 1:
            expected_atari[ch.stones] = next(iter(ch.libs))
    assert len(names) == len(chains), f"two chains share an id{where}"
    np.testing.assert_array_equal(np.asarray(s.atari_lib), expected_atari, err_msg=f"atari_lib{where}")
    np.testing.assert_array_equal(np.asarray(s.hash), ref_hash(board), err_msg=f"hash{where}")


def assert_illegal_step_loses(eng, state, action):
    """Stepping ``action`` ends the game as a loss for the mover and leaves the position alone."""
    before = host(state)
    mover = int(before.to_play)
    after = host(eng.step(state, action))
    assert after.terminal and after.loser == mover
    np.testing.assert_array_equal(eng.returns(after), [-mover, mover])
    assert not after.legal.any()
    fb, fa = fields(before), fields(after)
    for name in fb.keys() - {"to_play", "terminal", "loser", "legal"}:
        np.testing.assert_array_equal(fa[name], fb[name], err_msg=f"{name} changed by illegal {action}")
    return after


def stone_diff(before, after):
    """(points that became empty, points that got a stone)."""
    b, a = np.asarray(before.board), np.asarray(after.board)
    return set(np.flatnonzero((b != 0) & (a == 0)).tolist()), set(np.flatnonzero((b == 0) & (a != 0)).tolist())


# =============================================================================== captures
CAPTURES = {
    # name: (before, mover, vertex, after)
    "centre": ("""
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .""", BLACK, "C2", """
        . . . . .
        . . X . .
        . X . X .
        . . X . .
        . . . . ."""),
    "four_chains_at_once": ("""
        . X O X .
        X O . O X
        . X O X .
        . . X . .
        . . . . .""", BLACK, "C4", """
        . X . X .
        X . X . X
        . X . X .
        . . X . .
        . . . . ."""),
    "edge": ("""
        . X O X .
        . . . . .
        . . . . .
        . . . . .
        . . . . .""", BLACK, "C4", """
        . X . X .
        . . X . .
        . . . . .
        . . . . .
        . . . . ."""),
    "corner_two_stones": ("""
        O O X . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .""", BLACK, "B4", """
        . . X . .
        X X . . .
        . . . . .
        . . . . .
        . . . . ."""),
    # White's stone at A5 has no liberty of its own but captures two black chains.
    "corner_two_chains_white": ("""
        . X O . .
        X O . . .
        O . . . .
        . . . . .
        . . . . .""", WHITE, "A5", """
        O . O . .
        . O . . .
        O . . . .
        . . . . .
        . . . . ."""),
}


@pytest.mark.parametrize("name", list(CAPTURES))
def test_capture(go5, name):
    before, mover, vertex, after = CAPTURES[name]
    s0 = go5.setup(before, mover)
    p = go5.point(vertex)
    assert s0.legal[p]
    s1 = host(go5.step(s0, p))
    expected = boards.parse(after)
    np.testing.assert_array_equal(s1.board, expected, err_msg=f"after {vertex}:\n{boards.show(s1.board)}")
    emptied, filled = stone_diff(host(s0), s1)
    assert filled == {p}
    assert emptied == set(np.flatnonzero((boards.parse(before) == -mover) & (expected == 0)).tolist())
    assert emptied, "the case must capture something"
    assert s1.to_play == -mover and not s1.terminal and s1.move_count == 1 and s1.last_move == p
    assert not np.array_equal(s1.hash, np.asarray(s0.hash))
    assert_board_facts(s1, f"after {vertex}")
    # The opponent's mask after the capture equals the reference (positional superko included).
    forbidden = {boards.parse(before).tobytes(), expected.tobytes()}
    np.testing.assert_array_equal(s1.legal, ref_legal(expected, -mover, False, forbidden))


def test_capturing_move_without_own_liberty_is_legal(go5):
    """A5 would be suicide for black (it joins two chains in atari) but captures two for white."""
    before, _, _, _ = CAPTURES["corner_two_chains_white"]
    a5 = go5.point("A5")
    assert bool(go5.setup(before, WHITE).legal[a5])
    assert not bool(go5.setup(before, BLACK).legal[a5])


# ================================================================================ suicide
SINGLE_SUICIDE = """
    . O . . .
    O . . . .
    . . . . .
    . . . . .
    . . . . ."""
MULTI_SUICIDE = """
    X X . O .
    O O O . .
    . . . . .
    . . . . .
    . . . . ."""
JOIN_SUICIDE = CAPTURES["corner_two_chains_white"][0]


@pytest.mark.parametrize("position, vertex", [(SINGLE_SUICIDE, "A5"), (MULTI_SUICIDE, "C5"), (JOIN_SUICIDE, "A5")],
                         ids=["single_stone", "extends_chain", "joins_two_chains"])
def test_suicide_is_illegal(go5, go5_simple, position, vertex):
    for eng in (go5, go5_simple):
        s = eng.setup(position, BLACK)
        p = eng.point(vertex)
        assert not bool(s.legal[p]), f"suicide {vertex} allowed"
        board = boards.parse(position)
        np.testing.assert_array_equal(host(s).legal, ref_legal(board, BLACK, False, {board.tobytes()}))
        assert_illegal_step_loses(eng, s, p)


@pytest.mark.parametrize("position, vertex, after", [
    (MULTI_SUICIDE, "C5", """
        . . . O .
        O O O . .
        . . . . .
        . . . . .
        . . . . ."""),
    (JOIN_SUICIDE, "A5", """
        . . O . .
        . O . . .
        O . . . .
        . . . . .
        . . . . ."""),
], ids=["extends_chain", "joins_two_chains"])
def test_allowed_suicide_removes_own_chain(go5_suicide, position, vertex, after):
    s0 = go5_suicide.setup(position, BLACK)
    p = go5_suicide.point(vertex)
    assert bool(s0.legal[p])
    s1 = host(go5_suicide.step(s0, p))
    np.testing.assert_array_equal(s1.board, boards.parse(after), err_msg=boards.show(s1.board))
    assert not s1.terminal and s1.loser == 0 and s1.to_play == WHITE
    assert_board_facts(s1, f"after suicide {vertex}")
    assert s1.history_len == 2
    forbidden = {boards.parse(position).tobytes(), boards.parse(after).tobytes()}
    np.testing.assert_array_equal(s1.legal, ref_legal(s1.board, WHITE, True, forbidden))


def test_allowed_single_stone_suicide_repeats_the_position(go5_suicide):
    """With suicide allowed, a lone stone's suicide leaves the board as it was: positional
    superko forbids recreating the current position, so it stays masked."""
    s = go5_suicide.setup(SINGLE_SUICIDE, BLACK)
    assert not bool(s.legal[go5_suicide.point("A5")])
    assert bool(s.legal[go5_suicide.point("B4")])


# ===================================================================================== ko
# Ko A on the top edge (black may take B5 by playing C5), ko B on the bottom edge (white may
# take B1 by playing C1). Every other chain has two or more liberties.
DOUBLE_KO = """
    X O . O .
    X X O . .
    . . . . .
    O O X . .
    O X . X ."""


@pytest.mark.parametrize("game", [GO5, GO5_SIMPLE], ids=["superko", "simple_ko"])
def test_ko_immediate_recapture_is_masked(game):
    eng = engine(game)
    s0 = eng.setup(DOUBLE_KO, BLACK)
    s1 = eng.play(s0, "C5")
    np.testing.assert_array_equal(host(s1).board, boards.parse("""
        X . X O .
        X X O . .
        . . . . .
        O O X . .
        O X . X ."""))
    b5 = eng.point("B5")
    assert not bool(s1.legal[b5]), "immediate recapture of the ko allowed"
    assert int(s1.ko) == b5  # the simple-ko point is tracked under both rules
    assert_illegal_step_loses(eng, s1, b5)
    # After one exchange elsewhere the recapture is legal under either rule.
    s3 = eng.play(s1, "E3 D3")
    assert bool(s3.legal[b5])
    s4 = host(eng.step(s3, b5))
    assert s4.board[b5] == WHITE and s4.board[eng.point("C5")] == 0 and not s4.terminal
    assert_board_facts(s4, "after the ko recapture")


# White A5 is in atari; the black corner stones it touches would be captured by A5 as one
# chain that touches A5 from two sides.
CORNER = """
    O . O . .
    . . O . .
    O O . . .
    . . . . .
    . . . . ."""
CORNER_BLACK = """
    O . O . .
    X X O . .
    O O . . .
    . . . . .
    . . . . ."""
SUPERKO_CYCLES = {
    # Black takes ko A, white takes ko B, black passes, white retakes A: black retaking B
    # would recreate the start position five plies back.
    "double_ko": (DOUBLE_KO, "C5 C1 pass B5", "B1"),
    # Black fills B4 and A4 (white passes) and captures A5 with B5: white capturing the three
    # stones at A5 would recreate the start position six plies back.
    "three_stone_capture": (CORNER, "B4 pass A4 pass B5", "A5"),
    # Black captures A5, white captures three at A5, black plays B4, white passes: black A4
    # captures nothing and would recreate the start position five plies back.
    "plain_move": (CORNER_BLACK, "B5 A5 B4 pass", "A4"),
}


@pytest.mark.parametrize("name", list(SUPERKO_CYCLES))
def test_positional_superko_cycle(go5, go5_simple, name):
    """A move recreating a position from four or more plies back: masked by positional
    superko, allowed by simple ko (it is no immediate recapture)."""
    position, sequence, vertex = SUPERKO_CYCLES[name]
    history = [boards.parse(position)]
    sk, simple = go5.setup(position, BLACK), go5_simple.setup(position, BLACK)
    for v in sequence.split():
        sk, simple = go5.play(sk, v), go5_simple.play(simple, v)
        np.testing.assert_array_equal(host(sk).board, host(simple).board)
        history.append(host(sk).board)
    p = go5.point(vertex)
    diff = np.flatnonzero(host(sk).legal != host(simple).legal)
    assert vertices(diff, 5) == [vertex], f"masks differ at {vertices(diff, 5)}"
    assert not bool(sk.legal[p]) and bool(simple.legal[p])
    # Both masks against the reference: every earlier board for superko; for simple ko only
    # the board before the opponent's last move, if that move was a play.
    board, mover = history[-1], int(sk.to_play)
    np.testing.assert_array_equal(host(sk).legal, ref_legal(board, mover, False, {b.tobytes() for b in history}))
    last_play = None if sequence.split()[-1] == "pass" else history[-2].tobytes()
    np.testing.assert_array_equal(host(simple).legal, ref_legal(board, mover, False, {last_play} - {None}))
    # Simple ko lets the cycle close; under superko the move loses.
    closed = host(go5_simple.step(simple, p)).board
    np.testing.assert_array_equal(closed, history[0], err_msg=boards.show(closed))
    assert all(not np.array_equal(closed, b) for b in history[-3:]), "cycle shorter than four plies"
    assert_illegal_step_loses(go5, sk, p)


# =============================================================================== snapback
SNAPBACK = """
    X . . O .
    X X X O .
    O O O . .
    . . . . .
    . . . . ."""


@pytest.mark.parametrize("game", [GO5, GO5_SIMPLE], ids=["superko", "simple_ko"])
def test_snapback(game):
    eng = engine(game)
    s = eng.play(eng.setup(SNAPBACK, WHITE), "B5 C5")  # white throws in, black captures it
    s = host(s)
    group = boards.points("A5 A4 B4 C4 C5", 5)
    b5 = eng.point("B5")
    assert (s.board[group] == BLACK).all() and s.board[b5] == 0
    assert (s.atari_lib[group] == b5).all(), "the black group should be in atari at B5"
    assert s.legal[b5], "snapback recapture masked (it is no ko: five stones are taken)"
    s2 = host(eng.step(s, b5))
    np.testing.assert_array_equal(s2.board, boards.parse("""
        . O . O .
        . . . O .
        O O O . .
        . . . . .
        . . . . ."""), err_msg=boards.show(s2.board))
    assert stone_diff(s, s2) == (set(group), {b5})
    assert_board_facts(s2, "after the snapback")


# ================================================================================ scoring
# Black and white share the liberty C3 in seki; A5 is a black eye and E1 a white eye.
SEKI = """
    . X X X O
    X X X O O
    X X . O O
    X X O O O
    X O O O ."""
# D3 is dame: an empty point between the two walls that touches both colours.
DAME = """
    . . X O .
    . . X O .
    . . X . O
    . . X O .
    . . X O ."""
WALLS7 = "\n".join([". . . X O . ."] * 7)


@pytest.mark.parametrize("game, position, area, score, result", [
    (GO5, SEKI, (12, 12), -0.5, (-1, 1)),
    (GO5_SIMPLE, SEKI, (12, 12), 0.0, (0, 0)),
    (GO5, DAME, (15, 9), 5.5, (1, -1)),
    (GO5_SIMPLE, DAME, (15, 9), 6.0, (1, -1)),
    (GO5, "\n".join(["....."] * 5), (0, 0), -0.5, (-1, 1)),
    (GO5_SIMPLE, "\n".join(["....."] * 5), (0, 0), 0.0, (0, 0)),
    (GO5, "\n".join(["....."] * 2 + ["..X.."] + ["....."] * 2), (25, 0), 24.5, (1, -1)),
    (GO7, WALLS7, (28, 21), -0.5, (-1, 1)),  # komi decides
], ids=["seki", "seki_draw", "dame", "dame_komi0", "empty", "empty_draw", "one_stone", "komi_7x7"])
def test_area_score_and_returns(game, position, area, score, result):
    eng = engine(game)
    s = eng.setup(position, BLACK)
    board = boards.parse(position)
    np.testing.assert_array_equal(ref_area(board), area)  # the hand count agrees with the reference
    np.testing.assert_array_equal(eng.area(s), area)
    assert eng.score(s) == pytest.approx(score)
    np.testing.assert_array_equal(eng.returns(s), [0, 0])
    s1 = eng.step(s, game.pass_action)
    assert not bool(s1.terminal)
    np.testing.assert_array_equal(eng.returns(s1), [0, 0])
    s2 = eng.step(s1, game.pass_action)
    assert bool(s2.terminal) and int(s2.loser) == 0
    np.testing.assert_array_equal(eng.returns(s2), result)
    assert eng.returns(s2).dtype == np.float32


def test_seki_filling_the_shared_liberty_loses_the_chain(go5):
    """Why SEKI is seki: the shared liberty is a self-atari for black, the eyes are suicide."""
    s = go5.setup(SEKI, BLACK)
    assert not bool(s.legal[go5.point("E1")])  # white's eye
    s = go5.play(s, "C3")
    s = host(go5.step(s, go5.point("A5")))  # white captures the whole black chain
    assert (s.board == BLACK).sum() == 0 and (s.board == WHITE).sum() == 12


# ================================================================================== passes
def test_two_passes_end_the_game(go5):
    n = GO5.num_points
    s1 = host(go5.step(go5.empty(), n))
    assert not s1.terminal and s1.passes == 1 and s1.to_play == WHITE and s1.legal.all()
    s2 = host(go5.step(s1, n))
    assert s2.terminal and s2.passes == 2 and not s2.legal.any() and s2.move_count == 2
    np.testing.assert_array_equal(go5.returns(s2), [-1, 1])  # empty board: komi wins


def test_pass_then_move_resets_the_pass_count(go5):
    n = GO5.num_points
    s = go5.play(go5.empty(), "pass C3 pass")
    assert int(s.passes) == 1 and not bool(s.terminal) and int(s.move_count) == 3
    s = go5.play(s, "D3")
    assert int(s.passes) == 0
    s = go5.step(go5.step(s, n), n)
    assert bool(s.terminal)


def test_max_moves_ends_the_game(go5):
    assert GO5.max_moves == 2 * 5 * 5
    n = GO5.num_points
    rng = np.random.default_rng(3)
    s = go5.empty()
    for t in range(1, GO5.max_moves + 1):
        pts = np.flatnonzero(np.asarray(s.legal[:n]))
        s = go5.step(s, rng.choice(pts) if len(pts) else n)
        assert int(s.move_count) == t
        assert bool(s.terminal) == (t == GO5.max_moves), f"terminal={bool(s.terminal)} after {t} moves"
    assert int(s.passes) < 2 and int(s.loser) == 0
    np.testing.assert_array_equal(go5.returns(s), ref_returns(host(s).board, GO5.komi))
    with pytest.raises(ValueError, match="max_moves"):
        games.make("go", size=5, max_moves=0)


def test_pass_after_forbids_early_passes_unless_nothing_else_is_legal():
    game = games.make("go", size=3, komi=0.5, pass_after=2)
    step, start = jax.jit(game.step), jax.jit(game.init_from_board)
    n = game.num_points
    s = start(jnp.zeros(n, jnp.int8), BLACK)
    assert not bool(s.legal[n]) and bool(s.legal[:n].all())
    s = step(s, 0)
    assert not bool(s.legal[n])
    s = step(s, 8)  # move 2: passing is allowed from now on
    assert bool(s.legal[n]) and int(s.move_count) == 2
    # Black's only empty point is its own last liberty (suicide): passing is the one legal move.
    full = jnp.array([1, 1, 1, 1, 0, 1, 1, 1, 1], jnp.int8)
    s = start(full, BLACK)
    np.testing.assert_array_equal(np.asarray(s.legal), [False] * n + [True])
    assert not bool(start(full, WHITE).legal[n])  # white can capture at the centre
    with pytest.raises(ValueError, match="pass_after"):
        games.make("go", size=3, pass_after=-1)


# ======================================================================== illegal actions
@pytest.mark.parametrize("action", ["C3", "C4", -1, 26, 1000],
                         ids=["opponent_stone", "own_stone", "minus_one", "num_actions", "far"])
def test_illegal_action_loses_without_corrupting(go5, action):
    s = go5.setup(CAPTURES["centre"][0], BLACK)
    a = go5.point(action) if isinstance(action, str) else action
    if 0 <= a < GO5.num_points:
        assert not bool(s.legal[a])
    after = assert_illegal_step_loses(go5, s, a)
    assert_board_facts(after, "after an illegal action")


def test_illegal_action_by_white_gives_black_the_win(go5):
    s = go5.play(go5.empty(), "C3")
    after = assert_illegal_step_loses(go5, s, go5.point("C3"))
    np.testing.assert_array_equal(go5.returns(after), [1, -1])


def test_stepping_a_terminal_state_changes_nothing(go5):
    n = GO5.num_points
    over = go5.step(go5.step(go5.play(go5.empty(), "C3"), n), n)
    assert bool(over.terminal)
    for a in (0, go5.point("C3"), n, -5):
        assert_same_state(go5.step(over, a), over, f"step {a} on a finished game")
    lost = go5.step(go5.empty(), go5.point("C3") + 100)
    for a in (0, n):
        assert_same_state(go5.step(lost, a), lost, f"step {a} after an illegal move")


# ================================================================================== setup
def test_init_from_board(go5):
    position = """
        . X O . .
        X O . O .
        . X O . .
        . . . X X
        O . . X ."""
    board = boards.parse(position)
    s = host(go5.setup(position, WHITE))
    np.testing.assert_array_equal(s.board, board)
    assert s.to_play == WHITE and not s.terminal and s.move_count == 0 and s.passes == 0
    assert s.history_len == 1 and s.ko == -1 and s.last_move == -1 and s.loser == 0
    assert_board_facts(s, "setup")
    np.testing.assert_array_equal(s.legal, ref_legal(board, WHITE, False, {board.tobytes()}))
    assert s.legal[go5.point("A5")]  # white captures B5
    assert s.atari_lib[go5.point("B5")] == go5.point("A5") and s.atari_lib[go5.point("B4")] == go5.point("C4")
    black = host(go5.setup(position, BLACK))
    assert black.to_play == BLACK
    np.testing.assert_array_equal(black.legal, ref_legal(board, BLACK, False, {board.tobytes()}))


def test_validate_setup():
    GO5.validate_setup(boards.parse(SEKI))  # every chain has a liberty
    dead = boards.parse("""
        O X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .""")
    with pytest.raises(ValueError, match="A5"):
        GO5.validate_setup(dead)
    with pytest.raises(ValueError):
        GO5.validate_setup(np.zeros(24, np.int8))
    with pytest.raises(ValueError):
        GO5.validate_setup(np.full(25, 2, np.int8))


# GTP v2 section 4.1.1 (and GNU Go 3.8's fixed_handicap) on 19x19.
GTP_HANDICAP_19 = {
    2: "D4 Q16",
    3: "D4 Q16 D16",
    4: "D4 Q16 D16 Q4",
    5: "D4 Q16 D16 Q4 K10",
    6: "D4 Q16 D16 Q4 D10 Q10",
    7: "D4 Q16 D16 Q4 D10 Q10 K10",
    8: "D4 Q16 D16 Q4 D10 Q10 K4 K16",
    9: "D4 Q16 D16 Q4 D10 Q10 K4 K16 K10",
}


@pytest.mark.parametrize("stones", sorted(GTP_HANDICAP_19))
def test_handicap_points_19x19(stones):
    got = games.make("go", size=19).handicap_points(stones)
    assert len(got) == stones
    assert set(got) == set(boards.points(GTP_HANDICAP_19[stones], 19)), vertices(got, 19)


def test_handicap_points_small_boards_and_errors():
    assert set(games.make("go", size=9).handicap_points(4)) == set(boards.points("C3 G7 C7 G3", 9))
    assert set(games.make("go", size=7).handicap_points(4)) == set(boards.points("C3 E5 C5 E3", 7))
    for size, stones in [(19, 1), (19, 10), (19, 0), (9, 10), (8, 5), (10, 9), (7, 5), (6, 2), (5, 2)]:
        with pytest.raises(ValueError):
            games.make("go", size=size).handicap_points(stones)


# ========================================================================== games.make
def test_make_rejects_unknown_names_and_sizes():
    with pytest.raises(ValueError, match=r"known games: .*go"):
        games.make("chess")
    for size in (1, 20, 0):
        with pytest.raises(ValueError, match=r"2 to 19"):
            games.make("go", size=size)
    with pytest.raises(ValueError):
        games.make("go", board_size=9)
    g = games.make("go", size=9, komi=7.5)
    assert g == games.make("go", size=9, komi=7.5) and hash(g) == hash(games.make("go", size=9, komi=7.5))
    assert g.num_actions == 82 and g.pass_action == 81


# ===================================================================== jit / no-jit variants
class TestStepVariants(chex.TestCase):
    """The same step, jitted and not, on a capture, a ko and a finished game."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_capture_and_ko(self):
        step = self.variant(GO5_SIMPLE.step)
        s0 = engine(GO5_SIMPLE).setup(DOUBLE_KO, BLACK)
        c5, b5 = grid.from_vertex("C5", 5), grid.from_vertex("B5", 5)
        s1 = step(s0, jnp.int32(c5))
        chex.assert_trees_all_equal_shapes_and_dtypes(s0, s1)
        self.assertEqual(int(s1.board[b5]), 0)
        self.assertEqual(int(s1.board[c5]), BLACK)
        self.assertFalse(bool(s1.legal[b5]))
        np.testing.assert_array_equal(np.asarray(s1.hash), ref_hash(np.asarray(s1.board)))
        s2 = step(s1, jnp.int32(b5))  # the masked recapture loses
        self.assertTrue(bool(s2.terminal))
        self.assertEqual(int(s2.loser), WHITE)
        np.testing.assert_array_equal(np.asarray(s2.board), np.asarray(s1.board))

    @chex.variants(with_jit=True, without_jit=True)
    def test_finished_game_is_absorbing(self):
        step = self.variant(GO5_SIMPLE.step)
        n = GO5_SIMPLE.num_points
        s = engine(GO5_SIMPLE).setup(SEKI, BLACK)
        s = step(step(s, jnp.int32(n)), jnp.int32(n))
        self.assertTrue(bool(s.terminal))
        np.testing.assert_array_equal(np.asarray(GO5_SIMPLE.returns(s)), [0, 0])
        chex.assert_trees_all_equal(step(s, jnp.int32(grid.from_vertex("C3", 5))), s)


# =================================================================================== vmap
def test_vmap_matches_per_game_loop(go7):
    batch, steps, n = 6, 30, GO7.num_points
    vstep = jax.jit(jax.vmap(GO7.step))
    rng = np.random.default_rng(11)
    singles = [go7.empty() for _ in range(batch)]
    batched = jax.tree.map(lambda *xs: jnp.stack(xs), *singles)
    for t in range(steps):
        masks = np.asarray(batched.legal)
        actions = []
        for b in range(batch):
            pts = np.flatnonzero(masks[b, :n])
            a = int(rng.choice(pts)) if len(pts) and rng.random() > 0.05 else n
            if b == 0 and t == 20:
                a = int(np.flatnonzero(np.asarray(batched.board[0]) != 0)[0])  # an illegal move in one game
            actions.append(a)
        batched = vstep(batched, jnp.asarray(actions, jnp.int32))
        singles = [go7.step(s, a) for s, a in zip(singles, actions)]
        got = host(batched)
        for b in range(batch):
            assert_same_state(jax.tree.map(lambda x: x[b], got), singles[b], f"game {b} after {t + 1} moves")
    assert bool(batched.terminal[0]) and int(batched.loser[0]) != 0
    assert not np.asarray(batched.terminal[1:]).all()


# ======================================================================= property tests
PROPERTY_GAMES = [GO5, GO5_SIMPLE, GO5_SUICIDE]


@pytest.mark.parametrize("game", PROPERTY_GAMES, ids=["superko", "simple_ko", "suicide"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    setup=st.one_of(st.none(), st.lists(st.sampled_from([-1, 0, 0, 1]), min_size=25, max_size=25)),
    first=st.sampled_from([BLACK, WHITE]),
    choices=st.lists(st.integers(0, 2**16), min_size=30, max_size=80),
)
def test_random_play_matches_reference(game, setup, first, choices):
    eng = engine(game)
    n = game.num_points
    board0 = remove_dead(setup) if setup is not None else np.zeros(n, np.int8)
    state = eng.setup(board0, first if setup is not None else BLACK)
    s = host(state)
    seen = {board0.tobytes()}  # every position so far (positional superko)
    hashes = {tuple(ref_hash(board0).tolist())}
    before_last_play = None  # board before the opponent's last move, if it was a play (simple ko)
    moves = []

    def check_position(s):
        context = f"after {moves} from\n{boards.show(board0)}"
        assert_board_facts(s, context)
        board = np.asarray(s.board)
        assert not (s.legal[:n] & (board != 0)).any(), f"mask allows an occupied point {context}"
        if s.terminal:
            assert not s.legal.any()
            return
        forbidden = seen if game.superko else ({before_last_play.tobytes()} if before_last_play is not None else set())
        expected = ref_legal(board, int(s.to_play), game.allow_suicide, forbidden)
        diff = np.flatnonzero(expected != s.legal)
        assert diff.size == 0, (
            f"legal mask differs at {vertices(diff, 5)} (reference says {expected[diff]}), "
            f"{'black' if s.to_play == BLACK else 'white'} to play {context}\n{boards.show(board)}")
        if game.superko:
            assert s.history_len == len(hashes)
            assert {tuple(h) for h in s.history[: s.history_len].tolist()} == hashes

    check_position(s)
    for r in choices:
        if s.terminal:
            break
        pts = np.flatnonzero(s.legal[:n])
        a = n if (r % 37 == 36 or len(pts) == 0) else int(pts[r % len(pts)])
        moves.append(grid.to_vertex(a, 5))
        state = eng.step(state, a)
        new = host(state)
        mover = int(s.to_play)
        if a == n:
            np.testing.assert_array_equal(new.board, s.board)
            assert new.passes == s.passes + 1
        else:
            expected, captured, suicided = ref_play(s.board, a, mover)
            np.testing.assert_array_equal(new.board, expected, err_msg=f"after {moves} from\n{boards.show(board0)}")
            assert not suicided or game.allow_suicide
            # Stone counts move only by the placed stone, the captured and the suicided stones.
            assert (new.board == mover).sum() == (s.board == mover).sum() + 1 - len(suicided)
            assert (new.board == -mover).sum() == (s.board == -mover).sum() - len(captured)
            assert new.passes == 0
        assert new.to_play == -mover and new.move_count == s.move_count + 1 and new.loser == 0
        assert bool(new.terminal) == (new.passes >= 2 or new.move_count >= game.max_moves)
        np.testing.assert_array_equal(eng.area(new), ref_area(new.board))
        want = ref_returns(new.board, game.komi) if new.terminal else np.zeros(2, np.float32)
        np.testing.assert_array_equal(eng.returns(new), want)
        if a < n:
            before_last_play = np.asarray(s.board)
            seen.add(np.asarray(new.board).tobytes())
            hashes.add(tuple(ref_hash(new.board).tolist()))
        else:
            before_last_play = None
        s = new
        check_position(s)
