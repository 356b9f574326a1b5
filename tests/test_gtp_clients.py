"""``alphago-jax gtp`` and the project's SGF files with real clients.

- Sabaki's own libraries, run by node: ``@sabaki/gtp`` drives the engine as Sabaki does
  (identification, genmove, ``lz-analyze`` stopped by the next command, ``analyze`` stopped by
  an empty line, ``printsgf``), and ``@sabaki/sgf`` reads every kind of SGF file the project
  writes (arena games, ``printsgf``, terminal games, the main job's sample game, the GNU Go
  dataset script's games), agreeing with sgfmill on every property and move.
- A plain ``subprocess`` client that runs a tournament as a match runner does: several games in
  one engine process (``clear_board`` between them), on Canadian byo-yomi and main-time clocks
  that the engine keeps to within 10%.

``.ci/run`` installs the two node packages into ``.ci/node/node_modules``
(``ALPHAGO_JAX_NODE_MODULES`` names another folder); the Sabaki tests skip, saying so, only where
node or the packages are absent.
"""

from __future__ import annotations

import io
import json
import math
import os
import pathlib
import re
import select
import shutil
import subprocess
import sys
import time
import types

import numpy as np
import pytest
from children import child_env
from kata_output import parse_kata

from alphago_jax import __version__, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE

ROOT = pathlib.Path(__file__).resolve().parents[1]
NODE_SCRIPTS = ROOT / "tests" / "node"
NODE_MODULES = pathlib.Path(os.environ.get("ALPHAGO_JAX_NODE_MODULES", ROOT / ".ci" / "node" / "node_modules"))
SABAKI_PACKAGES = ("@sabaki/gtp", "@sabaki/sgf")
VERTEX = re.compile(r"[A-HJ-T](?:[1-9]|1[0-9])|pass")


def engine_command(*player_and_options: str) -> list[str]:
    """``alphago-jax gtp`` as a command line, run from this checkout by this Python."""
    return [sys.executable, "-m", "alphago_jax.cli", "gtp", *player_and_options]


@pytest.fixture(scope="module")
def node():
    path = shutil.which("node")
    if path is None:
        pytest.skip("node is not installed: the Sabaki client tests need node and npm (.ci/run installs "
                    "@sabaki/gtp and @sabaki/sgf with npm)")
    missing = [p for p in SABAKI_PACKAGES if not (NODE_MODULES / p / "package.json").is_file()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed in {NODE_MODULES}: run "
                    f"`npm install --prefix .ci/node` (as .ci/run does) or set ALPHAGO_JAX_NODE_MODULES")
    return path


def run_node(node: str, script: str, *args: str, timeout: float) -> object:
    """Run ``tests/node/SCRIPT`` with the Sabaki packages; its JSON output."""
    env = dict(child_env(), NODE_PATH=str(NODE_MODULES))
    r = subprocess.run([node, str(NODE_SCRIPTS / script), *args], capture_output=True, text=True, env=env,
                       timeout=timeout)
    assert r.returncode == 0, f"node {script} failed:\n{r.stderr[-4000:]}"
    return json.loads(r.stdout)


def sgf_point(action: int, size: int) -> str:
    """SGF's point of an action (column letter, then row letter from the top); ``""`` for pass."""
    if action == size * size:
        return ""
    row, col = divmod(action, size)
    return chr(ord("a") + col) + chr(ord("a") + row)


def points(values: list[str]) -> list[str]:
    """SGF point values, compressed rectangles (``aa:bc``) expanded, sorted."""
    out = []
    for v in values:
        first, _, last = v.partition(":")
        last = last or first
        out += [chr(c) + chr(r) for c in range(ord(first[0]), ord(last[0]) + 1)
                for r in range(ord(first[1]), ord(last[1]) + 1)]
    return sorted(out)


# ------------------------------------------------------------------------------ @sabaki/gtp

def test_sabaki_gtp_drives_the_engine(node):
    command = engine_command("--player", "mcts:sims=16,nodes=4001", "--size", "5", "--resign", "0")
    out = run_node(node, "gtp_session.js", json.dumps(command), timeout=600)
    ok = {"content": "", "error": False}
    assert out["name"] == {"content": "alphago-jax", "error": False}
    assert out["version"] == {"content": __version__, "error": False}
    assert out["protocol"] == {"content": "2", "error": False}
    assert {"genmove", "printsgf", "lz-analyze", "kata-analyze", "analyze"} <= set(out["commands"]["content"].split("\n"))
    assert out["boardsize"] == out["clear_board"] == out["komi"] == out["play"] == ok
    reply = out["genmove"]["content"]
    assert not out["genmove"]["error"] and VERTEX.fullmatch(reply) and reply != "C3"

    lz = out["lz"]  # stopped by Sabaki's next command, which is then answered
    assert not lz["error"] and len(lz["lines"]) >= 2, lz
    for line in lz["lines"]:
        groups = re.findall(r"info move (\S+) visits (\d+) winrate (\d+) prior (\d+) order (\d+) pv", line)
        assert groups and all(VERTEX.fullmatch(g[0]) and 0 <= int(g[2]) <= 10000 for g in groups), line
    assert lz["next"] == {"content": "2", "error": False}

    analyze = out["analyze"]  # KataGo's form under Sabaki's name, stopped by an empty line
    assert not analyze["error"] and len(analyze["lines"]) >= 2, analyze
    for line in analyze["lines"]:
        moves, ownership = parse_kata(line, 5)
        assert moves and ownership is None  # pure MCTS has no ownership head: left out
        assert all("." in m["winrate"] and 0 <= float(m["winrate"]) <= 1 for m in moves)
    assert any("has no ownership head" in line for line in out["stderr"])
    assert out["after"] == {"content": "alphago-jax", "error": False}

    assert not out["printsgf"]["error"] and len(out["sgf"]) == 1
    game = out["sgf"][0]
    assert game["root"]["SZ"] == ["5"] and float(game["root"]["KM"][0]) == 7.5
    assert game["moves"] == [["B", "cc"], ["W", sgf_point(grid.from_vertex(reply, 5), 5)]]
    assert out["exit"] == 0 and not any("Fatal" in line for line in out["stderr"]), out["stderr"]


# ------------------------------------------------------------------------------ @sabaki/sgf

def _arena_games(out: pathlib.Path) -> list[pathlib.Path]:
    from alphago_jax.play.arena import run_match
    from alphago_jax.play.players import RandomPlayer

    # Names with SGF's special characters (] and \), which the writer must escape.
    match = run_match(RandomPlayer(seed=1, name="random [one] \\ back"), RandomPlayer(seed=2, name="random: two"),
                      2, size=5, komi=0.5, out_dir=out, progress=False, max_moves=30)
    return [g.sgf_path for g in match.games]


def _printsgf_games(out: pathlib.Path) -> list[pathlib.Path]:
    from alphago_jax.play.gtp_commands import GTPEngine
    from alphago_jax.play.players import RandomPlayer

    e = GTPEngine(RandomPlayer(seed=0), size=7)
    paths = []
    for i, commands in enumerate([
        ["boardsize 7", "komi 6.5", "play b D4", "play w pass", "play b C3", "play w pass", "play b pass"],  # a result
        ["clear_board", "set_free_handicap C3 E5 D4", "play w pass", "play b A1", "genmove w"],  # handicap, white first
        ["boardsize 7", "komi -2", "play w D4", "play b E5", "play w pass"],  # white first without handicap (PL)
    ]):
        for c in commands:
            assert e.handle(c).startswith("="), c
        path = out / f"printsgf-{i}.sgf"
        assert e.handle(f"printsgf {path}") == "="
        paths.append(path)
    return paths


def _terminal_game(out: pathlib.Path) -> list[pathlib.Path]:
    from alphago_jax.play.players import RandomPlayer
    from alphago_jax.play.terminal import play_terminal

    path = out / "terminal.sgf"
    result = play_terminal(RandomPlayer(seed=4), size=5, komi=7.5, human=BLACK, sgf_path=path,
                           stdin=io.StringIO("C3\nD2\nresign\n"), stdout=io.StringIO())
    assert result == "W+R"
    return [path]


def _zero_sample(out: pathlib.Path) -> list[pathlib.Path]:
    from alphago_jax import zero

    # The main job's own writer of sample.sgf, on a match output of the shape it reads: game 0's
    # actions (-1 after the end) and its area score.
    config = zero.PRESETS["smoke"]
    n = config.board_size ** 2
    match = types.SimpleNamespace(moves=np.asarray([[n // 2, 0, n, 1, n, n, -1, -1]], np.int32),
                                  scores=np.asarray([-3.5], np.float32))
    path = out / "sample.sgf"
    zero.evaluate.write_sample(path, config, match, 7, f"pure MCTS, {config.baseline_simulations} playouts")
    return [path]


def _gnugo_dataset(out: pathlib.Path) -> list[pathlib.Path]:
    r = subprocess.run([sys.executable, str(ROOT / "experiments" / "make_gnugo_dataset.py"), "--smoke", "--out", str(out)],
                       capture_output=True, text=True, env=child_env(), timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return sorted(out.glob("game-*.sgf"))


WRITERS = {"arena": _arena_games, "printsgf": _printsgf_games, "terminal": _terminal_game,
           "zero_sample": _zero_sample, "gnugo_dataset": _gnugo_dataset}


@pytest.mark.parametrize("kind", list(WRITERS))
def test_sabaki_sgf_reads_every_sgf_the_project_writes(kind, node, tmp_path, request):
    if kind == "gnugo_dataset":
        request.getfixturevalue("gnugo_path")  # the script's games are GNU Go's
    paths = WRITERS[kind](tmp_path)
    assert paths and all(p.is_file() for p in paths)
    read = run_node(node, "read_sgf.js", *map(str, paths), timeout=120)
    assert [entry["file"] for entry in read] == [str(p) for p in paths]
    for path, entry in zip(paths, read):
        record = sgf.load(path, require_moves=False)
        assert len(entry["games"]) == 1, entry
        root, moves = entry["games"][0]["root"], entry["games"][0]["moves"]
        size = record.size
        assert root["SZ"] == [str(size)] and float(root["KM"][0]) == record.komi
        assert int(root.get("HA", ["0"])[0]) == record.handicap
        for ident, value in (("PB", record.black_name), ("PW", record.white_name), ("RE", record.result)):
            assert root.get(ident) == ([value] if value is not None else None), (ident, root.get(ident), value)
        assert points(root.get("AB", [])) == sorted(sgf_point(p, size) for p in record.black_setup)
        assert points(root.get("AW", [])) == sorted(sgf_point(p, size) for p in record.white_setup)
        expected_first = "B" if record.first_player == BLACK else "W"
        assert root.get("PL", [expected_first]) == [expected_first]
        if record.moves:
            assert moves[0][0] == expected_first
        sabaki = [[c, "" if v == "tt" and size <= 19 else v] for c, v in moves]  # tt: FF[3]'s pass
        assert sabaki == [["B" if c == BLACK else "W", sgf_point(a, size)] for c, a in record.moves], path
    if kind == "arena":
        names = {sgf.load(p, require_moves=False).black_name for p in paths}
        assert names == {"random [one] \\ back", "random: two"}  # colours alternate, escapes survive
    if kind == "printsgf":
        records = [sgf.load(p, require_moves=False) for p in paths]
        assert records[0].result == "B+42.5"  # two black stones own the 7x7 board: 49 - 6.5
        assert records[1].handicap == 3 and records[2].first_player == WHITE


# ---------------------------------------------------------------------- a tournament manager

class Engine:
    """A GTP engine in a subprocess, as a match runner drives it: one command at a time, each
    answer read up to its empty line, with a deadline."""

    def __init__(self, command: list[str], log: pathlib.Path):
        self._log = open(log, "w")
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     env=child_env(), cwd=log.parent)
        self._buffer = b""

    def send(self, command: str, timeout: float = 300.0) -> tuple[str, float]:
        """(the answer without its ``=``, seconds from sending to the end of the answer)."""
        t0 = time.perf_counter()
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        fd = self.proc.stdout.fileno()
        while b"\n\n" not in self._buffer:
            left = t0 + timeout - time.perf_counter()
            assert left > 0 and select.select([fd], [], [], left)[0], f"no answer to {command!r} in {timeout} s"
            chunk = os.read(fd, 65536)
            assert chunk, f"the engine closed its output after {command!r}"
            self._buffer += chunk
        reply, self._buffer = self._buffer.split(b"\n\n", 1)
        seconds = time.perf_counter() - t0
        text = reply.decode()
        assert text == "=" or text.startswith("= "), (command, text)
        return text[2:].strip(), seconds

    def close(self) -> int:
        try:
            if self.proc.poll() is None:
                self.send("quit", timeout=30)
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._log.close()


def play_timed_game(timed: Engine, other: Engine, timed_colour: str, clock, moves_by_timed: int):
    """One game between two engines that know the same rules: ``timed`` gets ``time_left`` from
    ``clock`` before each of its moves and its move times are charged to it. Returns the timed
    engine's move times and whether the game ended by two passes."""
    times, passes, to_move = [], 0, "b"
    while len(times) < moves_by_timed and passes < 2:
        mover, waiter = (timed, other) if to_move == timed_colour else (other, timed)
        if mover is timed:
            seconds, stones = clock.left()
            timed.send(f"time_left {to_move} {int(math.floor(seconds))} {stones}")
        vertex, spent = mover.send(f"genmove {to_move}")
        assert VERTEX.fullmatch(vertex), vertex  # the timed engine does not resign (--resign 0)
        if mover is timed:
            clock.charge(spent)
            times.append(spent)
        waiter.send(f"play {to_move} {vertex}")
        passes = passes + 1 if vertex == "pass" else 0
        to_move = "w" if to_move == "b" else "b"
    return times, passes >= 2


class CanadianClock:
    """The match runner's clock of one player: ``main`` seconds, then ``stones`` moves per ``period``."""

    def __init__(self, main: float, period: float, stones: int):
        self.main, self.period, self.stones = main, period, stones
        self.in_main, self.seconds, self.stones_left = main > 0, float(main or period), 0 if main > 0 else stones
        self.periods: list[float] = []  # seconds used in each finished byo-yomi period
        self._used = 0.0

    def left(self) -> tuple[float, int]:
        return self.seconds, self.stones_left

    def charge(self, spent: float) -> None:
        self.seconds -= spent
        if self.in_main:
            if self.seconds <= 0 and self.period > 0:
                self.in_main, self.seconds, self.stones_left = False, float(self.period), self.stones
            return
        self._used += spent
        self.stones_left -= 1
        if self.stones_left == 0:
            self.periods.append(self._used)
            self._used, self.seconds, self.stones_left = 0.0, float(self.period), self.stones


def test_a_tournament_in_one_engine_process_keeps_to_the_clock(tmp_path):
    timed = Engine(engine_command("--player", "mcts:sims=16,nodes=8001", "--size", "5", "--resign", "0"),
                   tmp_path / "timed.log")
    other = Engine(engine_command("--player", "random:seed=3", "--size", "5"), tmp_path / "other.log")
    try:
        for engine in (timed, other):
            assert engine.send("name")[0] == "alphago-jax" and engine.send("boardsize 5")[0] == ""
        # Two games on Canadian byo-yomi, 3 s for every 2 moves, the timed engine black then white.
        for game, colour in enumerate(("b", "w")):
            for engine in (timed, other):
                for command in ("clear_board", "komi 7.5", "time_settings 0 3 2"):
                    assert engine.send(command)[0] == "", command
            assert timed.send("final_score")[0] == "W+7.5"  # a fresh board in the same process
            clock = CanadianClock(0, 3, 2)
            times, finished = play_timed_game(timed, other, colour, clock, moves_by_timed=4)
            if finished:
                assert timed.send("final_score")[0] == other.send("final_score")[0]  # the same rules
            assert len(clock.periods) == len(times) // 2 and clock.periods, (game, times)
            for used in clock.periods:
                assert used <= 3 * 1.1, (game, times)  # each period kept to within 10%
            assert times[0] >= 0.5 * 1.5, (game, times)  # the first move of a period searches its share
        # A third game on main time: 6 s, the engine told its time after every move.
        for engine in (timed, other):
            for command in ("clear_board", "time_settings 6 0 0"):
                assert engine.send(command)[0] == ""
        clock = CanadianClock(6, 0, 0)
        times, _ = play_timed_game(timed, other, "b", clock, moves_by_timed=5)
        assert sum(times) <= 6 * 1.1 and min(times) >= 0.1, times  # about a tenth of what is left, each
        # With a second left the engine answers at once rather than lose on time.
        timed.send("time_left w 1 0")
        _, spent = timed.send("genmove w")
        assert spent < 0.5, spent
        assert timed.proc.poll() is None  # one process all along
    finally:
        assert timed.close() == 0 and other.close() == 0
