"""The GTP engine: a transcript of every command, fuzzing with malformed input, live analysis
(lz-analyze, and kata-analyze read back as KataGo documents it)."""

from __future__ import annotations

import io
import os
import re
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alphago_jax import __version__, cli, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play.gtp import preprocess, serve
from alphago_jax.play.gtp_commands import GTPEngine
from alphago_jax.play.players import RandomPlayer
from alphago_jax.play.search_player import mcts_player
from kata_output import parse_kata

ALL_COMMANDS = [
    "protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize", "clear_board",
    "komi", "play", "genmove", "undo", "showboard", "final_score", "final_status_list", "time_settings",
    "time_left", "kgs-genmove_cleanup", "fixed_handicap", "place_free_handicap", "set_free_handicap", "loadsgf",
    "printsgf", "reg_genmove", "lz-analyze", "kata-analyze", "analyze",
]
MOVE = re.compile(r"= ([A-HJ-T](?:[1-9]|1[0-9])|pass|resign)")


@pytest.fixture(scope="session")
def random_engine():
    return GTPEngine(RandomPlayer(seed=0), size=9)


@pytest.fixture(scope="session")
def mcts_engine():
    return GTPEngine(mcts_player(16, nodes=64), size=9)


def snapshot(engine: GTPEngine):
    pos = engine.pos
    return (pos.size, tuple(pos.moves), pos.setup.tobytes(), pos.first_player, pos.handicap,
            pos.board.tobytes(), pos.to_play)


# --------------------------------------------------------------------------------- transcript

class Counted(RandomPlayer):
    """Records ``prepare`` calls: True for a timed move, False for one of the player's fixed effort."""

    def __init__(self, seed=0):
        super().__init__(seed=seed)
        self.prepared = []

    def prepare(self, seconds=None):
        super().prepare(seconds)
        self.prepared.append(seconds is not None)


def test_setting_up_a_game_prepares_the_player_before_its_clock_runs():
    player = Counted(seed=0)
    e = GTPEngine(player, size=9)
    assert player.prepared == []  # the constructor's board: controllers set their own
    assert e.handle("clear_board") == "=" and player.prepared == [False]  # no time limit: the fixed effort
    assert e.handle("time_settings 60 10 5") == "=" and player.prepared == [False, True]
    assert e.handle("boardsize 7") == "=" and player.prepared[2:] == [True]  # each new game, before its first genmove
    assert e.handle("komi 6.5") == "=" and player.prepared[3:] == [True]
    assert e.handle("komi 6.5") == "=" and len(player.prepared) == 4  # the same komi: the same game
    assert e.handle("time_settings 0 0 0") == "=" and e.handle("clear_board") == "=" and player.prepared[4:] == [False] * 2
    assert e.handle("fixed_handicap 2") == "= C3 E5" and player.prepared[6:] == [False]
    timed = GTPEngine(Counted(seed=0), size=9, move_time=0.5)
    assert timed.player.prepared == [] and timed.handle("boardsize 9") == "=" and timed.player.prepared == [True]


def test_the_first_genmove_compiles_nothing():
    """A network player (5x5, 8 simulations: one batch of 8 leaves) is compiled by ``boardsize``:
    its search's pieces are compiled then (or read from the compilation cache), and the first
    moves, untimed and then timed, compile nothing more."""
    import jax

    from alphago_jax.play.search_player import network_player
    from alphago_jax.play.registry import untrained_network

    compiled = []

    def listen(event, seconds, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(kwargs.get("fun_name"))

    player = network_player(untrained_network(), 8, nodes=40)
    e = GTPEngine(player, size=9)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        assert e.handle("boardsize 5") == "=" and e.handle("clear_board") == "="
        at_setup, compiled[:] = list(compiled), []
        assert MOVE.fullmatch(e.handle("genmove b")) and e.handle("play w pass") == "="
        assert MOVE.fullmatch(e.handle("genmove b"))
        untimed, compiled[:] = list(compiled), []
        assert e.handle("time_settings 300 0 0") == "="
        at_timed_setup, compiled[:] = list(compiled), []
        assert MOVE.fullmatch(e.handle("genmove w")) and MOVE.fullmatch(e.handle("genmove b"))
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
    assert {"jit(_start)", "jit(_simulate)", "jit(_result)", "jit(_advance)"} <= set(at_setup), at_setup
    assert untimed == [] and compiled == [], (untimed, compiled)
    # ``time_settings`` compiles the timed move's own small pieces (its key splits) unless the
    # persistent cache already holds them, so ``at_timed_setup`` may be empty; the moves compile nothing.
    del at_timed_setup


def test_session_transcript(random_engine, tmp_path):
    e = random_engine
    h = e.handle
    assert h("boardsize 9") == "="
    assert h("protocol_version") == "= 2"
    assert h("1 name") == "=1 alphago-jax"
    assert h("2 version") == f"=2 {__version__}"
    assert h("known_command genmove") == "= true"
    assert h("known_command lz-analyze") == "= true"
    assert h("known_command dance") == "= false"
    assert h("list_commands").split("\n") == ["= protocol_version"] + ALL_COMMANDS[1:]
    assert h("boardsize 0") == "? unacceptable size"
    assert h("boardsize 20") == "? unacceptable size"
    assert h("boardsize nine") == "? syntax error: size must be an integer, got 'nine'"
    assert h("clear_board") == "="
    assert h("komi 6.5") == "="
    assert h("komi lots") == "? syntax error: komi must be a number, got 'lots'"
    assert h("play b D4") == "="
    assert h("play w D4") == "? illegal move"
    assert h("play w Z4") == "? syntax error: invalid vertex 'Z4'"
    assert h("play purple E5") == "? syntax error: invalid colour 'purple'"
    assert h("play w") == "? syntax error: usage: play COLOUR VERTEX"
    assert h("3 play white E5") == "=3"
    assert h("final_score") == "= W+6.5"  # Tromp-Taylor: one stone each, the rest neutral
    assert h("final_status_list alive") == "= E5 D4"
    assert h("final_status_list dead") == "="
    assert h("final_status_list seki") == "="
    assert h("final_status_list wobbly").startswith("? syntax error")
    board = h("showboard")
    assert board.startswith("= \n   A B C D E F G H J\n 9 . . . . . . . . .")
    assert " 5 . . . .(O). . . ." in board and " 4 . . . X . . . . ." in board
    assert "Black to play; move 2; komi 6.5" in board

    before = len(e.pos.moves)
    assert MOVE.fullmatch(h("reg_genmove b"))
    assert len(e.pos.moves) == before  # reg_genmove does not play
    reply = h("genmove b")
    assert MOVE.fullmatch(reply) and len(e.pos.moves) == before + 1
    assert e.pos.moves[-1][0] == BLACK
    assert h("undo") == "="
    assert h("undo extra") == "? syntax error: unexpected argument 'extra'"
    assert len(e.pos.moves) == before
    assert MOVE.fullmatch(h("kgs-genmove_cleanup b"))
    assert h("undo") == "="

    assert h("time_settings 300 30 5") == "="
    assert h("time_settings 300 30") == "? syntax error: usage: time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES"
    assert h("time_left white 120 0") == "="
    assert h("time_left white soon 0") == "? syntax error: time must be an integer, got 'soon'"
    assert e.clock.left[WHITE] == (120.0, 0) and e.clock.budget(WHITE, 79) > 0
    assert MOVE.fullmatch(h("genmove w"))
    assert h("undo") == "="
    assert h("time_settings 0 1 0") == "=" and e.clock.unlimited  # GTP: no time limit

    text = h("printsgf")
    assert text.startswith("= (;FF[4]") and "KM[6.5]" in text and ";B[df];W[ee]" in text
    path = tmp_path / "game.sgf"
    assert h(f"printsgf {path}") == "="
    assert sgf.load(path).moves == ((BLACK, grid.from_vertex("D4", 9)), (WHITE, grid.from_vertex("E5", 9)))
    assert h("printsgf /no/such/dir/x.sgf").startswith("? cannot save file")
    assert h(f"loadsgf {path} 2") == "="  # the position before move 2
    assert e.pos.moves == [(BLACK, grid.from_vertex("D4", 9))] and e.pos.to_play == WHITE
    assert h(f"loadsgf {path}") == "=" and len(e.pos.moves) == 2
    assert h("loadsgf /no/such.sgf").startswith("? cannot load file")
    assert h(f"loadsgf {path} zero").startswith("? syntax error")
    assert len(e.pos.moves) == 2

    assert h("fixed_handicap 2") == "? board not empty"
    assert h("clear_board") == "="
    assert h("fixed_handicap 10") == "? invalid number of stones"
    assert h("fixed_handicap 2") == "= C3 G7"
    assert e.pos.to_play == WHITE and e.pos.handicap == 2
    assert h("place_free_handicap 3") == "? board not empty"
    assert h("clear_board") == "="
    assert h("place_free_handicap 1") == "? invalid number of stones"
    assert h("place_free_handicap 5") == "= C3 G7 C7 G3 E5"
    assert h("clear_board") == "="
    assert h("set_free_handicap C3 C3").startswith("? bad vertex list")
    assert h("set_free_handicap C3").startswith("? bad vertex list")
    assert h("set_free_handicap C3 X9").startswith("? bad vertex list")
    assert h("set_free_handicap D4 F6 pass").startswith("? bad vertex list")
    assert h("set_free_handicap D4 F6") == "="
    assert sorted(np.flatnonzero(e.pos.board)) == sorted(grid.from_vertex(x, 9) for x in ("D4", "F6"))
    assert "AB[df][fd]" in h("printsgf") and "HA[2]" in h("printsgf")

    assert h("play w pass") == "=" and h("play b pass") == "="
    assert h("final_score") == "= B+74.5"  # two black stones own the empty board: 81 - 0 - 6.5
    assert "RE[B+74.5]" in h("printsgf")
    assert h("play w E5") == "="  # play goes on after two passes

    analysis = h("lz-analyze 10")
    assert analysis.startswith("=\ninfo move ") and " order 0 pv " in analysis
    assert h("dance") == "? unknown command"
    assert h("7 dance") == "?7 unknown command"
    assert h("   # only a comment") is None and h("") is None
    assert h("8 protocol_version # with a comment") == "=8 2"
    assert h("\tname\t") == "= alphago-jax"
    assert h("quit") == "=" and e.quit
    e.quit = False


def test_preprocess_follows_the_specification():
    assert preprocess("1 \x01pla\x7fy b\tD4 # comment") == "1 play b D4"
    assert preprocess("\r\n") == "" and preprocess("# all comment") == ""


# -------------------------------------------------------------------------------------- fuzz

COMMAND_WORDS = ALL_COMMANDS + ["PLAY", "Genmove", "undo2", "play_", "", "-1", "list-commands"]
COLOURS = ["b", "w", "B", "White", "black", "x", "bw", "", "0", "é"]
VERTICES = ["D4", "d4", "J9", "A1", "pass", "PASS", "resign", "I5", "Z9", "A0", "A10", "T19", "4D", "D", "D-1",
            "D4.5", "ＤＤ", "tt", "j9", "A01", "D4,E5", "D4,,pass", ","]
KEYS = ["interval", "minmoves", "maxmoves", "avoid", "allow", "ownership", "pvVisits", "ownershipStdev", "true",
        "false", "rootInfo"]
NUMBERS = ["0", "1", "9", "20", "-3", "+9", "4294967297", "99999999999999999999", "3.5", "1e3", "nan", "inf",
           "-inf", "0x10", "٣", "1_000", "", "-0"]
word = st.one_of(st.sampled_from(COLOURS), st.sampled_from(VERTICES), st.sampled_from(NUMBERS), st.sampled_from(KEYS),
                 st.text(max_size=12), st.binary(max_size=12).map(lambda b: b.decode("latin-1")))
structured = st.builds(
    lambda ident, command, args, comment, sep: sep.join(
        ([ident] if ident else []) + [command] + args) + comment,
    st.one_of(st.just(""), st.integers(0, 10**12).map(str), st.sampled_from(["-1", "1.5", "x1"])),
    st.sampled_from(COMMAND_WORDS),
    st.lists(word, max_size=6),
    st.sampled_from(["", " # note", "#", "\r", "\x00"]),
    st.sampled_from([" ", "\t", "  ", " \x01 "]),
)
line = st.one_of(
    structured,
    st.text(max_size=60),
    st.binary(max_size=60).map(lambda b: b.decode("latin-1")),
    st.text(min_size=2000, max_size=5000),  # very long lines
    st.sampled_from(["", " ", "\t", "#", "\x00\x00", "\n", "\ufffd"]),
)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=line)
def test_fuzz_never_crashes_or_changes_the_position_on_failure(random_engine, tmp_path_factory, text):
    e = random_engine
    if e.pos.size != 9:
        e.handle("boardsize 9")
    before = snapshot(e)
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.getbasetemp())  # where printsgf FILENAME writes
    try:
        reply = e.handle(text)
    finally:
        os.chdir(cwd)
        e.quit = False
    if reply is None:
        assert preprocess(text) == ""
        return
    m = re.match(r"([=?])([0-9]*)(?: |\n|$)", reply)
    assert m, reply
    words = preprocess(text).split()
    assert m.group(2) == (words[0] if re.fullmatch(r"[0-9]+", words[0]) else "")
    assert "\n\n" not in reply
    if m.group(1) == "?":
        assert len(reply) > len(m.group(0)) + 1  # a reason is given
        assert snapshot(e) == before
    REPLIES[m.group(1)] = REPLIES.get(m.group(1), 0) + 1


REPLIES: dict[str, int] = {}


def test_fuzz_saw_both_answers():
    """The fuzz above met both malformed lines (``?``) and valid ones (``=``)."""
    if not REPLIES:
        pytest.skip("the fuzz test did not run")
    assert REPLIES.get("?", 0) > 1000 and REPLIES.get("=", 0) > 50, REPLIES


@settings(max_examples=300, deadline=None)
@given(points=st.lists(st.integers(0, 81), min_size=1, max_size=30), pick=st.integers(0, 10**6),
       colour=st.sampled_from(["b", "w", "black", "WHITE"]))
def test_illegal_moves_fail_and_change_nothing(random_engine, points, pick, colour):
    e = random_engine
    e.handle("boardsize 9")
    for p in points:
        e.handle(f"play {'b' if e.pos.to_play == BLACK else 'w'} {grid.to_vertex(p, 9)}")
    stones = np.flatnonzero(e.pos.board)
    if not stones.size:
        return
    point = int(stones[pick % stones.size])
    before = snapshot(e)
    assert e.handle(f"play {colour} {grid.to_vertex(point, 9)}") == "? illegal move"
    assert snapshot(e) == before


# ---------------------------------------------------------------------------------- analysis

def test_lz_analyze_answers_with_info_lines(mcts_engine):
    e = mcts_engine
    e.handle("clear_board")
    reply = e.handle("lz-analyze b 5")
    assert reply.startswith("=\ninfo move ")
    first = reply.split("\n")[1]
    fields = re.findall(r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) order (\d+) pv ([A-Z0-9 a-z]+?)"
                        r"(?= info|$)", first)
    assert fields and [int(f[4]) for f in fields] == list(range(len(fields)))
    assert all(0 <= int(f[2]) <= 10000 and f[5].split()[0] == f[0] for f in fields)
    assert e.handle("lz-analyze interval 20") .startswith("=\ninfo move ")
    assert e.handle("lz-analyze purple") == "? syntax error: invalid colour 'purple'"
    assert e.handle("lz-analyze b 10 extra") == "? syntax error: unexpected argument 'extra'"
    assert e.handle("lz-analyze w 10 minmoves 3").startswith("=\ninfo move ")
    assert e.handle("lz-analyze interval") == "? syntax error: interval needs a number"


def kata_reply(engine, command: str):
    reply = engine.handle(command)
    assert reply.startswith("=\n") and reply.count("\n") == 1, reply
    return parse_kata(reply.split("\n")[1], engine.pos.size)


def stone_planes_heads(net):
    """``Network.aux`` for ``net`` with heads whose answers a test can predict: ownership +1 on the
    stones of the player to move, -1 on the opponent's, 0 elsewhere (input planes 0 and 8); score
    the player to move's stones minus the opponent's. The network's own heads still run (and set
    the shapes); their values are replaced."""
    import jax.numpy as jnp

    def aux(variables, planes):
        out = net.apply(variables, planes)
        stones = (planes[..., 0] - planes[..., 8]).reshape(planes.shape[0], -1)
        return out._replace(ownership=stones + 0.0 * out.ownership, score=jnp.sum(stones, axis=-1) + 0.0 * out.score)

    return aux


@pytest.fixture(scope="session")
def heads_engine():
    """A 5x5 network player (8 simulations) whose network has KataGo's ownership and score heads."""
    import functools

    import jax

    from alphago_jax import features, nets
    from alphago_jax.play.players import Network
    from alphago_jax.play.search_player import network_player

    net = nets.DualResNet(in_planes=features.zero.NUM_PLANES, blocks=1, filters=8, value_hidden=16,
                          ownership=True, score=True)
    variables = jax.jit(nets.init_variables, static_argnums=(0, 2))(net, jax.random.PRNGKey(0), 5)
    network = Network(apply=nets.policy_value_apply(net), planes=features.zero_planes,
                      variables=functools.partial(lambda v, size: v, variables), history=8, name="heads",
                      aux=stone_planes_heads(net))
    e = GTPEngine(network_player(network, 8), size=5)
    assert e.handle("boardsize 5") == "=" and e.player.analysis_heads == (True, True)
    return e


def test_kata_analyze_reports_as_katago_documents(heads_engine):
    e = heads_engine
    for command in ("clear_board", "play b C3", "play w B2", "play b D4"):
        assert e.handle(command) == "="
    black_stones = {grid.from_vertex(v, 5) for v in ("C3", "D4")}
    white_stones = {grid.from_vertex("B2", 5)}
    for colour, mine, theirs in (("w", white_stones, black_stones), ("b", black_stones, white_stones)):
        moves, ownership = kata_reply(e, f"kata-analyze {colour} 10 ownership true")
        assert moves and [int(m["order"]) for m in moves] == list(range(len(moves)))
        total = 1 + sum(int(m["visits"]) for m in moves)
        expected = np.zeros(25)
        for m in moves:
            assert set(m) >= {"move", "visits", "utility", "winrate", "scoreMean", "scoreLead", "prior", "order", "pv"}
            assert all("." in m[k] for k in ("utility", "winrate", "scoreMean", "scoreLead", "prior"))
            winrate, point = float(m["winrate"]), grid.from_vertex(m["move"], 5)
            assert 0 <= winrate <= 1 and 0 <= float(m["prior"]) <= 1 and int(m["visits"]) >= 1
            assert float(m["utility"]) == pytest.approx(2 * winrate - 1, abs=2e-6)
            assert m["pv"][0] == m["move"] and all(grid.from_vertex(v, 5) <= 25 for v in m["pv"])
            # The score head's margin after the move, for the player analysed: one stone more.
            lead = len(mine) - len(theirs) + (point != 25)
            assert float(m["scoreLead"]) == float(m["scoreMean"]) == pytest.approx(lead)
            if point != 25:
                expected[point] = int(m["visits"]) / total
        # Row-major from the top-left point, +1 for the player analysed; an empty point owned as
        # often as the search played there (the root and each move, weighted 1 and by visits).
        expected[list(mine)], expected[list(theirs)] = 1.0, -1.0
        assert ownership == pytest.approx(expected.tolist(), abs=1e-4)
        assert ownership[grid.from_vertex("C3", 5)] == (1.0 if colour == "b" else -1.0)
        assert ownership[2 * 5 + 2] == ownership[grid.from_vertex("C3", 5)]  # C3: row 2 from the top, column C


def test_kata_analyze_arguments(heads_engine, capsys):
    e = heads_engine
    assert e.handle("clear_board") == "=" and e.handle("play b C3") == "="
    moves, ownership = kata_reply(e, "kata-analyze w interval 10")
    assert moves and ownership is None  # ownership only when asked
    moves, _ = kata_reply(e, "analyze w 10 pvVisits true ownership false")  # Sabaki's name, same format
    for m in moves:
        assert len(m["pvVisits"]) == len(m["pv"]) and int(m["pvVisits"][0]) == int(m["visits"])
        assert [int(n) for n in m["pvVisits"]] == sorted((int(n) for n in m["pvVisits"]), reverse=True)
    assert e.handle("clear_board") == "=" and e.handle("play b C3") == "="  # a fresh tree: 8 simulations
    moves, _ = kata_reply(e, "kata-analyze w 10 minmoves 20")
    assert len(moves) == 20 and len({m["move"] for m in moves}) == 20
    unvisited = [m for m in moves if m["visits"] == "0"]
    assert len(unvisited) >= 12 and moves[-len(unvisited):] == unvisited  # after the searched moves
    assert [float(m["prior"]) for m in unvisited] == sorted((float(m["prior"]) for m in unvisited), reverse=True)
    assert len(kata_reply(e, "kata-analyze w 10 minmoves 20 maxmoves 3")[0]) == 3
    lz = e.handle("lz-analyze w 10 maxmoves 2 minmoves 2")
    assert lz.count("info move") == 2

    # avoid / allow on the analysed player's first move; the kept tree is left alone.
    kept = e.player.tree
    moves, _ = kata_reply(e, "kata-analyze w 10 allow w B2,D4,pass 1 minmoves 5")
    assert {m["move"] for m in moves} <= {"B2", "D4", "pass"} and moves
    assert e.player.tree is kept
    moves, _ = kata_reply(e, "kata-analyze w 10 avoid w B2,D4 1 avoid b A1 1 minmoves 30 maxmoves 30")
    assert not {"B2", "D4"} & {m["move"] for m in moves} and len(moves) == 23  # 25 legal moves (pass too) less 2
    assert "A1" in {m["move"] for m in moves}  # black's first move is at depth 1: not restricted
    assert e.handle("kata-analyze w 10 avoid w B2 2").startswith("=\ninfo move ")  # white moves again at depth 2
    assert e.handle("lz-analyze w 10 avoid b B2 2") == (
        "? avoid black with UNTILDEPTH 2 is not supported: only the analysed player's first move can be "
        "restricted (UNTILDEPTH 1)")
    assert e.handle("kata-analyze w 10 avoid w B2 3").startswith("? avoid white with UNTILDEPTH 3 is not supported")
    assert e.handle("kata-analyze w 10 allow w B2 1 allow w D4 1") == (
        "? syntax error: allow may be given once, and not with avoid")
    assert e.handle("kata-analyze w 10 allow w C3 1") == "? avoid/allow leave no legal move to analyse"
    assert e.handle("kata-analyze w 10 avoid w B2") == "? syntax error: usage: avoid COLOUR VERTEX,VERTEX,... UNTILDEPTH"
    assert e.handle("kata-analyze w 10 avoid w Z9 1") == "? syntax error: invalid vertex 'Z9'"
    assert e.handle("kata-analyze w 10 ownershipStdev true") == (
        "? ownershipStdev is not supported (kata-analyze supports ownership and pvVisits)")
    assert e.handle("kata-analyze w 10 ownershipStdev false").startswith("=\ninfo move ")
    assert e.handle("kata-analyze w 10 ownership yes") == "? syntax error: ownership must be true or false, got 'yes'"
    assert e.handle("lz-analyze w 10 ownership true") == "? syntax error: unexpected argument 'ownership'"
    assert e.handle("kata-analyze w 10 minmoves") == "? syntax error: minmoves needs a number"
    capsys.readouterr()


@pytest.fixture(scope="session")
def black_owns_engine():
    """A 5x5 network player (8 simulations) whose made-up network wants to pass (all prior on
    pass, value 0) and whose ownership head gives every point to black (input plane 16: black to
    move), so that every white stone is dead."""
    import jax.numpy as jnp

    from alphago_jax import features, nets
    from alphago_jax.play.players import Network
    from alphago_jax.play.search_player import network_player

    def apply(variables, planes):
        b, n = planes.shape[0], planes.shape[1] * planes.shape[2]
        return jnp.zeros((b, n + 1)).at[:, n].set(20.0) + variables, jnp.zeros((b,))

    def aux(variables, planes):
        logits, value = apply(variables, planes)
        black = 2.0 * planes[..., 16].reshape(planes.shape[0], -1) - 1.0  # +1 for black to move, -1 for white
        return nets.DualOutput(logits, value, black, None)

    network = Network(apply=apply, planes=features.zero_planes, variables=lambda size: jnp.float32(0.0), history=8,
                      name="black-owns", aux=aux)
    return GTPEngine(network_player(network, 8), size=5)


def test_dead_stones_from_the_ownership_head(black_owns_engine):
    """final_status_list and final_score take off the stones the ownership head calls dead;
    kgs-genmove_cleanup captures the opponent's before it passes, genmove passes at once."""
    e = black_owns_engine
    for command in ("boardsize 5", "clear_board", "komi 0.5", "play b C3", "play w A1", "play b D4", "play w E5"):
        assert e.handle(command) == "="
    assert e.player.can_cleanup and e.player.ownership().tolist() == [1.0] * 25
    assert sorted(e.handle("final_status_list dead")[2:].split()) == ["A1", "E5"]
    assert sorted(e.handle("final_status_list alive")[2:].split()) == ["C3", "D4"]
    assert e.handle("final_status_list seki") == "="
    assert e.handle("final_score") == "= B+24.5"  # the whole board black's once A1 and E5 are off
    assert e.handle("reg_genmove b") == "= pass"
    liberties = {"A2", "B1", "D5", "E4"}
    captured = []
    while (reply := e.handle("kgs-genmove_cleanup b")) != "= pass":
        assert reply[2:] in liberties - set(captured), reply
        captured.append(reply[2:])
        assert e.handle("play w pass") == "="
    assert sorted(captured) == sorted(liberties) and e.handle("final_status_list dead") == "="
    assert e.handle("kgs-genmove_cleanup w") == "= pass"  # to white, black's stones are alive: nothing to capture


def test_kata_analyze_without_heads(mcts_engine, random_engine, capsys):
    e = mcts_engine
    e.handle("clear_board")
    capsys.readouterr()
    e._noted_no_ownership = False
    moves, ownership = kata_reply(e, "kata-analyze b 10 ownership true")
    assert moves and ownership is None and not any("scoreLead" in m for m in moves)  # not invented
    assert all({"move", "visits", "utility", "winrate", "prior", "order", "pv"} <= set(m) for m in moves)
    assert "has no ownership head: the ownership is left out" in capsys.readouterr().err
    kata_reply(e, "kata-analyze b 10 ownership true")
    assert capsys.readouterr().err == ""  # said once
    random_engine.handle("boardsize 9")
    assert random_engine.handle("kata-analyze b 10 avoid b D4 1") == (
        "? player 'random' cannot restrict its analysis (avoid, allow)")
    moves, _ = kata_reply(random_engine, "kata-analyze b 10")
    assert len(moves) == 1 and moves[0]["visits"] == "1"


class Sink:
    def __init__(self):
        self.parts, self.lock = [], threading.Lock()

    def write(self, text):
        with self.lock:
            self.parts.append(text)

    def flush(self):
        pass

    def text(self):
        with self.lock:
            return "".join(self.parts)


def wait_for(sink: Sink, needle: str, timeout: float = 120.0) -> str:
    end = time.time() + timeout
    while needle not in sink.text():
        assert time.time() < end, f"no {needle!r} in {sink.text()!r}"
        time.sleep(0.01)
    return sink.text()


def test_lz_analyze_streams_until_the_next_line(mcts_engine):
    e = mcts_engine
    e.handle("clear_board")
    r, w = os.pipe()
    sink = Sink()
    with os.fdopen(r, "rb") as stdin, os.fdopen(w, "wb", buffering=0) as feed:
        server = threading.Thread(target=serve, args=(e, stdin, sink))
        server.start()
        feed.write(b"5 lz-analyze 1\n")
        wait_for(sink, "info move")
        time.sleep(0.3)  # several updates at a 10 ms interval
        feed.write(b"name\n")
        wait_for(sink, "= alphago-jax\n\n")
        feed.write(b"quit\n")
        server.join(timeout=60)
    assert not server.is_alive()
    text = sink.text()
    head, rest = text.split("\n", 1)
    assert head == "=5"
    analysis, after = rest.split("\n\n", 1)
    lines = analysis.split("\n")
    assert len(lines) >= 2 and all(x.startswith("info move ") for x in lines)
    assert after == "= alphago-jax\n\n=\n\n"
    e.quit = False


def test_serve_reads_bytes_and_stops_at_the_end_of_input(random_engine):
    sink = Sink()
    data = b"\xff\xfe\x00garbage\n1 name\n\x00\x01\n\n# comment\nboardsize\t9\nplay b \xc3\xa9\n"
    assert serve(random_engine, io.BytesIO(data), sink) == 0
    assert sink.text() == ("? unknown command\n\n=1 alphago-jax\n\n=\n\n"
                           "? syntax error: invalid vertex '\u00e9'\n\n")


def test_gtp_command_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"boardsize 9\nname\nplay b E5\ngenmove w\nquit\n")))
    assert cli.main(["gtp", "--player", "random", "--size", "9"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("=\n\n= alphago-jax\n\n=\n\n= ") and out.endswith("\n\n=\n\n")
    assert cli.main(["gtp", "--player", "nosuch"]) == 2
    assert "unknown player 'nosuch'" in capsys.readouterr().err
