"""The GTP engine's commands: a game (``Position``) kept by the engine, a ``Player`` that follows it.

    engine = GTPEngine(search_player.mcts_player(200), size=9)
    engine.handle("1 play b D4")     # -> "=1"
    engine.handle("genmove w")       # -> "= E5"
    gtp.serve(engine)                # the stdin/stdout loop: ``alphago-jax gtp``

``docs/gtp.md`` lists the commands and their replies. Each command that sets up a game has
the player compile the move it will be asked for (``Player.prepare``) before it answers, since
controllers send these before they start a clock.
"""

from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from alphago_jax import __version__, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.games.go import fixed_handicap_vertices
from alphago_jax.play.analysis import kata_analyze_line, lz_analyze_line, parse_analyze_args
from alphago_jax.play.gtp import (
    Clock, Engine, GTPFailure, Stream, arg_count, colour_arg, int_arg, no_args, quoted, vertex_arg,
)
from alphago_jax.play.dead_stones import dead_stones
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import (
    COLOUR_NAMES, IllegalMove, Position, free_handicap_points, handicap_setup, play_game,
)

MIN_SIZE, MAX_SIZE = 2, 19


class GTPEngine(Engine):
    """The GTP engine of a ``Player``: every command of ``docs/gtp.md``.

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
        super().__init__(name, version)
        self.player = player
        self.resign_threshold = resign_threshold
        self.move_time = move_time
        self.clock = Clock()
        self.komi = float(komi)
        self._new_game(size, self.komi, prepare=False)  # not compiled: controllers set their own board
        self.commands.update({
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
        })
        self.streamed.update({
            "lz-analyze": lambda a: self._analyze(a, kata=False),
            "kata-analyze": lambda a: self._analyze(a, kata=True),
            "analyze": lambda a: self._analyze(a, kata=True),
        })
        self._noted_no_ownership = False

    # -- game state ------------------------------------------------------------------------
    def _new_game(self, size: int, komi: float, setup=None, first=BLACK, handicap: int = 0,
                  moves=(), prepare: bool = True) -> None:
        """Replace the game (the player first: it may refuse the size), then compile the player's
        next move unless ``prepare`` is False. Raises ValueError."""
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
        """Compile the player's next move, timed or of its fixed effort, and the position's step."""
        self.player.prepare(self.move_time or 1.0 if self.timed else None)  # timed or not is what counts
        self.pos.compile()

    def _restore(self, pos: Position) -> None:
        """Put the engine and the player back on ``pos`` after a failed change."""
        self._new_game(pos.size, float(pos.game.komi), pos.setup, pos.first_player, pos.handicap, pos.moves)

    def _result(self) -> str | None:
        """The Tromp-Taylor result once both players have passed, else None."""
        return sgf.result_string(self.pos.score()) if self.pos.consecutive_passes >= 2 else None

    # -- setting up a game -----------------------------------------------------------------
    def _boardsize(self, args) -> str:
        arg_count(args, 1, "boardsize SIZE")
        size = int_arg(args[0], "size")
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
        no_args(args)
        self._new_game(self.pos.size, self.komi)
        return ""

    def _komi(self, args) -> str:
        arg_count(args, 1, "komi FLOAT")
        try:
            komi = float(args[0])
        except ValueError:
            komi = math.nan
        if not math.isfinite(komi) or abs(komi) > 1000:
            raise GTPFailure(f"syntax error: komi must be a number, got {quoted(args[0])}")
        if komi != self.komi:
            p = self.pos
            self._new_game(p.size, komi, p.setup, p.first_player, p.handicap, p.moves)
        return ""

    def _require_empty(self) -> None:
        if not self.pos.is_empty():
            raise GTPFailure("board not empty")

    def _set_handicap(self, points: list[int]) -> str:
        pos = self.pos
        self._new_game(pos.size, self.komi, handicap_setup(pos.size, points), WHITE, len(points))
        return " ".join(grid.to_vertex(p, pos.size) for p in points)

    def _fixed_handicap(self, args) -> str:
        arg_count(args, 1, "fixed_handicap NUMBER_OF_STONES")
        stones = int_arg(args[0], "number of stones")
        self._require_empty()
        try:
            vertices = fixed_handicap_vertices(self.pos.size, stones)
        except ValueError:
            raise GTPFailure("invalid number of stones") from None
        return self._set_handicap([grid.from_vertex(v, self.pos.size) for v in vertices])

    def _place_free_handicap(self, args) -> str:
        arg_count(args, 1, "place_free_handicap NUMBER_OF_STONES")
        stones = int_arg(args[0], "number of stones")
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
                raise GTPFailure(f"bad vertex list: invalid vertex {quoted(v)}") from None
            if p == self.pos.pass_action or p in points:
                raise GTPFailure(f"bad vertex list: {quoted(v)} is a pass or repeated")
            points.append(p)
        if not 2 <= len(points) < self.pos.num_points:
            raise GTPFailure("bad vertex list: give 2 or more vertices, leaving a point empty")
        self._set_handicap(points)
        return ""

    def _loadsgf(self, args) -> str:
        if len(args) not in (1, 2):
            raise GTPFailure("syntax error: usage: loadsgf FILENAME [MOVE_NUMBER]")
        upto = int_arg(args[1], "move number", 1) - 1 if len(args) == 2 else None
        if not os.path.isfile(args[0]):  # not a directory, device or pipe, which could block
            raise GTPFailure(f"cannot load file: {quoted(args[0])} is not a file")
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

    # -- moves -----------------------------------------------------------------------------
    def _play(self, args) -> str:
        arg_count(args, 2, "play COLOUR VERTEX")
        colour, action = colour_arg(args[0]), vertex_arg(args[1], self.pos.size)
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
        arg_count(args, 1, "genmove COLOUR")
        colour = colour_arg(args[0])
        pos = self.pos
        if pos.at_move_limit:
            return "pass"  # the game is over by the move limit: nothing more can be played
        seconds = self.clock.budget(colour, int(np.sum(pos.board == 0)))
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
        no_args(args)
        if not self.pos.moves:
            raise GTPFailure("cannot undo")
        self.pos.undo()
        self.player.undo()
        return ""

    # -- the board and the score -----------------------------------------------------------
    def _showboard(self, args) -> str:
        no_args(args)
        pos = self.pos
        black, white = pos.area()
        return (f"\n{pos.render()}\n{COLOUR_NAMES[pos.to_play].capitalize()} to play; move {len(pos.moves)}; "
                f"komi {pos.game.komi:g}; Tromp-Taylor area black {black}, white {white}")

    def _final_score(self, args) -> str:
        no_args(args)
        return sgf.result_string(self.pos.score(self._dead()))

    def _dead(self) -> np.ndarray:
        """bool[N]: the stones the player's ownership head calls dead (``dead_stones``); none
        without such a head, as Tromp-Taylor scoring counts every stone on the board."""
        board = self.pos.board
        ownership = self.player.ownership()
        return np.zeros(board.shape, bool) if ownership is None else dead_stones(board, ownership, self.pos.size)

    def _final_status_list(self, args) -> str:
        arg_count(args, 1, "final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in ("alive", "dead", "seki"):
            raise GTPFailure(f"syntax error: status must be alive, dead or seki, got {quoted(args[0])}")
        if status == "seki":
            return ""  # area scoring counts a seki's stones as alive, and its shared liberties for no one
        dead = self._dead()
        chosen = dead if status == "dead" else (self.pos.board != 0) & ~dead
        return " ".join(grid.to_vertex(int(p), self.pos.size) for p in np.flatnonzero(chosen))

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

    # -- time ------------------------------------------------------------------------------
    def _time_settings(self, args) -> str:
        arg_count(args, 3, "time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main, byo, stones = (int_arg(a, w, 0) for a, w in zip(args, ("main time", "byo-yomi time", "stones")))
        self.clock.settings(main, byo, stones)
        self._prepare()
        return ""

    def _time_left(self, args) -> str:
        arg_count(args, 3, "time_left COLOUR TIME STONES")
        colour = colour_arg(args[0])
        seconds, stones = int_arg(args[1], "time", 0), int_arg(args[2], "stones", 0)
        self.clock.update(colour, seconds, stones)
        return ""

    # -- analysis --------------------------------------------------------------------------
    def _analyze(self, args, kata: bool) -> Stream:
        """``lz-analyze`` (``kata`` False), ``kata-analyze`` and ``analyze``: the arguments
        checked, then the stream of ``info`` lines."""
        request = parse_analyze_args(args, self.pos, kata)
        player = self.player
        if not player.can_analyze:
            raise GTPFailure(f"player {player.name!r} has no analysis")
        if request.options.allowed is not None and not player.can_restrict_analysis:
            raise GTPFailure(f"player {player.name!r} cannot restrict its analysis (avoid, allow)")
        size, limit = self.pos.size, request.options.max_moves

        def stream(write_line, stop) -> None:
            def report(moves, ownership=None):
                moves = moves[:limit]
                if not moves:  # an empty line would end the reply
                    return
                if not kata:
                    write_line(lz_analyze_line(moves, size))
                    return
                if request.ownership and ownership is None:
                    self._note_no_ownership()
                write_line(kata_analyze_line(moves, size, ownership if request.ownership else None,
                                             request.pv_visits))

            player.analyze(request.colour, report, stop, request.interval, request.options)

        return stream

    def _note_no_ownership(self) -> None:
        """Say once on stderr that ``ownership true`` is left out (the player has no ownership head)."""
        if not self._noted_no_ownership:
            self._noted_no_ownership = True
            print(f"kata-analyze: player {self.player.name!r} has no ownership head: the ownership is left out",
                  file=sys.stderr, flush=True)
