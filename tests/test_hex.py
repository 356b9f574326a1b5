"""Hex: differential test against OpenSpiel's ``hex``, hand-made positions and properties.

Conventions of the two implementations, mapped explicitly by ``to_openspiel``,
``OPENSPIEL_PLAYER`` and ``from_openspiel_board`` below (and checked by ``test_convention_mapping``):

- Cells. Ours: action ``row * size + col``, row 0 the top edge, each row drawn half a cell right
  of the one above, so ``(r, c)`` touches ``(r - 1, c + 1)`` and ``(r + 1, c - 1)``. OpenSpiel:
  action ``row * num_cols + col`` in the same picture (its ``str(state)`` prints row 0 first and
  indents each row one more space). Same index for the same cell.
- Colours. Ours: black (+1) moves first and joins the top and bottom rows. OpenSpiel: player 0
  (``x``) moves first and joins the top and bottom rows (its "north" and "south"). So black is
  player 0, white (-1, left and right columns) is player 1, and OpenSpiel's ``returns()``
  ``[p0, p1]`` is our ``(black, white)``.
- Swap. Ours: action ``size * size``; OpenSpiel with ``swap=true``: action ``num_cells``. Both
  replace black's first stone at ``(r, c)`` by a white stone at ``(c, r)``, black to move.

Reference rules for the property tests are plain Python breadth-first searches over an
explicitly written neighbour list; they share nothing with ``hex.py``.
"""

from __future__ import annotations

import collections
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import boards
from alphago_jax import games
from alphago_jax.games.base import BLACK, WHITE

# (size, swap, games) of the OpenSpiel comparison: 1,200 games, a fifth of them with swap.
OPENSPIEL_PLAN = [(5, False, 300), (7, False, 250), (9, False, 200), (11, False, 200), (5, True, 150), (9, True, 100)]
SWAP_P = 0.5  # probability that white swaps when it may, in the generated swap games


# ------------------------------------------------------------------------ conventions
def to_openspiel(action: int, size: int) -> int:
    """OpenSpiel action of one of our actions: the cell (row, col), or the swap."""
    if action == size * size:
        return size * size  # swap
    row, col = divmod(int(action), size)
    return row * size + col  # OpenSpiel: row * num_cols + col, same rhombus drawing


OPENSPIEL_PLAYER = {BLACK: 0, WHITE: 1}  # black ("x", top-bottom) is player 0
OPENSPIEL_STONE = {"x": BLACK, "o": WHITE, ".": 0}


def from_openspiel_board(text: str, size: int) -> np.ndarray:
    """int8[N]: our board from OpenSpiel's ``str(state)`` (rows top first, ``x`` black)."""
    cells = [OPENSPIEL_STONE[ch] for ch in text if ch in OPENSPIEL_STONE]
    assert len(cells) == size * size, text
    return np.array(cells, np.int8)


@pytest.fixture(scope="module")
def pyspiel():
    return pytest.importorskip("pyspiel", reason="open_spiel is not installed (pip install open_spiel)")


# ------------------------------------------------------------------------- reference
def ref_neighbours(size, r, c):
    for dr, dc in ((0, -1), (0, 1), (-1, 0), (-1, 1), (1, -1), (1, 0)):
        if 0 <= r + dr < size and 0 <= c + dc < size:
            yield r + dr, c + dc


def ref_connects(board, size, colour) -> bool:
    """Whether ``colour`` joins its two edges (black: rows 0 and size-1; white: columns)."""
    b = np.asarray(board).reshape(size, size)
    start = [(0, c) for c in range(size)] if colour == BLACK else [(r, 0) for r in range(size)]
    todo = collections.deque(p for p in start if b[p] == colour)
    seen = set(todo)
    while todo:
        r, c = todo.popleft()
        if (r if colour == BLACK else c) == size - 1:
            return True
        for q in ref_neighbours(size, r, c):
            if q not in seen and b[q] == colour:
                seen.add(q)
                todo.append(q)
    return False


# --------------------------------------------------------------------------- engines
Engine = boards.JitGame


@functools.lru_cache(maxsize=None)
def engine(size, swap=False):
    return Engine(games.make("hex", size=size, swap=swap))


@pytest.fixture(scope="module")
def hex5():
    return engine(5)


@pytest.fixture(scope="module")
def hex5_swap():
    return engine(5, swap=True)


# ---------------------------------------------------------------- random games, batched
@functools.partial(jax.jit, static_argnums=(0, 2))
def _random_games(game, key, batch):
    n = game.num_points

    def one(key):
        def body(s, key):
            k1, k2 = jax.random.split(key)
            mask = game.legal_action_mask(s)
            a = jax.random.categorical(k2, jnp.where(mask[:n], 0.0, -jnp.inf)).astype(jnp.int32)
            if game.swap:
                a = jnp.where(mask[n] & (jax.random.uniform(k1) < SWAP_P), n, a)
            s2 = game.step(s, a)
            return s2, (a, s.to_play, mask, s2.board, s2.terminal, s.terminal)

        final, out = jax.lax.scan(body, game.init(), jax.random.split(key, game.num_actions))
        return out, game.returns(final)

    return jax.vmap(one)(jax.random.split(key, batch))


def random_games(game, seed, batch):
    """Random games (uniform over the legal cells; with swap, white swaps with SWAP_P).

    Returns a list of dicts: ``actions`` int32[T], ``to_play`` int8[T] and ``mask`` bool[T, A]
    before each move, ``boards`` int8[T, N] and ``terminal`` bool[T] after it, and the final
    ``returns`` float32[2]; T is the game's length.
    """
    out, returns = _random_games(game, jax.random.PRNGKey(seed), batch)
    a, to_play, mask, board, term, was_term = map(np.asarray, out)
    returns = np.asarray(returns)
    games_ = []
    for b in range(batch):
        t = int(np.sum(~was_term[b]))
        games_.append(dict(actions=a[b, :t], to_play=to_play[b, :t], mask=mask[b, :t], boards=board[b, :t],
                           terminal=term[b, :t], returns=returns[b]))
    return games_


def _replay_in_openspiel(pyspiel, os_game, record, size):
    state = os_game.new_initial_state()
    for t, a in enumerate(record["actions"]):
        ours_legal = sorted(to_openspiel(x, size) for x in np.flatnonzero(record["mask"][t]))
        assert sorted(state.legal_actions()) == ours_legal, f"legal actions differ before move {t + 1}"
        assert state.current_player() == OPENSPIEL_PLAYER[int(record["to_play"][t])]
        state.apply_action(to_openspiel(int(a), size))
        assert np.array_equal(from_openspiel_board(str(state), size), record["boards"][t]), f"boards differ after move {t + 1}"
        assert state.is_terminal() == bool(record["terminal"][t]), f"terminal differs after move {t + 1}"
    assert state.is_terminal(), "our game ended on a full board without a winner"
    return state


@pytest.mark.slow
def test_random_games_match_openspiel(pyspiel):
    count = moves = swaps = 0
    wins = collections.Counter()
    for size, swap, batch in OPENSPIEL_PLAN:
        game = games.make("hex", size=size, swap=swap)
        os_game = pyspiel.load_game("hex", {"board_size": size, "swap": swap})
        records = random_games(game, seed=size + 100 * swap, batch=batch)
        for record in records:
            state = _replay_in_openspiel(pyspiel, os_game, record, size)
            ours = record["returns"]
            np.testing.assert_array_equal(ours, np.asarray(state.returns(), np.float32))  # [p0, p1] = (black, white)
            wins[int(ours[0])] += 1
            count += 1
            moves += len(record["actions"])
            swaps += int(np.any(record["actions"] == size * size))
    print(f"{count} games, {moves} moves, {swaps} swaps, black/white wins {wins[1]}/{wins[-1]}")
    assert count >= 1000 and swaps >= 50 and wins[1] > 0 and wins[-1] > 0


def test_convention_mapping(pyspiel, hex5):
    """Black's top-bottom chain down column 0 wins for OpenSpiel's player 0, and white's
    left-right chain along row 0 for player 1: the colour and cell maps are right."""
    size = 5
    os_game = pyspiel.load_game("hex", {"board_size": size})
    for chain, other, winner in [([0, 5, 10, 15, 20], [1, 6, 11, 16], BLACK), ([5, 6, 7, 8, 9], [0, 1, 2, 3, 4], WHITE)]:
        first, second = (chain, other) if winner == BLACK else (other, chain)
        order = [x for pair in zip(first, second) for x in pair] + first[len(second):]
        state, s = os_game.new_initial_state(), hex5.game.init()
        for a in order:
            state.apply_action(to_openspiel(a, size))
            s = hex5.step(s, a)
        assert state.is_terminal() and bool(s.terminal)
        assert state.returns()[OPENSPIEL_PLAYER[winner]] == 1.0
        assert hex5.returns(s)[0 if winner == BLACK else 1] == 1.0


# ----------------------------------------------------------------- hand-made positions
# Each diagram holds one minimal winning chain of one colour (and maybe loser's stones): the
# chain wins; without any one of its stones it does not, and playing that stone back wins.
WINS = {
    "black down the left column (white's edge), acute corner to obtuse corner": ("""
        X . . . .
         X . . . .
          X . . . .
           X . . . .
            X . . . .
    """, BLACK),
    "black down the right column, obtuse corner to acute corner": ("""
        . . . . X
         . . . . X
          . . . . X
           . . . . X
            . . . . X
    """, BLACK),
    "white along the top row (black's edge), through the acute corner": ("""
        O O O O O
         . . . . .
          . . . . .
           . . . . .
            . . . . .
    """, WHITE),
    "white along the bottom row, ending in the acute corner": ("""
        . . . . .
         . . . . .
          . . . . .
           . . . . .
            O O O O O
    """, WHITE),
    "black on the short diagonal between the obtuse corners": ("""
        . . . . X
         . . . X .
          . . X . .
           . X . . .
            X . . . .
    """, BLACK),
    "white on the short diagonal between the obtuse corners": ("""
        . . . . O
         . . . O .
          . . O . .
           . O . . .
            O . . . .
    """, WHITE),
    "white leaving the left edge only at the top-left acute corner": ("""
        O O . . .
         X O O O O
          X . . . .
           . . . . .
            . . . . .
    """, WHITE),
    "black reaching the bottom edge only at the bottom-right acute corner": ("""
        . . . X .
         . . . X .
          . . . X O
           . . O X X
            . . . . X
    """, BLACK),
    "black zigzag of short-diagonal and straight steps": ("""
        . . . X .
         . . X O .
          . X O . .
           . X . . .
            X . . . .
    """, BLACK),
}


@pytest.mark.parametrize("name", sorted(WINS))
def test_winning_chains(hex5, name):
    diagram, winner = WINS[name]
    board = boards.parse(diagram)
    size = hex5.size
    assert ref_connects(board, size, winner) and not ref_connects(board, size, -winner)
    s = hex5.setup(board, -winner)
    assert bool(s.terminal) and int(s.winner) == winner, f"{name}: setup not won\n{boards.show(board)}"
    for p in np.flatnonzero(board == winner):
        without = board.copy()
        without[p] = 0
        s = hex5.setup(without, winner)
        assert not bool(s.terminal), f"{name}: already won without {p}"
        s = hex5.step(s, p)
        assert bool(s.terminal) and int(s.winner) == winner, f"{name}: the stone at {p} does not win"
        r = hex5.returns(s)
        assert r[0] == winner and r[1] == -winner


NOT_WINS = {
    "the long diagonal between the acute corners is not a chain": """
        X . . . .
         . X . . .
          . . X . .
           . . . X .
            . . . . X
    """,
    "a column broken once": """
        . . X . .
         . . X . .
          . . . . .
           . . X . .
            . . X . .
    """,
    "black touching both of white's edges but not its own": """
        . . . . .
         . . . . .
          X X X X X
           . . . . .
            . . . . .
    """,
}


@pytest.mark.parametrize("name", sorted(NOT_WINS))
def test_not_connected(hex5, name):
    board = boards.parse(NOT_WINS[name])
    assert not ref_connects(board, hex5.size, BLACK)
    s = hex5.setup(board, WHITE)
    assert not bool(s.terminal) and int(s.winner) == 0
    np.testing.assert_array_equal(hex5.returns(s), [0.0, 0.0])


def test_long_diagonal_neighbours(hex5):
    """(r, c) touches (r + 1, c - 1) but not (r + 1, c + 1); incremental play agrees."""
    s = hex5.game.init()
    # Black on the short diagonal, white on cells of the long diagonal off black's: black wins
    # on its fifth stone, not earlier.
    black = [4, 8, 12, 16, 20]
    white = [0, 6, 18, 24]
    for i, b in enumerate(black):
        s = hex5.step(s, b)
        assert bool(s.terminal) == (i == len(black) - 1)
        if i < len(white):
            s = hex5.step(s, white[i])
            assert not bool(s.terminal)
    assert int(s.winner) == BLACK


# ------------------------------------------------------------------------- properties
@functools.lru_cache(maxsize=None)
def _play_permutation(size):
    game = games.make("hex", size=size)

    @jax.jit
    def run(order):
        def body(s, a):
            s2 = game.step(s, jnp.where(s.terminal, 0, a))
            return s2, (s2.terminal, s2.winner, s2.board)

        return jax.lax.scan(body, game.init(), order)[1]

    return run


@settings(max_examples=120, deadline=None)
@given(st.sampled_from([3, 5, 6]), st.randoms(use_true_random=False))
def test_filling_the_board_always_ends_with_the_reference_winner(size, rnd):
    order = list(range(size * size))
    rnd.shuffle(order)
    term, winner, board = map(np.asarray, _play_permutation(size)(jnp.asarray(order, jnp.int32)))
    assert term[-1], "a full board without a winner"
    t = int(np.argmax(term))
    assert winner[t] == (BLACK if t % 2 == 0 else WHITE)  # the player who just moved
    assert ref_connects(board[t], size, int(winner[t])) and not ref_connects(board[t], size, -int(winner[t]))
    if t:
        assert not ref_connects(board[t - 1], size, BLACK) and not ref_connects(board[t - 1], size, WHITE)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([BLACK, WHITE]), min_size=25, max_size=25))
def test_full_board_has_exactly_one_winner(hex5, cells):
    board = np.array(cells, np.int8)
    black, white = ref_connects(board, 5, BLACK), ref_connects(board, 5, WHITE)
    assert black != white
    s = hex5.setup(board)
    assert bool(s.terminal) and int(s.winner) == (BLACK if black else WHITE)


# ------------------------------------------------------------------------- swap, input
def test_swap_mirrors_and_recolours(hex5_swap):
    e, n = hex5_swap, 25
    s = e.game.init()
    assert e.game.num_actions == n + 1 and not bool(e.mask(s)[n])
    s = e.step(s, 1 * 5 + 3)  # black at (1, 3)
    assert bool(e.mask(s)[n]) and int(s.to_play) == WHITE
    s = e.step(s, n)
    expected = np.zeros(n, np.int8)
    expected[3 * 5 + 1] = WHITE  # white at (3, 1)
    np.testing.assert_array_equal(np.asarray(s.board), expected)
    assert int(s.to_play) == BLACK and int(s.move_count) == 2 and not bool(s.terminal)
    assert not bool(e.mask(s)[n]) and bool(e.mask(s)[1 * 5 + 3]) and not bool(e.mask(s)[3 * 5 + 1])
    # The swapped stone is a white stone of white's edges: (3, 1) then (3, 0) ... joins left and right.
    for b, w in zip([0, 5, 10, 21], [15, 17, 18, 19]):
        s = e.step(s, b)
        s = e.step(s, w)
    assert bool(s.terminal) and int(s.winner) == WHITE
    s = e.step(e.game.init(), 7)
    s = e.step(s, 8)
    s = e.step(s, n)  # the swap on the third move is illegal: black loses
    assert bool(s.terminal) and int(s.winner) == WHITE


def test_illegal_actions_lose(hex5, hex5_swap):
    for e, bad in [(hex5, 25), (hex5, -1), (hex5_swap, 25), (hex5, 99)]:
        s = e.step(e.game.init(), bad)
        assert bool(s.terminal) and int(s.winner) == WHITE, bad
        np.testing.assert_array_equal(e.returns(s), [-1.0, 1.0])
    s = hex5.step(hex5.step(hex5.game.init(), 12), 12)  # occupied: white loses
    assert bool(s.terminal) and int(s.winner) == BLACK
    after = hex5.step(s, 3)  # ignored once over
    chex.assert_trees_all_equal(after, s)
    assert not np.any(np.asarray(hex5.mask(s)))


def test_contract_shapes_batching_and_move_codes(hex5_swap):
    game = hex5_swap.game
    s = jax.jit(game.init)()
    chex.assert_shape(s.board, (25,))
    chex.assert_type([s.board, s.to_play], [jnp.int8, jnp.int8])
    chex.assert_shape(hex5_swap.mask(s), (26,))
    chex.assert_shape(hex5_swap._returns(s), (2,))
    chex.assert_type(hex5_swap._returns(s), jnp.float32)
    batch = jax.vmap(lambda _: game.init())(jnp.arange(3))
    actions = jnp.array([0, 12, 24], jnp.int32)
    stepped = jax.jit(jax.vmap(game.step))(batch, actions)
    for i in range(3):
        chex.assert_trees_all_equal(jax.tree_util.tree_map(lambda x: x[i], stepped), hex5_swap.step(s, actions[i]))
    all_codes = jax.jit(jax.vmap(game.move_code, in_axes=(None, 0)))
    actions = jnp.arange(game.num_actions, dtype=jnp.int32)
    codes = np.concatenate([all_codes(s, actions), all_codes(hex5_swap.step(s, 3), actions)])
    chex.assert_type(codes, np.int32)
    assert codes.min() >= 0 and codes.max() < game.num_move_codes
    assert len(set(codes.tolist())) == game.num_move_codes  # player x action, all distinct


def test_bad_configuration():
    for size in (2, 20, 7.0, True, "7"):
        with pytest.raises(ValueError, match="3 to 19"):
            games.make("hex", size=size)
    with pytest.raises(ValueError, match="known games: atari_go, go, hex, nogo"):
        games.make("havannah", size=5)
    with pytest.raises(ValueError, match="takes: size, swap"):
        games.make("hex", size=5, komi=7.5)
    with pytest.raises(ValueError, match="True or False"):
        games.make("hex", size=5, swap="yes")
