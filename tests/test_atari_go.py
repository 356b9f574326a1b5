"""AtariGo: differential test against GNU Go 3.8 and hand-made positions.

GNU Go plays ordinary Go (area rules, positional superko, suicide forbidden); AtariGo is Go up
to the first capture, without pass. So, replaying our random AtariGo games in GNU Go: before
each move our legal points must be GNU Go's ``all_legal`` points; after each move the stones
must agree (``list_stones``), and our game must end exactly at the first move after which
GNU Go counts a capture (``captures``), won by the capturer, or when GNU Go has no legal point
for the player to move, lost by that player.
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

# (size, games): 400 games; half of them take an available capture with probability 0.3 (the
# games end in many different ways), the other half play uniformly (longer games). On 4x4 a
# player is often left without a legal move.
PLAN = [(4, 100), (5, 150), (7, 90), (9, 60)]
COLOUR = {BLACK: "black", WHITE: "white"}


# ----------------------------------------------------------------------------- engines
Engine = boards.JitGame


@functools.lru_cache(maxsize=None)
def engine(size):
    return Engine(games.make("atari_go", size=size))


@pytest.fixture(scope="module")
def atari5():
    return engine(5)


# ---------------------------------------------------------------- random games, batched
@functools.partial(jax.jit, static_argnums=(0, 2))
def _random_games(game, key, batch):
    n = game.num_points

    def one(key, capture_p):
        def body(s, key):
            a = gamegen.biased_action(key, s, n, capture_p=capture_p, pass_p=0.0)
            s2 = game.step(s, a)
            return s2, (a, s.legal, s2.board, s2.terminal, s2.loser, s.terminal)

        return jax.lax.scan(body, game.init(), jax.random.split(key, n))[1]

    capture_p = jnp.where(jnp.arange(batch) % 2 == 0, 0.3, 0.0)
    return jax.vmap(one)(jax.random.split(key, batch), capture_p)


def random_games(game, seed, batch):
    a, legal, board, term, loser, was_term = map(np.asarray, _random_games(game, jax.random.PRNGKey(seed), batch))
    out = []
    for b in range(batch):
        t = int(np.sum(~was_term[b]))
        out.append(dict(actions=a[b, :t], legal=legal[b, :t], boards=board[b, :t], terminal=term[b, :t], loser=loser[b, :t]))
    return out


def _stones(gnugo, colour, size):
    return {grid.from_vertex(v, size) for v in gnugo.send(f"list_stones {colour}").split()}


def _check_game(gnugo, size, record):
    """Replay one game in GNU Go; return how it ended: 'capture', 'capture of several stones' or 'no move'."""
    n = size * size
    gnugo.send_many([f"boardsize {size}", "clear_board"])
    colour = BLACK
    for t, action in enumerate(record["actions"]):
        theirs = {grid.from_vertex(v, size) for v in gnugo.send(f"all_legal {COLOUR[colour]}").split()}
        ours = set(np.flatnonzero(record["legal"][t, :n]).tolist())
        assert not record["legal"][t, n], "pass is legal"
        assert ours == theirs, f"move {t + 1}: legal points differ at {sorted(grid.to_vertex(p, size) for p in ours ^ theirs)}"
        gnugo.send(f"play {COLOUR[colour]} {grid.to_vertex(int(action), size)}")
        captured = int(gnugo.send(f"captures {COLOUR[colour]}"))
        board = record["boards"][t]
        assert _stones(gnugo, "black", size) == set(np.flatnonzero(board == BLACK)), f"black stones differ after move {t + 1}"
        assert _stones(gnugo, "white", size) == set(np.flatnonzero(board == WHITE)), f"white stones differ after move {t + 1}"
        colour = -colour
        if captured:
            assert record["terminal"][t], f"GNU Go captured {captured} stones at move {t + 1}, our game went on"
            assert record["loser"][t] == colour, "the capturer did not win"
            assert t == len(record["actions"]) - 1
            return "capture" if captured == 1 else "capture of several stones"
        if record["terminal"][t]:
            assert gnugo.send(f"all_legal {COLOUR[colour]}") == "", f"our game ended after move {t + 1} with no capture"
            assert record["loser"][t] == colour, "the player without a move did not lose"
            return "no move"
    raise AssertionError("the game did not end")


@pytest.mark.slow
def test_random_games_end_at_gnugos_first_capture(gnugo_path):
    endings = collections.Counter()
    moves = 0
    with gnugo_rules_engine(gnugo_path) as gnugo:
        for size, batch in PLAN:
            for record in random_games(games.make("atari_go", size=size), seed=size, batch=batch):
                endings[_check_game(gnugo, size, record)] += 1
                moves += len(record["actions"])
    print(f"{sum(endings.values())} games, {moves} moves, endings {dict(endings)}")
    assert sum(endings.values()) >= 200 and min(endings.values()) > 0 and len(endings) == 3


# ----------------------------------------------------------------- hand-made positions
def test_capture_of_three_groups_at_once_wins(atari5):
    s = atari5.setup("""
        X O . O X
        . X O X .
        . . X . .
        . . . . .
        . . . . .
    """)
    s = atari5.step(s, atari5.point("C5"))
    assert bool(s.terminal) and int(s.loser) == WHITE
    np.testing.assert_array_equal(atari5.returns(s), [1.0, -1.0])
    expected = boards.parse("""
        X . X . X
        . X . X .
        . . X . .
        . . . . .
        . . . . .
    """)
    np.testing.assert_array_equal(np.asarray(s.board), expected)


def test_capture_of_two_groups_of_several_stones_by_white(atari5):
    # C5 is the only liberty of both black pairs; white's stone there has none of its own.
    s = atari5.setup("""
        X X . X X
        O O X O O
        . . . . .
        . . . . .
        . . . . .
    """, WHITE)
    s = atari5.step(s, atari5.point("C5"))
    assert bool(s.terminal) and int(s.loser) == BLACK
    np.testing.assert_array_equal(atari5.returns(s), [-1.0, 1.0])
    expected = boards.parse("""
        . . O . .
        O O X O O
        . . . . .
        . . . . .
        . . . . .
    """)
    np.testing.assert_array_equal(np.asarray(s.board), expected)


def test_capturing_move_without_liberties_of_its_own_wins(atari5):
    s = atari5.setup("""
        . O X . .
        O X . . .
        . . . . .
        . . . . .
        . . . . .
    """)
    a = atari5.point("A5")
    assert bool(s.legal[a])
    s = atari5.step(s, a)
    assert bool(s.terminal) and int(s.loser) == WHITE
    assert int(s.board[atari5.point("B5")]) == 0 and int(s.board[atari5.point("A4")]) == WHITE


def test_suicide_and_pass_are_illegal(atari5):
    s = atari5.setup("""
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
    """, WHITE)
    assert not bool(s.legal[atari5.point("A5")]) and not bool(s.legal[atari5.n])
    assert int(np.sum(np.asarray(s.legal))) == 25 - 2 - 1  # two stones, one suicide point
    lost = atari5.step(s, atari5.point("A5"))
    assert bool(lost.terminal) and int(lost.loser) == WHITE
    lost = atari5.step(s, atari5.n)  # pass
    assert bool(lost.terminal) and int(lost.loser) == WHITE
    np.testing.assert_array_equal(atari5.returns(lost), [1.0, -1.0])
    chex.assert_trees_all_equal(atari5.step(lost, 3), lost)  # ignored once over


def test_player_without_a_legal_move_loses(atari5):
    # Every empty point is suicide for white and no black stone is in atari.
    position = """
        . X . X .
        X . X . X
        . X . X .
        X . X . X
        . X . X .
    """
    s = atari5.setup(position, WHITE)
    assert bool(s.terminal) and int(s.loser) == WHITE and not np.any(np.asarray(s.legal))
    board = boards.parse(position)
    board[atari5.point("D1")] = 0
    s = atari5.setup(board, BLACK)
    assert not bool(s.terminal)
    s = atari5.step(s, atari5.point("D1"))  # black completes the net: white is stuck
    assert bool(s.terminal) and int(s.loser) == WHITE
    np.testing.assert_array_equal(atari5.returns(s), [1.0, -1.0])


def test_no_position_repeats_and_returns_are_zero_until_the_end(atari5):
    s = atari5.setup(np.zeros(25, np.int8))
    for v in "C3 D3 C4 D4".split():
        s = atari5.step(s, atari5.point(v))
        assert not bool(s.terminal)
        np.testing.assert_array_equal(atari5.returns(s), [0.0, 0.0])


# -------------------------------------------------------------------- contract, input
def test_contract_and_move_codes(atari5):
    game = atari5.game
    assert game.num_actions == 26 and game.num_move_codes == 52 and game.name == "atari_go"
    s = jax.jit(game.init)()
    chex.assert_shape([s.board, s.legal], [(25,), (26,)])
    chex.assert_type([s.board, s.to_play], [jnp.int8, jnp.int8])
    codes = jax.jit(jax.vmap(game.move_code, in_axes=(None, 0)))
    a = jnp.arange(26, dtype=jnp.int32)
    black, white = np.asarray(codes(s, a)), np.asarray(codes(atari5.step(s, 12), a))
    np.testing.assert_array_equal(black, np.arange(26))
    np.testing.assert_array_equal(white, 26 + np.arange(26))


def test_bad_configuration():
    for size in (1, 20, 9.0, "9"):
        with pytest.raises(ValueError, match="AtariGo board size must be an integer from 2 to 19"):
            games.make("atari_go", size=size)
    with pytest.raises(ValueError, match="known games: atari_go, go, hex, nogo"):
        games.make("atarigo", size=9)
    with pytest.raises(ValueError, match="'atari_go' takes: size"):
        games.make("atari_go", size=9, komi=7.5)
