"""A 9x9 tactical suite: hand-made positions with their right moves, and a player's score on them.

The suite (``data/tactics_9x9.toml``, one ``[[position]]`` table each) holds small problems in
nine categories (``CATEGORIES``): saving a string in atari by capturing, capturing races, ladders,
snapbacks, nets, throw-ins, connections, life and death, and the cleanup at the end of a game,
where dead stones left on the board count for their owner under Tromp-Taylor and must be
captured. Each position gives::

    name = "ladder-block"            # unique
    category = "ladder"
    to_play = "black"                # or "white"
    komi = 7.5                       # optional, default 7.5
    right = ["D4"]                   # every move that solves it (GTP vertices; pass never does)
    target = "D5"                    # optional: a stone of the string at stake
    description = "why, in one line"
    diagram = \"\"\"
    .........                        # 9 lines of 9: X black, O white, . empty; the first line is
    ...                              # the top edge (GTP row 9), the first column A
    \"\"\"

The right moves are exact: each one solves the problem, and every other move fails. GNU Go 3.8 at
level 10 answers every position with one of them, and every position but the cleanups names its
``target``, a stone of the string at stake: after each right move and after no other, GNU Go's
reading finds that string lost (the opponent's) or safe (the mover's), owl reading in life and
death and tactical reading elsewhere (``experiments/tactics_reading.py``;
``tests/test_tactics_suite.py`` repeats both checks). In the cleanup category the right moves
are those that lose no points on a Tromp-Taylor count after best play (in these filled-in
endings, the moves that capture or reduce the dead stones); a player is asked there for its
cleanup move (GTP ``kgs-genmove_cleanup`` for engines that know it: plain GNU Go passes, counting
on the dead stones being removed by agreement; this project's players play the same move either
way).

    problems = load_suite()                        # list[Problem], validated
    with make_player("gnugo:level=10") as player:
        print(report(solve(player, problems)))

``alphago-jax tactics [PLAYER ...]`` (``play.commands``) prints that table for one or more
players side by side, and ``--sgf DIR`` writes each position as an SGF file.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import math
import pathlib
import time as _time
import tomllib
from typing import Mapping, Sequence

import numpy as np

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.gtp_client import GTPError
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import COLOUR_NAMES, Position, parse_colour, play_game

SIZE = 9
DEFAULT_KOMI = 7.5
CATEGORIES = ("capture-to-save", "capturing-race", "ladder", "snapback", "net", "throw-in", "connect",
              "life-and-death", "cleanup")
"""The categories, in the order the report lists them."""

_KEYS = {"name", "category", "to_play", "komi", "right", "target", "description", "diagram"}
_REQUIRED = ("name", "category", "to_play", "right", "description", "diagram")
_STONES = {"X": BLACK, "O": WHITE, ".": 0}


def suite_path() -> pathlib.Path:
    """The shipped suite, ``alphago_jax/data/tactics_9x9.toml``."""
    return pathlib.Path(str(importlib.resources.files("alphago_jax") / "data" / "tactics_9x9.toml"))


@dataclasses.dataclass(frozen=True)
class Problem:
    """One position of the suite.

    Attributes:
      name: unique in the suite.
      category: one of ``CATEGORIES``.
      to_play: the colour to move, ``BLACK`` (+1) or ``WHITE`` (-1).
      diagram: the board, 9 lines of 9 characters (X black, O white, . empty; top edge first).
      komi: points given to white.
      right: the right moves as GTP vertices (upper case), e.g. ``("E4", "E3")``.
      description: why, in one line.
      target: a stone of the string at stake (GTP vertex), or None: the right moves are those
        after which GNU Go's reading finds that string lost (the opponent's) or safe (the mover's).
      state: the position as this project's Go state (``Go.init_from_board`` of the setup
        stones, ``to_play`` to move; positional superko, the rules of ``position.play_game``).
    """

    name: str
    category: str
    to_play: int
    diagram: str
    komi: float
    right: tuple[str, ...]
    description: str
    state: object = dataclasses.field(compare=False, repr=False)
    target: str | None = None

    @property
    def setup(self) -> np.ndarray:
        """int8[81]: the stones, +1 black, -1 white, index ``row * 9 + col`` (row 0 the top edge)."""
        return diagram_board(self.diagram)

    @property
    def right_actions(self) -> frozenset[int]:
        """The right moves as actions (``row * 9 + col``)."""
        return frozenset(grid.from_vertex(v, SIZE) for v in self.right)

    @property
    def colour(self) -> str:
        """``"black"`` or ``"white"``: the colour to move."""
        return COLOUR_NAMES[self.to_play]

    def gtp_commands(self) -> list[str]:
        """GTP commands that set the position up on an engine: the board, komi, and the stones
        as moves of either colour (GTP has no white setup stones; adding stones never captures)."""
        return ([f"boardsize {SIZE}", "clear_board", f"komi {self.komi:g}"]
                + [f"play {COLOUR_NAMES[c]} {grid.to_vertex(int(q), SIZE)}"
                   for c in (BLACK, WHITE) for q in np.flatnonzero(self.setup == c)])


def diagram_board(diagram: str) -> np.ndarray:
    """int8[81] of a diagram (9 lines of 9 of ``X``, ``O``, ``.``; blank lines around it ignored).

    Raises:
      ValueError: saying what is wrong with its shape or characters.
    """
    lines = [line.strip() for line in diagram.strip().splitlines()]
    if len(lines) != SIZE:
        raise ValueError(f"has {len(lines)} lines, expected {SIZE}")
    for i, line in enumerate(lines):
        if len(line) != SIZE:
            raise ValueError(f"line {i + 1} ({line!r}) has {len(line)} characters, expected {SIZE}")
        bad = sorted(set(line) - set(_STONES))
        if bad:
            raise ValueError(f"line {i + 1} ({line!r}) has {bad[0]!r}; use X (black), O (white) or . (empty)")
    return np.array([_STONES[ch] for line in lines for ch in line], np.int8)


# ----------------------------------------------------------------------------------- loading

def _problem(entry: dict, where: str) -> Problem:
    """One validated ``Problem`` from a ``[[position]]`` table; ``where`` prefixes every error."""
    def fail(field: str, message: str):
        return ValueError(f"{where}: {field}: {message}")

    if not isinstance(entry, dict):
        raise ValueError(f"{where}: not a table")
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise fail(unknown[0], f"unknown field (fields: {', '.join(sorted(_KEYS))})")
    for key in _REQUIRED:
        if key not in entry:
            raise fail(key, "missing")
    for key in ("name", "category", "to_play", "description", "diagram"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise fail(key, f"must be a non-empty string, got {entry[key]!r}")
    if entry["category"] not in CATEGORIES:
        raise fail("category", f"unknown category {entry['category']!r} (categories: {', '.join(CATEGORIES)})")
    try:
        to_play = parse_colour(entry["to_play"])
    except ValueError:
        raise fail("to_play", f"must be black or white, got {entry['to_play']!r}") from None
    komi = entry.get("komi", DEFAULT_KOMI)
    if isinstance(komi, bool) or not isinstance(komi, (int, float)) or not math.isfinite(komi):
        raise fail("komi", f"must be a number, got {komi!r}")
    try:
        board = diagram_board(entry["diagram"])
    except ValueError as e:
        raise fail("diagram", str(e)) from None
    try:
        position = Position(play_game(SIZE, float(komi)), board, to_play)
    except ValueError as e:  # a chain without liberties
        raise fail("diagram", str(e)) from None
    right = entry["right"]
    if not isinstance(right, list) or not right:
        raise fail("right", f"must be a non-empty list of vertices, got {right!r}")
    moves = []
    for vertex in right:
        if not isinstance(vertex, str):
            raise fail("right", f"{vertex!r} is not a vertex")
        try:
            action = grid.from_vertex(vertex, SIZE)
        except ValueError as e:
            raise fail("right", str(e)) from None
        if action == SIZE * SIZE:
            raise fail("right", "pass is never a right move here")
        why = position.why_illegal(to_play, action)
        if why is not None:
            raise fail("right", f"{vertex} is illegal for {COLOUR_NAMES[to_play]}: {why}")
        moves.append(grid.to_vertex(action, SIZE))
    if len(set(moves)) != len(moves):
        raise fail("right", f"a move is listed twice in {right!r}")
    target = entry.get("target")
    if target is not None:
        try:
            point = grid.from_vertex(str(target), SIZE)
        except ValueError as e:
            raise fail("target", str(e)) from None
        if point == SIZE * SIZE or board[point] == 0:
            raise fail("target", f"{target!r} is not a stone")
        target = grid.to_vertex(point, SIZE)
    return Problem(name=entry["name"], category=entry["category"], to_play=to_play,
                   diagram="\n".join(line.strip() for line in entry["diagram"].strip().splitlines()),
                   komi=float(komi), right=tuple(moves), description=entry["description"].strip(),
                   state=position.state, target=target)


def load_suite(path=None) -> list[Problem]:
    """The problems of a suite file (default the shipped ``suite_path()``), in file order.

    Raises:
      ValueError: naming the file, the position (its name and number) and the field at fault: a
        malformed file, an unknown category, a diagram of the wrong shape or with a chain
        without liberties, a bad or illegal right move, a duplicate name.
    """
    path = pathlib.Path(suite_path() if path is None else path)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    entries = data.get("position")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: no [[position]] tables")
    problems, names = [], set()
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"{path.name}: position {i + 1}" + (f" ({name!r})" if isinstance(name, str) else "")
        problem = _problem(entry, where)
        if problem.name in names:
            raise ValueError(f"{where}: name: {problem.name!r} is used twice")
        names.add(problem.name)
        problems.append(problem)
    return problems


def select(problems: Sequence[Problem], categories: Sequence[str] | None = None,
           names: Sequence[str] | None = None) -> list[Problem]:
    """The problems of the given categories and, of those, with the given names (all when None
    or empty).

    Raises:
      ValueError: for an unknown category or a name not in ``problems``.
    """
    for category in categories or ():
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r} (categories: {', '.join(CATEGORIES)})")
    unknown = sorted(set(names or ()) - {p.name for p in problems})
    if unknown:
        raise ValueError(f"no position named {', '.join(map(repr, unknown))} in the suite")
    return [p for p in problems if (not categories or p.category in categories) and (not names or p.name in names)]


# ----------------------------------------------------------------------------------- solving

@dataclasses.dataclass(frozen=True)
class Result:
    """A player's answer to one problem.

    Attributes:
      problem: the problem.
      action: the move chosen (``row * 9 + col``, 81 for pass, ``RESIGN``), or None when the
        player failed (``error``).
      seconds: the time the answer took.
      error: what went wrong (an engine that died or refused the position), else None.
    """

    problem: Problem
    action: int | None
    seconds: float = 0.0
    error: str | None = None

    @property
    def solved(self) -> bool:
        return self.action is not None and self.action in self.problem.right_actions

    @property
    def move(self) -> str:
        """The move as text: a vertex, ``pass``, ``resign`` or ``error``."""
        if self.action is None:
            return "error"
        return "resign" if self.action == RESIGN else grid.to_vertex(self.action, SIZE)


def set_up(player: Player, problem: Problem) -> None:
    """Start a game at ``problem``'s position with its colour to move: as setup stones, or, for a
    player that cannot take them (GTP engines take no white setup stones), as moves of either
    colour on an empty board (adding stones to a legal position never captures)."""
    try:
        player.new_game(SIZE, problem.komi, setup=problem.setup, first_player=problem.to_play)
        return
    except ValueError:
        pass
    player.new_game(SIZE, problem.komi)
    for colour in (BLACK, WHITE):
        for point in np.flatnonzero(problem.setup == colour):
            player.play(colour, int(point))


def solve(player: Player, problems: Sequence[Problem], time: float | None = None) -> list[Result]:
    """Ask ``player`` for its move in each problem (``time`` seconds per move; None: its own fixed
    effort). Cleanup problems ask for the cleanup move (``genmove(cleanup=True)``). A player
    that fails on one problem (``GTPError``, ``ValueError``) gets it wrong, with the reason."""
    results = []
    for problem in problems:
        start = _time.perf_counter()
        try:
            set_up(player, problem)
            decision = player.genmove(problem.to_play, time, cleanup=problem.category == "cleanup")
        except (GTPError, ValueError) as e:
            results.append(Result(problem, None, _time.perf_counter() - start, f"{type(e).__name__}: {e}"))
            continue
        results.append(Result(problem, int(decision.action), _time.perf_counter() - start))
    return results


# ----------------------------------------------------------------------------------- report

def _columns(results) -> dict[str, Sequence[Result]]:
    if isinstance(results, Mapping):
        return dict(results)
    return {"solved": results}


SECONDS_ROW = "s / position"


def report(results: Sequence[Result] | Mapping[str, Sequence[Result]]) -> str:
    """A table of solved / total per category and overall, each player's mean seconds per
    position (``SECONDS_ROW``), then the failed positions with the move played. ``results``: one
    player's, or ``{player name: results}`` for columns side by side (the same problems in each)."""
    columns = _columns(results)
    first = next(iter(columns.values()), [])
    categories = [c for c in CATEGORIES if any(r.problem.category == c for r in first)]
    names = list(columns)
    width = max([len("category"), len(SECONDS_ROW), *map(len, categories)])
    cell = [max(len(n), 11) for n in names]
    lines = ["  ".join(["category".ljust(width), *(n.rjust(w) for n, w in zip(names, cell))])]
    for category in [*categories, None]:
        row = []
        for rs, w in zip(columns.values(), cell):
            picked = [r for r in rs if category is None or r.problem.category == category]
            solved = sum(r.solved for r in picked)
            pct = f" {100 * solved / len(picked):3.0f}%" if picked else ""
            row.append(f"{solved}/{len(picked)}{pct}".rjust(w))
        lines.append("  ".join([(category or "overall").ljust(width), *row]))
    seconds = [f"{sum(r.seconds for r in rs) / max(len(rs), 1):.2f}".rjust(w) for rs, w in zip(columns.values(), cell)]
    lines.append("  ".join([SECONDS_ROW.ljust(width), *seconds]))
    for name, rs in columns.items():
        failed = [r for r in rs if not r.solved]
        title = f"failed ({name})" if len(columns) > 1 or name != "solved" else "failed"
        lines.append(f"\n{title}: {len(failed)}" if failed else f"\n{title}: none")
        for r in failed:
            p = r.problem
            why = f" ({r.error})" if r.error else ""
            lines.append(f"  {p.name} [{p.category}, {p.colour}]: played {r.move}{why}; right {' '.join(p.right)}")
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------- SGF

def record(problem: Problem) -> sgf.GameRecord:
    """The problem as an SGF record: its stones as AB/AW, its colour to move, the right moves and
    the description in the root comment."""
    board = problem.setup
    comment = (f"{problem.name} ({problem.category}): {problem.colour} to play. "
               f"Right: {', '.join(problem.right)}. {problem.description}")
    return sgf.GameRecord(size=SIZE, komi=problem.komi,
                          black_setup=tuple(int(p) for p in np.flatnonzero(board == BLACK)),
                          white_setup=tuple(int(p) for p in np.flatnonzero(board == WHITE)),
                          first_player=problem.to_play, comment=comment)


def sgf_bytes(problem: Problem) -> bytes:
    """``record(problem)`` as SGF, with PL always set and the right moves marked (TR)."""
    from sgfmill import sgf as sgfmill

    game = sgfmill.Sgf_game.from_bytes(sgf.dump(record(problem)))
    root = game.get_root()
    root.set("PL", "b" if problem.to_play == BLACK else "w")
    root.set("TR", {(SIZE - 1 - a // SIZE, a % SIZE) for a in problem.right_actions})
    return game.serialise()


def write_sgfs(problems: Sequence[Problem], directory) -> list[pathlib.Path]:
    """Write each problem to ``directory/NN-name.sgf`` (NN its number in ``problems``); return the paths."""
    from alphago_jax.files import write_atomic

    out = pathlib.Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, problem in enumerate(problems):
        path = out / f"{i + 1:02d}-{problem.name}.sgf"
        write_atomic(path, sgf_bytes(problem))
        paths.append(path)
    return paths
