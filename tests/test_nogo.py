"""NoGo: differential test against GNU Go 3.8 and hand-made positions.

The oracle for NoGo legality is GNU Go (area rules, positional superko, suicide forbidden): a
point is legal in NoGo exactly when GNU Go lists it in ``all_legal`` and playing it there
captures nothing (``play``, then GNU Go's ``captures`` count, then ``undo``). Our random NoGo
games are replayed in GNU Go; before every move the legal points must be exactly those, after
every move the stones must agree, and the game must end exactly when that set is empty, lost
by the player to move.
"""

from __future__ import annotations

import collections
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import boards
import gamegen
from alphago_jax import games
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.gtp_client import gnugo_rules_engine

PLAN = [(4, 60), (5, 80), (7, 40), (9, 20)]  # (size, games): 200 games
COLOUR = {BLACK: "black", WHITE: "white"}


# ----------------------------------------------------------------------------- engines
Engine = boards.JitGame


@functools.lru_cache(maxsize=None)
def engine(size):
    return Engine(games.make("nogo", size=size))


@pytest.fixture(scope="module")
def nogo5():
    return engine(5)


# ---------------------------------------------------------------- random games, batched
@functools.partial(jax.jit, static_argnums=(0, 2))
def _random_games(game, key, batch):
    n = game.num_points

    def one(key):
        def body(s, key):
            a = gamegen.biased_action(key, s, n, capture_p=0.0, pass_p=0.0)
            s2 = game.step(s, a)
            return s2, (a, s.legal, s2.board, s2.terminal, s2.loser, s.terminal)

        return jax.lax.scan(body, game.init(), jax.random.split(key, n))[1]

    return jax.vmap(one)(jax.random.split(key, batch))


def random_games(game, seed, batch):
    a, legal, board, term, loser, was_term = map(np.asarray, _random_games(game, jax.random.PRNGKey(seed), batch))
    out = []
    for b in range(batch):
        t = int(np.sum(~was_term[b]))
        out.append(dict(actions=a[b, :t], legal=legal[b, :t], boards=board[b, :t], terminal=term[b, :t], loser=loser[b, :t]))
    return out


def gnugo_nogo_legal(gnugo, colour: str, size: int) -> tuple[set[int], int]:
    """(NoGo-legal points by GNU Go, number of Go-legal points that capture)."""
    go_legal = gnugo.send(f"all_legal {colour}").split()
    commands = []
    for v in go_legal:
        commands += [f"play {colour} {v}", f"captures {colour}", "undo"]
    replies = gnugo.send_many(commands)
    counts = [int(r) for r in replies[1::3]]
    legal = {grid.from_vertex(v, size) for v, c in zip(go_legal, counts) if c == 0}
    return legal, sum(c > 0 for c in counts)


def _check_game(gnugo, size, record):
    """Replay one game in GNU Go; return (positions, capturing points excluded)."""
    n = size * size
    gnugo.send_many([f"boardsize {size}", "clear_board"])
    colour, excluded = BLACK, 0
    for t, action in enumerate(record["actions"]):
        theirs, captures = gnugo_nogo_legal(gnugo, COLOUR[colour], size)
        excluded += captures
        ours = set(np.flatnonzero(record["legal"][t, :n]).tolist())
        assert not record["legal"][t, n], "pass is legal"
        assert ours == theirs, f"move {t + 1}: legal points differ at {sorted(grid.to_vertex(p, size) for p in ours ^ theirs)}"
        gnugo.send(f"play {COLOUR[colour]} {grid.to_vertex(int(action), size)}")
        board = record["boards"][t]
        black = {grid.from_vertex(v, size) for v in gnugo.send("list_stones black").split()}
        white = {grid.from_vertex(v, size) for v in gnugo.send("list_stones white").split()}
        assert black == set(np.flatnonzero(board == BLACK)) and white == set(np.flatnonzero(board == WHITE)), f"stones differ after move {t + 1}"
        colour = -colour
        if record["terminal"][t]:
            assert gnugo_nogo_legal(gnugo, COLOUR[colour], size)[0] == set(), f"our game ended after move {t + 1} but GNU Go has NoGo moves"
            assert record["loser"][t] == colour, "the player without a move did not lose"
            return t + 2, excluded
    raise AssertionError("the game did not end")


@pytest.mark.slow
def test_legality_is_gnugo_legal_and_captures_nothing(gnugo_path):
    games_played = positions = excluded = 0
    winners = collections.Counter()
    with gnugo_rules_engine(gnugo_path) as gnugo:
        for size, batch in PLAN:
            for record in random_games(games.make("nogo", size=size), seed=size, batch=batch):
                p, e = _check_game(gnugo, size, record)
                positions, excluded, games_played = positions + p, excluded + e, games_played + 1
                winners[-int(record["loser"][-1])] += 1
    print(f"{games_played} games, {positions} positions, {excluded} Go-legal capturing points excluded, "
          f"black/white wins {winners[BLACK]}/{winners[WHITE]}")
    assert games_played >= 200 and excluded > 0 and winners[BLACK] > 0 and winners[WHITE] > 0


# ----------------------------------------------------------------- hand-made positions
NET = """
    . X . X .
    X . X . X
    . X . X .
    X . X . X
    . X . X .
"""


def test_player_without_a_legal_move_loses(nogo5):
    # Every empty point is suicide for white (and captures nothing): white cannot move.
    s = nogo5.setup(NET, WHITE)
    assert bool(s.terminal) and int(s.loser) == WHITE and not np.any(np.asarray(s.legal))
    np.testing.assert_array_equal(nogo5.returns(s), [1.0, -1.0])
    # Black, to move in the same position, may fill any of its own eyes.
    s = nogo5.setup(NET, BLACK)
    assert not bool(s.terminal) and len(nogo5.legal_vertices(s)) == 13
    # Reached by a move: black completes the net, white is stuck.
    board = boards.parse(NET)
    board[nogo5.point("B1")] = 0
    s = nogo5.setup(board, BLACK)
    assert not bool(s.terminal)
    s = nogo5.step(s, nogo5.point("B1"))
    assert bool(s.terminal) and int(s.loser) == WHITE


LOCKED = """
    . X O X .
    O O O X X
    X X X . X
    . X . X .
    X . X . X
"""


def test_stuck_because_the_only_go_move_captures(nogo5):
    # A5 is the only liberty of both the black stone B5 and the white chain A4-B4-C4-C5: in Go
    # either player may capture there, in NoGo neither may. Every other empty point is a black
    # eye, suicide for white.
    s = nogo5.setup(LOCKED, WHITE)
    assert nogo5.legal_vertices(s) == set()
    assert bool(s.terminal) and int(s.loser) == WHITE
    np.testing.assert_array_equal(nogo5.returns(s), [1.0, -1.0])
    go = games.make("go", size=5)
    go_state = jax.jit(go.init_from_board)(jnp.asarray(boards.parse(LOCKED)), jnp.int8(WHITE))
    assert bool(go_state.legal[nogo5.point("A5")])  # Go allows the capture
    s = nogo5.setup(LOCKED, BLACK)
    assert nogo5.legal_vertices(s) == {"E5", "D3", "A2", "C2", "E2", "B1", "D1"}


def test_capture_is_illegal_but_self_atari_is_legal(nogo5):
    s = nogo5.setup("""
        . X O . .
        . O X . .
        . . . . .
        . . . . .
        . . . . .
    """)
    # D5 would capture the white stone on C5: legal in Go, illegal in NoGo.
    assert "D5" not in nogo5.legal_vertices(s)
    lost = nogo5.step(s, nogo5.point("D5"))
    assert bool(lost.terminal) and int(lost.loser) == BLACK
    np.testing.assert_array_equal(nogo5.returns(lost), [-1.0, 1.0])
    # A5 joins B5 and leaves the pair one liberty (A4), capturing nothing: legal.
    assert "A5" in nogo5.legal_vertices(s)
    s = nogo5.step(s, nogo5.point("A5"))
    assert not bool(s.terminal)
    # White may not take the pair at A4; D5 captures nothing and is legal.
    assert "A4" not in nogo5.legal_vertices(s) and "D5" in nogo5.legal_vertices(s)
    lost = nogo5.step(s, nogo5.n)  # pass is illegal
    assert bool(lost.terminal) and int(lost.loser) == WHITE
    chex.assert_trees_all_equal(nogo5.step(lost, 0), lost)  # ignored once over


# -------------------------------------------------------------------- contract, input
def test_contract_and_move_codes(nogo5):
    game = nogo5.game
    assert game.num_actions == 26 and game.num_move_codes == 52 and game.name == "nogo"
    s = jax.jit(game.init)()
    chex.assert_shape([s.board, s.legal], [(25,), (26,)])
    np.testing.assert_array_equal(np.asarray(s.legal), np.arange(26) < 25)
    codes = jax.jit(jax.vmap(game.move_code, in_axes=(None, 0)))
    a = jnp.arange(26, dtype=jnp.int32)
    np.testing.assert_array_equal(np.asarray(codes(s, a)), np.arange(26))
    np.testing.assert_array_equal(np.asarray(codes(nogo5.step(s, 12), a)), 26 + np.arange(26))


def test_bad_configuration():
    for size in (0, 1, 20, None):
        with pytest.raises(ValueError, match="NoGo board size must be an integer from 2 to 19"):
            games.make("nogo", size=size)
    with pytest.raises(ValueError, match="known games: atari_go, go, hex, nogo"):
        games.make("no_go", size=9)
    with pytest.raises(ValueError, match="'nogo' takes: size"):
        games.make("nogo", size=9, superko=True)
