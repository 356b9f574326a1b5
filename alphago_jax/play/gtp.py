"""A GTP v2 engine (Go Text Protocol, version 2) around any ``Player``.

    engine = GTPEngine(search_player.mcts_player(200), size=9)
    engine.handle("1 play b D4")     # -> "=1"
    engine.handle("genmove w")       # -> "= E5"
    serve(engine)                    # the stdin/stdout loop: ``alphago-jax gtp``

``handle(line) -> reply`` is the pure core (one command line in, the response text out,
without its terminating empty line; None for a line GTP says to ignore); ``serve`` runs it on
streams, reading input in a thread so that the next line can stop a live analysis.

Input is preprocessed as the specification says (section 2): control characters other than
tab and newline are removed, everything from ``#`` on is a comment, tabs become spaces, and
empty lines are ignored. A command may start with a numeric id, which its response repeats.
Every failure is answered ``? <reason>`` and leaves the game as it was; an illegal move is
answered ``? illegal move``.

Commands: the required ones (``protocol_version``, ``name``, ``version``, ``known_command``,
``list_commands``, ``quit``, ``boardsize``, ``clear_board``, ``komi``, ``play``, ``genmove``),
``undo``, ``showboard``, ``final_score`` and ``final_status_list`` (Tromp-Taylor: every stone
on the board is alive), ``time_settings`` and ``time_left`` (Canadian byo-yomi),
``kgs-genmove_cleanup`` (for this project's players the same as ``genmove``: they search with
area scoring, where a dead stone left on the board counts as alive, so passing before it is
captured already looks bad to them), ``fixed_handicap``, ``place_free_handicap``, ``set_free_handicap``,
``loadsgf``, ``printsgf``, ``reg_genmove``, and live analysis: ``lz-analyze`` (Leela Zero's form,
as Sabaki and Lizzie read it), ``kata-analyze`` (KataGo's form, with ``ownership true`` from a
network's ownership head) and ``analyze`` (KataGo's name for ``kata-analyze`` in Sabaki: every float
with a decimal point, as ``kata-analyze`` writes them here). Each answers ``=`` then one line of
``info move ...`` per interval until the next input line, then an empty line; the arguments are
KataGo's (its GTP extensions document)::

    lz-analyze [COLOUR] [INTERVAL] [interval CENTISECONDS] [minmoves N] [maxmoves N]
               [avoid COLOUR VERTEX,VERTEX,... UNTILDEPTH]... [allow COLOUR VERTEX,... UNTILDEPTH]
    kata-analyze ... the same, and [ownership true|false] [pvVisits true|false]

``avoid`` and ``allow`` restrict the analysed player's first move: ``UNTILDEPTH`` 1 (or 2, which
reaches no later move of that player); a restriction of the other player with ``UNTILDEPTH`` 1
restricts nothing. One that reaches deeper into the search is answered with an error naming it,
as are ``ownershipStdev``, ``movesOwnership``, ``movesOwnershipStdev``, ``rootInfo`` and
``pvEdgeVisits`` set to true. ``ownership true`` with a player that has no ownership head leaves
the ownership out (a note on stderr says so once): KataGo-aware GUIs ask for it by default and
keep analysing without it. ``scoreLead`` (and ``scoreMean``, the same) comes from the network's
score head, else its ownership head (the predicted area margin, komi counted); a player with
neither leaves both out.

The engine resigns when the player's estimated win rate falls below ``resign_threshold``.

Each command that sets up a game (``boardsize``, ``clear_board``, ``komi``, the handicap
commands, ``loadsgf``) has the player compile the move it will be asked for, timed (after
``time_settings`` with a limit, or with ``move_time``) or of its fixed effort, before it
answers (``Player.prepare``): controllers send these before they start a clock, so the first
``genmove`` costs what the later ones do. The engine's own first board (``size``, ``komi`` of
the constructor) is not compiled: controllers set their own. A board size and komi compile
once per process, and once per machine with JAX's persistent compilation cache
(``alphago_jax.compile_cache``, which the ``alphago-jax`` command turns on).

This file is over 600 lines and kept whole: it is one command table, each command's argument
checking beside the command, in the order the specification lists them.
"""

from __future__ import annotations

import dataclasses
import math
import os
import queue
import re
import sys
import threading
import time
from typing import Callable

import numpy as np

from alphago_jax import __version__, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.go import fixed_handicap_vertices
from alphago_jax.play.analysis import DEFAULT_MAX_MOVES, AnalysisOptions, kata_analyze_line, lz_analyze_line
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import (
    COLOUR_NAMES, IllegalMove, Position, free_handicap_points, handicap_setup, parse_colour, play_game,
)
from alphago_jax.search import move_budget

MIN_SIZE, MAX_SIZE = 2, 19
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_ID = re.compile(r"[0-9]+")


class GTPFailure(Exception):
    """A command that fails: answered ``? <message>``."""


def preprocess(line: str) -> str:
    """A raw input line as GTP section 2 says: control characters (but tab) removed, the
    ``#`` comment cut, tabs made spaces, surrounding space stripped."""
    line = _CONTROL.sub("", line).split("#", 1)[0]
    return line.replace("\t", " ").strip()


def _shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


class Clock:
    """GTP time settings and both players' clocks (Canadian byo-yomi).

    ``time_settings main byo stones``: ``main`` seconds, then ``stones`` moves in every
    ``byo`` seconds. As the specification says, ``byo > 0`` with ``stones == 0`` means no time
    limit; so does all zero (the default).
    """

    def __init__(self):
        self.settings(0, 0, 0)

    def settings(self, main: int, byo: int, stones: int) -> None:
        self.main, self.byo, self.stones = main, byo, stones
        self.unlimited = (byo > 0 and stones == 0) or (main == 0 and byo == 0)
        start = (float(main), 0) if main > 0 else (float(byo), stones)
        self.left = {BLACK: start, WHITE: start}

    def update(self, colour: int, seconds: float, stones: int) -> None:
        """``time_left``: the controller's word on ``colour``'s clock (``stones`` 0: main time)."""
        self.left[colour] = (float(seconds), stones)

    def budget(self, colour: int, empty_points: int) -> float | None:
        """Seconds for ``colour``'s next move, None without a time limit."""
        if self.unlimited:
            return None
        seconds, stones = self.left[colour]
        if stones == 0 and seconds <= 0 and self.byo > 0:
            seconds, stones = float(self.byo), self.stones  # main time spent: byo-yomi starts
        return max(0.05, move_budget(seconds, stones, empty_points=empty_points))

    def spend(self, colour: int, seconds: float) -> None:
        """Charge ``seconds`` to ``colour``'s clock (until the controller says otherwise)."""
        if self.unlimited:
            return
        left, stones = self.left[colour]
        left -= seconds
        if stones > 0:
            stones -= 1
            if stones == 0:
                left, stones = float(self.byo), self.stones  # a new period
        elif left <= 0 and self.byo > 0:
            left, stones = float(self.byo), self.stones
        self.left[colour] = (left, stones)


class GTPEngine:
    """The GTP engine: a game (``Position``) kept by the engine, a ``Player`` that follows it.

    Args:
      player: who chooses the moves (kept in sync with every command).
      size, komi: the starting board size and komi (GTP controllers set their own).
      name, version: the answers to ``name`` and ``version``.
      resign_threshold: resign when the player's win rate is below this (0: never).
      move_time: seconds per move when no time settings limit the game (None: the player's
        own fixed effort, e.g. simulations per move).
    """

    def __init__(self, player: Player, *, size: int = 19, komi: float = 7.5, name: str = "alphago-jax",
                 version: str = __version__, resign_threshold: float = 0.0, move_time: float | None = None):
        if not 0.0 <= resign_threshold < 1.0:
            raise ValueError(f"resign threshold must be in [0, 1), got {resign_threshold}")
        self.player = player
        self.name, self.version = name, version
        self.resign_threshold = resign_threshold
        self.move_time = move_time
        self.clock = Clock()
        self.komi = float(komi)
        self.quit = False
        self._new_game(size, self.komi, prepare=False)
        self.commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": lambda a: self._no_args(a) or "2",
            "name": lambda a: self._no_args(a) or self.name,
            "version": lambda a: self._no_args(a) or self.version,
            "known_command": self._known_command,
            "list_commands": lambda a: self._no_args(a) or "\n".join(self.commands),
            "quit": self._quit,
            "boardsize": self._boardsize,
            "clear_board": self._clear_board,
            "komi": self._komi,
            "play": self._play,
            "genmove": lambda a: self._genmove(a, commit=True),
            "undo": self._undo,
            "showboard": self._showboard,
            "final_score": self._final_score,
            "final_status_list": self._final_status_list,
            "time_settings": self._time_settings,
            "time_left": self._time_left,
            "kgs-genmove_cleanup": lambda a: self._genmove(a, commit=True, cleanup=True),
            "fixed_handicap": self._fixed_handicap,
            "place_free_handicap": self._place_free_handicap,
            "set_free_handicap": self._set_free_handicap,
            "loadsgf": self._loadsgf,
            "printsgf": self._printsgf,
            "reg_genmove": lambda a: self._genmove(a, commit=False),
            "lz-analyze": None,  # the analysis commands stream their responses: see ``respond``
            "kata-analyze": None,
            "analyze": None,
        }
        self._noted_no_ownership = False

    # -- the protocol ----------------------------------------------------------------------
    def handle(self, line: str) -> str | None:
        """The response to one input line, without its terminating empty line.

        None when GTP says to ignore the line (empty, or only a comment). The analysis commands
        answer with one ``info`` line here (``serve`` streams them until the next input).
        """
        parts: list[str] = []
        self.respond(line, parts.append)
        text = "".join(parts)
        return text[:-2] if text.endswith("\n\n") else (text or None)

    def respond(self, line: str, write: Callable[[str], None],
                interrupted: Callable[[], bool] | None = None) -> bool:
        """Answer one input line through ``write`` (the full response with its empty line).

        Args:
          interrupted: for streamed responses (the analysis commands): true once the next input line
            waits; None: a streamed response stops after its first update.

        Returns:
          False after ``quit``, else True.
        """
        text = preprocess(line)
        if not text:
            return True
        words = text.split()
        ident = ""
        if _ID.fullmatch(words[0]):
            ident = words.pop(0)
        if not words:
            write(f"?{ident} syntax error: no command after the id\n\n")
            return True
        command, args = words[0], words[1:]
        if command in ANALYZE_COMMANDS:
            self._analyze(ident, args, write, interrupted, kata=command != "lz-analyze")
            return True
        handler = self.commands.get(command)
        if handler is None:
            write(f"?{ident} unknown command\n\n")
            return True
        try:
            reply = handler(args)
        except GTPFailure as e:
            write(f"?{ident} {_one_line(str(e))}\n\n")
            return True
        except Exception as e:  # a bug must not end the session; the controller hears of it
            write(f"?{ident} internal error: {_one_line(f'{type(e).__name__}: {e}')}\n\n")
            return True
        write(f"={ident} {reply}\n\n" if reply else f"={ident}\n\n")
        return not self.quit

    # -- argument parsing ------------------------------------------------------------------
    @staticmethod
    def _no_args(args) -> None:
        if args:
            raise GTPFailure(f"syntax error: unexpected argument {_shown(args[0])}")

    @staticmethod
    def _count(args, n: int, usage: str) -> None:
        if len(args) != n:
            raise GTPFailure(f"syntax error: usage: {usage}")

    @staticmethod
    def _int(text: str, what: str, low: int | None = None) -> int:
        if not re.fullmatch(r"[+-]?[0-9]{1,9}", text):
            raise GTPFailure(f"syntax error: {what} must be an integer, got {_shown(text)}")
        value = int(text)
        if low is not None and value < low:
            raise GTPFailure(f"syntax error: {what} must be at least {low}, got {value}")
        return value

    @staticmethod
    def _colour(text: str) -> int:
        try:
            return parse_colour(text)
        except ValueError:
            raise GTPFailure(f"syntax error: invalid colour {_shown(text)}") from None

    def _vertex(self, text: str) -> int:
        try:
            return grid.from_vertex(text, self.pos.size)
        except ValueError:
            raise GTPFailure(f"syntax error: invalid vertex {_shown(text)}") from None

    # -- game state ------------------------------------------------------------------------
    def _new_game(self, size: int, komi: float, setup=None, first=BLACK, handicap: int = 0,
                  moves=(), prepare: bool = True) -> None:
        """Replace the game (the player first: it may refuse the size), then compile the move
        the player will be asked for unless ``prepare`` is False. Raises ValueError."""
        pos = Position(play_game(size, komi), setup, first, handicap)
        for colour, action in moves:
            pos.play(colour, action)
        self.player.new_game(size, komi, pos.setup, first, handicap)
        for colour, action in moves:
            self.player.play(colour, action)
        self.pos, self.komi = pos, float(komi)
        if prepare:
            self._prepare()

    @property
    def timed(self) -> bool:
        """Moves are searched for a time: ``move_time``, or time settings with a limit."""
        return self.move_time is not None or not self.clock.unlimited

    def _prepare(self) -> None:
        """Compile the player's next move, timed or of its fixed effort (``Player.prepare``),
        and the engine's own step of it, now, before a clock runs for it."""
        self.player.prepare(self.move_time or 1.0 if self.timed else None)  # timed or not is what counts
        self.pos.compile()

    def _restore(self, pos: Position) -> None:
        """Put the engine and the player back on ``pos`` after a failed change."""
        self._new_game(pos.size, float(pos.game.komi), pos.setup, pos.first_player, pos.handicap, pos.moves)

    def _result(self) -> str | None:
        """The Tromp-Taylor result once both players have passed, else None."""
        return sgf.result_string(self.pos.score()) if self.pos.consecutive_passes >= 2 else None

    # -- commands --------------------------------------------------------------------------
    def _known_command(self, args) -> str:
        self._count(args, 1, "known_command COMMAND")
        return "true" if args[0] in self.commands else "false"

    def _quit(self, args) -> str:
        self.quit = True
        return ""

    def _boardsize(self, args) -> str:
        self._count(args, 1, "boardsize SIZE")
        size = self._int(args[0], "size")
        if not MIN_SIZE <= size <= MAX_SIZE:
            raise GTPFailure("unacceptable size")
        old = self.pos
        try:
            self._new_game(size, self.komi)
        except ValueError as e:
            self._restore(old)
            raise GTPFailure(f"unacceptable size ({e})") from None
        return ""

    def _clear_board(self, args) -> str:
        self._no_args(args)
        self._new_game(self.pos.size, self.komi)
        return ""

    def _komi(self, args) -> str:
        self._count(args, 1, "komi FLOAT")
        try:
            komi = float(args[0])
        except ValueError:
            komi = math.nan
        if not math.isfinite(komi) or abs(komi) > 1000:
            raise GTPFailure(f"syntax error: komi must be a number, got {_shown(args[0])}")
        if komi != self.komi:
            p = self.pos
            self._new_game(p.size, komi, p.setup, p.first_player, p.handicap, p.moves)
        return ""

    def _play(self, args) -> str:
        self._count(args, 2, "play COLOUR VERTEX")
        colour, action = self._colour(args[0]), self._vertex(args[1])
        try:
            self.pos.play(colour, action)
        except IllegalMove:
            raise GTPFailure("illegal move") from None
        try:
            self.player.play(colour, action)
        except ValueError:
            self.pos.undo()
            raise GTPFailure("illegal move") from None
        return ""

    def _genmove(self, args, commit: bool, cleanup: bool = False) -> str:
        self._count(args, 1, "genmove COLOUR")
        colour = self._colour(args[0])
        pos = self.pos
        if pos.at_move_limit:
            return "pass"  # the game is over by the move limit: nothing more can be played
        empty = int(np.sum(pos.board == 0))
        seconds = self.clock.budget(colour, empty)
        if seconds is None:
            seconds = self.move_time
        t0 = time.perf_counter()
        decision = self.player.genmove(colour, seconds, commit=commit, cleanup=cleanup,
                                       resign_below=self.resign_threshold)
        if commit:
            self.clock.spend(colour, time.perf_counter() - t0)
        if decision.action == RESIGN:
            return "resign"
        if commit:
            try:
                pos.play(colour, decision.action)
            except IllegalMove as e:
                self.player.undo()
                raise GTPFailure(f"the player chose an illegal move "
                                 f"{grid.to_vertex(decision.action, pos.size)}: {e}") from None
        return grid.to_vertex(decision.action, pos.size)

    def _undo(self, args) -> str:
        self._no_args(args)
        if not self.pos.moves:
            raise GTPFailure("cannot undo")
        self.pos.undo()
        self.player.undo()
        return ""

    def _showboard(self, args) -> str:
        self._no_args(args)
        pos = self.pos
        black, white = pos.area()
        return (f"\n{pos.render()}\n{COLOUR_NAMES[pos.to_play].capitalize()} to play; move {len(pos.moves)}; "
                f"komi {pos.game.komi:g}; Tromp-Taylor area black {black}, white {white}")

    def _final_score(self, args) -> str:
        self._no_args(args)
        return sgf.result_string(self.pos.score())

    def _final_status_list(self, args) -> str:
        self._count(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GTPFailure(f"syntax error: status must be alive, dead or seki, got {_shown(args[0])}")
        if status != "alive":
            return ""  # Tromp-Taylor scoring: no stone is dead, none is in seki
        return " ".join(grid.to_vertex(int(p), self.pos.size) for p in np.flatnonzero(self.pos.board))

    def _time_settings(self, args) -> str:
        self._count(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main, byo, stones = (self._int(a, w, 0) for a, w in zip(args, ("main time", "byo-yomi time", "stones")))
        self.clock.settings(main, byo, stones)
        self._prepare()
        return ""

    def _time_left(self, args) -> str:
        self._count(args, 3, "time_left COLOUR TIME STONES")
        colour = self._colour(args[0])
        seconds, stones = self._int(args[1], "time", 0), self._int(args[2], "stones", 0)
        self.clock.update(colour, seconds, stones)
        return ""

    def _require_empty(self) -> None:
        if not self.pos.is_empty():
            raise GTPFailure("board not empty")

    def _set_handicap(self, points: list[int]) -> str:
        pos = self.pos
        self._new_game(pos.size, self.komi, handicap_setup(pos.size, points), WHITE, len(points))
        return " ".join(grid.to_vertex(p, pos.size) for p in points)

    def _fixed_handicap(self, args) -> str:
        self._count(args, 1, "fixed_handicap NUMBER_OF_STONES")
        stones = self._int(args[0], "number of stones")
        self._require_empty()
        try:
            vertices = fixed_handicap_vertices(self.pos.size, stones)
        except ValueError:
            raise GTPFailure("invalid number of stones") from None
        return self._set_handicap([grid.from_vertex(v, self.pos.size) for v in vertices])

    def _place_free_handicap(self, args) -> str:
        self._count(args, 1, "place_free_handicap NUMBER_OF_STONES")
        stones = self._int(args[0], "number of stones")
        self._require_empty()
        if not 2 <= stones < self.pos.num_points:
            raise GTPFailure("invalid number of stones")
        return self._set_handicap(free_handicap_points(self.pos.size, stones))

    def _set_free_handicap(self, args) -> str:
        self._require_empty()
        points = []
        for v in args:
            try:
                p = grid.from_vertex(v, self.pos.size)
            except ValueError:
                raise GTPFailure(f"bad vertex list: invalid vertex {_shown(v)}") from None
            if p == self.pos.pass_action or p in points:
                raise GTPFailure(f"bad vertex list: {_shown(v)} is a pass or repeated")
            points.append(p)
        if not 2 <= len(points) < self.pos.num_points:
            raise GTPFailure("bad vertex list: give 2 or more vertices, leaving a point empty")
        self._set_handicap(points)
        return ""

    def _loadsgf(self, args) -> str:
        if len(args) not in (1, 2):
            raise GTPFailure("syntax error: usage: loadsgf FILENAME [MOVE_NUMBER]")
        upto = self._int(args[1], "move number", 1) - 1 if len(args) == 2 else None
        if not os.path.isfile(args[0]):  # not a directory, device or pipe, which could block
            raise GTPFailure(f"cannot load file: {_shown(args[0])} is not a file")
        try:
            record = sgf.load(args[0], require_moves=False)
            Position.from_record(play_game(record.size, record.komi), record, upto)  # check before changing
        except (sgf.SGFError, ValueError) as e:
            raise GTPFailure(f"cannot load file: {e}") from None
        old = self.pos
        moves = record.moves[:upto]
        try:
            self._new_game(record.size, record.komi, record.setup_board(), record.first_player, record.handicap, moves)
        except ValueError as e:
            self._restore(old)
            raise GTPFailure(f"cannot load file: {e}") from None
        return ""

    def _printsgf(self, args) -> str:
        if len(args) > 1:
            raise GTPFailure("syntax error: usage: printsgf [FILENAME]")
        record = self.pos.record(result=self._result())
        if args:
            try:
                sgf.save(record, args[0])
            except OSError as e:
                raise GTPFailure(f"cannot save file: {e.strerror or e}") from None
            return ""
        text = sgf.dump(record).decode("utf-8")
        return "\n".join(line for line in text.splitlines() if line.strip())

    def _analyze(self, ident: str, args, write, interrupted, kata: bool) -> None:
        """``lz-analyze`` (``kata`` False), ``kata-analyze`` and ``analyze``: see the module docstring."""
        try:
            request = self._analyze_args(args, kata)
            if not self.player.can_analyze:
                raise GTPFailure(f"player {self.player.name!r} has no analysis")
            if request.options.allowed is not None and not self.player.can_restrict_analysis:
                raise GTPFailure(f"player {self.player.name!r} cannot restrict its analysis (avoid, allow)")
        except GTPFailure as e:
            write(f"?{ident} {_one_line(str(e))}\n\n")
            return
        write(f"={ident}\n")
        size = self.pos.size
        stop = interrupted if interrupted is not None else (lambda: True)
        limit = request.options.max_moves

        def report(moves, ownership=None):
            moves = moves[:limit]
            if not moves:  # an empty line would end the response
                return
            if not kata:
                write(lz_analyze_line(moves, size) + "\n")
                return
            if request.ownership and ownership is None and not self._noted_no_ownership:
                self._noted_no_ownership = True
                print(f"kata-analyze: player {self.player.name!r} has no ownership head: the ownership is left out",
                      file=sys.stderr, flush=True)
            write(kata_analyze_line(moves, size, ownership if request.ownership else None, request.pv_visits) + "\n")

        try:
            self.player.analyze(request.colour, report, stop, request.interval, request.options)
        except Exception as e:  # the response has begun: end it, say why on stderr
            print(f"{'kata-analyze' if kata else 'lz-analyze'} stopped: {type(e).__name__}: {e}", file=sys.stderr)
        write("\n")

    def _analyze_args(self, args, kata: bool) -> AnalyzeRequest:
        """``[COLOUR] [INTERVAL] KEY VALUE...`` (see the module docstring) as an ``AnalyzeRequest``."""
        args = list(args)
        keys = ANALYZE_KEYS | (KATA_SWITCHES if kata else frozenset())
        colour = self.pos.to_play
        if args and not _ID.fullmatch(args[0]) and args[0].lower() not in keys:
            colour = self._colour(args.pop(0))
        centis = 100
        if args and _ID.fullmatch(args[0]):
            centis = self._int(args.pop(0), "interval", 0)
        numbers = {"interval": centis, "minmoves": 0, "maxmoves": None}
        switches: dict[str, bool] = {}
        groups: dict[str, list[tuple[int, list[int], int]]] = {"avoid": [], "allow": []}
        while args:
            word = args.pop(0)
            key = word.lower()
            if key not in keys:
                raise GTPFailure(f"syntax error: unexpected argument {_shown(word)}")
            if key in groups:
                if len(args) < 3:
                    raise GTPFailure(f"syntax error: usage: {key} COLOUR VERTEX,VERTEX,... UNTILDEPTH")
                who, vertices, depth = self._colour(args.pop(0)), args.pop(0), self._int(args.pop(0), "untildepth", 0)
                points = [self._vertex(v) for v in vertices.split(",") if v]
                if not points:
                    raise GTPFailure(f"syntax error: {key} needs at least one vertex")
                groups[key].append((who, points, depth))
            elif key in ANALYZE_NUMBERS:
                if not args:
                    raise GTPFailure(f"syntax error: {word} needs a number")
                numbers[key] = self._int(args.pop(0), word, 0)
            else:
                if not args:
                    raise GTPFailure(f"syntax error: {word} needs true or false")
                value = args.pop(0)
                if value.lower() not in ("true", "false"):
                    raise GTPFailure(f"syntax error: {word} must be true or false, got {_shown(value)}")
                switches[key] = value.lower() == "true"
                if switches[key] and key not in ("ownership", "pvvisits"):
                    raise GTPFailure(f"{word} is not supported (kata-analyze supports ownership and pvVisits)")
        if groups["allow"] and (groups["avoid"] or len(groups["allow"]) > 1):
            raise GTPFailure("syntax error: allow may be given once, and not with avoid")
        min_moves, max_moves = numbers["minmoves"], numbers["maxmoves"]
        options = AnalysisOptions(min_moves=min_moves,
                                  max_moves=max(DEFAULT_MAX_MOVES, min_moves) if max_moves is None else max_moves,
                                  allowed=self._first_moves(colour, groups), heads=kata)
        centis = numbers["interval"]
        return AnalyzeRequest(colour, centis / 100 if centis > 0 else 1.0, options,
                              switches.get("ownership", False), switches.get("pvvisits", False))

    def _first_moves(self, colour: int, groups) -> np.ndarray | None:
        """bool[N + 1]: the analysed player's first moves that the ``avoid`` and ``allow`` groups
        (``{"avoid": [(colour, points, untildepth)], "allow": [...]}``) leave; None when they
        restrict nothing. Raises ``GTPFailure`` for a restriction past the first move, or one that
        leaves no legal move."""
        allowed = np.ones(self.pos.num_points + 1, bool)
        for key, entries in groups.items():
            for who, points, depth in entries:
                # KataGo's depths: 0 is the analysed player's first move, the other player moves
                # at 1, the analysed player again at 2; a group holds at the depths below UNTILDEPTH.
                first = 0 if who == colour else 1  # the group's player's first depth
                if depth <= first:
                    continue  # it restricts nothing
                if depth > 2 or who != colour:
                    raise GTPFailure(f"{key} {COLOUR_NAMES[who]} with UNTILDEPTH {depth} is not supported: only the "
                                     f"analysed player's first move can be restricted (UNTILDEPTH 1)")
                mask = np.zeros_like(allowed)
                mask[points] = True
                allowed &= ~mask if key == "avoid" else mask
        if allowed.all():
            return None
        if not (allowed & self.pos.legal_mask(colour)).any():
            raise GTPFailure("avoid/allow leave no legal move to analyse")
        return allowed


ANALYZE_COMMANDS = ("lz-analyze", "kata-analyze", "analyze")
"""The live analysis commands (``GTPEngine._analyze``)."""

ANALYZE_NUMBERS = frozenset({"interval", "minmoves", "maxmoves"})
ANALYZE_KEYS = ANALYZE_NUMBERS | {"avoid", "allow"}
"""The key-value arguments of every analysis command (lower case)."""

KATA_SWITCHES = frozenset({"ownership", "ownershipstdev", "movesownership", "movesownershipstdev", "pvvisits",
                           "pvedgevisits", "rootinfo"})
"""The true/false arguments of ``kata-analyze`` (lower case); only ``ownership`` and ``pvVisits`` may be true."""


@dataclasses.dataclass(frozen=True)
class AnalyzeRequest:
    """A parsed analysis command.

    Attributes:
      colour: the player analysed.
      interval: seconds between reports.
      options: what the player is asked (``AnalysisOptions``).
      ownership: ``kata-analyze``'s ``ownership true``.
      pv_visits: ``kata-analyze``'s ``pvVisits true``.
    """

    colour: int
    interval: float
    options: AnalysisOptions
    ownership: bool = False
    pv_visits: bool = False


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "failed"


def serve(engine: GTPEngine, stdin=None, stdout=None) -> int:
    """Run ``engine`` on streams until ``quit`` or the end of input.

    Args:
      stdin: a binary stream (default ``sys.stdin.buffer``); lines are decoded as UTF-8, bad
        bytes replaced (they then fail as unknown commands or syntax errors).
      stdout: a text stream (default ``sys.stdout``), flushed after every piece.

    Returns:
      0.
    """
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    lines: queue.Queue = queue.Queue()
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        fd = None

    def put(raw) -> None:
        lines.put(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)

    def read():
        # From a file descriptor, with os.read rather than the stream's readline: a thread blocked
        # in a buffered stream's readline holds that stream's lock, and when the engine quits while
        # the controller keeps the pipe open, the interpreter cannot close sys.stdin at exit (a
        # fatal error and SIGABRT instead of exit status 0).
        try:
            if fd is None:
                for raw in iter(stdin.readline, b""):
                    put(raw)
                return
            pending = b""
            while chunk := os.read(fd, 65536):
                *complete, pending = (pending + chunk).split(b"\n")
                for raw in complete:
                    put(raw + b"\n")
            if pending:
                put(pending)
        finally:
            lines.put(None)

    threading.Thread(target=read, name="gtp-input", daemon=True).start()

    def write(text: str) -> None:
        stdout.write(text)
        stdout.flush()

    while True:
        line = lines.get()
        if line is None:
            return 0
        if not engine.respond(line, write, interrupted=lambda: not lines.empty()):
            return 0
