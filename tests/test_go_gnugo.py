"""Differential test of the Go rules against GNU Go 3.8 (the real peer).

Random legal games, biased toward captures so that kos and superko cycles happen, are played
through the JAX rules; every move is replayed in GNU Go (area rules, positional superko,
suicide forbidden) and after every move the stones (``list_stones``) and the legal points
(``is_legal`` on every vertex for the player to move) must be identical.
"""

from __future__ import annotations

import numpy as np
import pytest

import gamegen
from alphago_jax.games import grid
from alphago_jax.games.go import Go
from alphago_jax.gtp_client import GTPClient, GNUGO_RULES_ARGS

# (size, games): 200 games; the larger boards give long games, the small ones many kos.
PLAN = [(5, 120), (9, 56), (13, 14), (19, 10)]


def _stones(engine, colour, size):
    reply = engine.send(f"list_stones {colour}")
    return {grid.from_vertex(v, size) for v in reply.split()}


def _check_game(engine, game, record):
    size, n = game.size, game.num_points
    engine.send_many([f"boardsize {size}", "clear_board", "komi 7.5"])
    colour = "black"
    for t, action in enumerate(record["actions"]):
        engine.send(f"play {colour} {grid.to_vertex(int(action), size)}")
        colour = "white" if colour == "black" else "black"
        board = record["boards"][t]
        assert _stones(engine, "black", size) == set(np.flatnonzero(board == 1)), f"black stones differ after move {t + 1}"
        assert _stones(engine, "white", size) == set(np.flatnonzero(board == -1)), f"white stones differ after move {t + 1}"
        if record["terminal"][t]:
            break
        replies = engine.send_many([f"is_legal {colour} {grid.to_vertex(p, size)}" for p in range(n)])
        theirs = np.array([r == "1" for r in replies])
        ours = record["legal"][t, :n]
        diff = np.flatnonzero(theirs != ours)
        assert diff.size == 0, (
            f"move {t + 1} ({colour} to play): legal points differ at "
            f"{[grid.to_vertex(int(p), size) for p in diff]} (GNU Go says {theirs[diff]})"
        )
    return t + 1


@pytest.mark.slow
def test_random_games_match_gnugo(gnugo_path):
    positions = games = superko_only = 0
    with GTPClient([gnugo_path, *GNUGO_RULES_ARGS]) as engine:
        for size, batch in PLAN:
            game = Go(size=size)
            for record in gamegen.generate(game, seed=size, batch=batch):
                positions += _check_game(engine, game, record)
                games += 1
                # Same moves under simple ko: points that only positional superko forbids.
                assert np.array_equal(record["boards"], record["simple_boards"])
                superko_only += int(np.sum(record["simple_legal"] & ~record["legal"]))
    print(f"{games} games, {positions} positions, {superko_only} superko-only masked points")
    assert games >= 200 and positions >= 10_000, (games, positions)
    assert superko_only > 0, "no position exercised positional superko beyond simple ko"
