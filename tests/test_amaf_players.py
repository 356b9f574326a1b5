"""GRAVE and MCPS as Go players: built by name through the registry, playing whole 5x5 games in
the arena, answering GTP ``genmove`` and ``lz-analyze``, searching for a time.

One board size, one komi and one playout count (16 per move or chunk) throughout: three
compiled searches serve every test (each player's tree of 17 nodes, and MCPS's of 129 for the
time budget and the analysis)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import boards
import tactics
from alphago_jax import cli, sgf
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play import registry
from alphago_jax.play.amaf_players import AmafSearchPlayer
from alphago_jax.play.gtp_commands import GTPEngine

SIZE, KOMI = 5, 0.5
GRAVE, MCPS = "grave:playouts=16,ref=8", "mcps:playouts=16,ref=8,rho=4"
CAPTURE = next(p for p in tactics.POSITIONS if p[0] == "go" and p[1] == dict(size=5, komi=0.5) and p[3] == BLACK)


@pytest.fixture(scope="session")
def amaf_players():
    """{"grave": player, "mcps": player}: 16 playouts per move (a tree of 17 nodes), trees of
    8 * 16 + 1 nodes with a time budget."""
    return {spec.split(":")[0]: registry.make_player(spec) for spec in (GRAVE, MCPS)}


def test_registry_builds_them_with_their_options():
    p = registry.make_player("grave:playouts=24,ref=5,bias=0.001,nodes=100,seed=3")
    assert isinstance(p, AmafSearchPlayer) and p.name == "grave24"
    c = p.config
    assert (c.algorithm, c.playouts, c.ref, c.bias, c.capacity) == ("grave", 24, 5, 0.001, 100)
    c = registry.make_player("mcps:window=500,rho=7").config
    assert (c.algorithm, c.playouts, c.window, c.rho, c.ref, c.capacity) == ("mcps", 300, 500, 7, 50, 2401)
    assert "grave" in registry.player_help() and "mcps" in registry.known_players()


@pytest.mark.parametrize("spec, message", [
    ("grave:rho=3", "bad option 'rho=3' for grave; options: playouts="),
    ("mcps:bias=0.1", "bad option 'bias=0.1' for mcps"),
    ("grave:playouts=0", "grave: playouts must be at least 1, got 0"),
    ("mcps:playouts=16,nodes=10", "mcps: nodes must be at least playouts \\+ 1 = 17, got 10"),
    ("mcps:window=0", "mcps: GraveConfig.window must be an int >= 1, got 0"),
    ("mcps:rho=0", "mcps: GraveConfig.rho must be an int >= 1"),
    ("grave:bias=-1", "grave: GraveConfig.bias must be a finite number >= 0"),
    ("grave:ref=-2", "grave: GraveConfig.ref must be an int >= 0"),
    ("grave:ref=many", "bad value for grave option ref: 'many'"),
])
def test_bad_options_are_clear_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        registry.make_player(spec)


def test_arena_plays_grave_against_mcps(tmp_path, capsys):
    out = tmp_path / "match"
    assert cli.main(["arena", GRAVE, MCPS, "--games", "2", "--size", str(SIZE), "--komi", str(KOMI),
                     "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| grave16 | mcps16 | 2 |" in text
    for path in sorted(out.glob("*.sgf")):
        record = sgf.load(path)  # replays through the rules: every move was legal
        assert record.size == SIZE and record.result and len(record.moves) >= 4


def test_gtp_genmove_and_analysis(amaf_players):
    engine = GTPEngine(amaf_players["mcps"], size=SIZE, komi=KOMI)
    assert engine.handle("clear_board") == "="
    reply = engine.handle("genmove b")
    assert re.fullmatch(r"= ([A-E][1-5]|pass)", reply), reply
    assert engine.pos.moves[0][0] == BLACK and len(engine.pos.moves) == 1
    assert engine.handle("play w C3" if reply != "= C3" else "play w B2") == "="
    assert re.fullmatch(r"= ([A-E][1-5]|pass)", engine.handle("genmove b"))
    assert len(engine.pos.moves) == 3
    reply = engine.handle("lz-analyze w 5")
    assert reply.startswith("=\ninfo move ")
    rows = re.findall(r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) order \d+ pv ([A-E0-9 a-z]+?)(?= info|$)",
                      reply.split("\n")[1])
    assert rows and sum(int(r[1]) for r in rows) <= 16
    assert all(r[4].split()[0] == r[0] and 0 <= int(r[2]) <= 10000 for r in rows)
    assert [int(r[1]) for r in rows] == sorted((int(r[1]) for r in rows), reverse=True)


def test_time_budget_fills_the_larger_tree(amaf_players):
    """With time to spare a move runs chunks of 16 playouts until the tree (129 nodes) has no
    room for another (at least 8 chunks: a playout adds at most one node) or the time is spent,
    and sees that black, able to capture four stones in atari, is winning. (Which winning move
    about 130 random playouts prefer depends on the seed: the capture is not asserted.) A move
    of fixed effort searches 16 playouts on a tree of 17 nodes."""
    player = amaf_players["mcps"]
    setup = np.asarray(boards.parse(CAPTURE[2]), np.int8).reshape(-1)
    player.new_game(SIZE, KOMI, setup=setup)
    player.prepare_timed()  # compiles the larger tree, so that the first timed move searches all its time
    assert player.long_search() in player._timed_ready and player.pos.moves == []
    decision = player.genmove(BLACK, seconds=20.0, commit=False)
    assert decision.simulations >= 8 * 16 and decision.simulations % 16 == 0
    assert player.pos.legal_mask()[decision.action] and decision.winrate > 0.6
    assert player.pos.moves == []  # commit=False only looks
    # Without a budget: one chunk, and the move is played.
    assert player.long_search().capacity == 129 and player.search.capacity == 17
    decision = player.genmove(BLACK)
    assert decision.simulations == 16 and player.pos.moves == [(BLACK, decision.action)]
    player.play(WHITE, player.pos.pass_action)
    player.undo()
    assert player.pos.moves == [(BLACK, decision.action)]
