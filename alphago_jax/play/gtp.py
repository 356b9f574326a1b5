"""The Go Text Protocol (GTP version 2) itself: command lines, ids, replies, clocks, the serve loop.

``Engine`` answers one input line at a time from its command table (``handle``: the reply
text; ``respond``: the reply written to a stream); ``serve`` runs an engine on stdin/stdout.
The game's commands are ``gtp_commands.GTPEngine``'s; ``docs/gtp.md`` describes them all.

Input is preprocessed as the specification says (section 2): control characters other than
tab and newline are removed, everything from ``#`` on is a comment, tabs become spaces, and
empty lines are ignored. A command may start with a numeric id, which its reply repeats.
Every failure is answered ``? <reason>``.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
from typing import Callable

from alphago_jax import __version__
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play.position import parse_colour
from alphago_jax.search import move_budget

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
NUMBER = re.compile(r"[0-9]+")
"""A command id, or an unsigned integer argument."""

Handler = Callable[[list[str]], str]
"""A command: its arguments -> the reply's text (raises ``GTPFailure``)."""

Stream = Callable[[Callable[[str], None], Callable[[], bool]], None]
"""A streamed reply: ``stream(write_line, stop)`` writes lines until ``stop()`` is true."""


class GTPFailure(Exception):
    """A command that fails: answered ``? <message>``."""


def preprocess(line: str) -> str:
    """A raw input line as GTP section 2 says: control characters but tab removed, the comment
    cut, tabs made spaces, surrounding space stripped."""
    line = _CONTROL.sub("", line).split("#", 1)[0]
    return line.replace("\t", " ").strip()


def quoted(text: str, limit: int = 40) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def one_line(text: str) -> str:
    """``text`` on one line (a reply's text may not hold an empty line)."""
    return " ".join(text.split()) or "failed"


# ------------------------------------------------------------------------------ arguments

def no_args(args: list[str]) -> None:
    """Fail for a command that takes no arguments but was given some."""
    if args:
        raise GTPFailure(f"syntax error: unexpected argument {quoted(args[0])}")


def arg_count(args: list[str], n: int, usage: str) -> None:
    """Fail, showing ``usage``, unless there are ``n`` arguments."""
    if len(args) != n:
        raise GTPFailure(f"syntax error: usage: {usage}")


def int_arg(text: str, what: str, low: int | None = None) -> int:
    """An integer argument (at least ``low``), named ``what`` in the error."""
    if not re.fullmatch(r"[+-]?[0-9]{1,9}", text):
        raise GTPFailure(f"syntax error: {what} must be an integer, got {quoted(text)}")
    value = int(text)
    if low is not None and value < low:
        raise GTPFailure(f"syntax error: {what} must be at least {low}, got {value}")
    return value


def colour_arg(text: str) -> int:
    """A colour argument: ``BLACK`` or ``WHITE``."""
    try:
        return parse_colour(text)
    except ValueError:
        raise GTPFailure(f"syntax error: invalid colour {quoted(text)}") from None


def vertex_arg(text: str, size: int) -> int:
    """A vertex argument as an action (``size * size`` for pass)."""
    try:
        return grid.from_vertex(text, size)
    except ValueError:
        raise GTPFailure(f"syntax error: invalid vertex {quoted(text)}") from None


# ---------------------------------------------------------------------------------- clock

class Clock:
    """GTP time settings and both players' clocks (Canadian byo-yomi).

    ``time_settings main byo stones``: ``main`` seconds, then ``stones`` moves in every ``byo``
    seconds. ``byo > 0`` with ``stones == 0`` means no time limit, as does all zero (the default).
    """

    def __init__(self):
        self.settings(0, 0, 0)

    def settings(self, main: int, byo: int, stones: int) -> None:
        """``time_settings``: new settings, both clocks reset."""
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


# --------------------------------------------------------------------------------- engine

class Engine:
    """A GTP engine: a command table behind the protocol, which answers its own commands
    (``protocol_version``, ``name``, ``version``, ``known_command``, ``list_commands``, ``quit``).

    Subclasses add their commands to ``commands``, and to ``streamed`` those whose reply goes on
    until the next input line: ``streamed[name](args) -> Stream`` checks the arguments first.
    """

    def __init__(self, name: str = "alphago-jax", version: str = __version__):
        self.name, self.version = name, version
        self.quit = False
        self.commands: dict[str, Handler] = {
            "protocol_version": lambda a: no_args(a) or "2",
            "name": lambda a: no_args(a) or self.name,
            "version": lambda a: no_args(a) or self.version,
            "known_command": self._known_command,
            "list_commands": lambda a: no_args(a) or "\n".join(self.command_names()),
            "quit": self._quit,
        }
        self.streamed: dict[str, Callable[[list[str]], Stream]] = {}

    def command_names(self) -> list[str]:
        """Every command, in the order ``list_commands`` gives them."""
        return [*self.commands, *self.streamed]

    def handle(self, line: str) -> str | None:
        """The reply to one input line, without its terminating empty line; None for a line GTP
        says to ignore. A streamed reply stops after its first line here."""
        parts: list[str] = []
        self.respond(line, parts.append)
        text = "".join(parts)
        return text[:-2] if text.endswith("\n\n") else (text or None)

    def respond(self, line: str, write: Callable[[str], None],
                interrupted: Callable[[], bool] | None = None) -> bool:
        """Answer one input line through ``write`` (the full reply with its empty line).

        Args:
          interrupted: true once the next input line waits, which ends a streamed reply; None:
            a streamed reply stops after its first line.

        Returns:
          False after ``quit``, else True.
        """
        words = preprocess(line).split()
        if not words:
            return True
        ident = words.pop(0) if NUMBER.fullmatch(words[0]) else ""
        if not words:
            write(f"?{ident} syntax error: no command after the id\n\n")
            return True
        command, args = words[0], words[1:]
        if command not in self.commands and command not in self.streamed:
            write(f"?{ident} unknown command\n\n")
            return True
        if command in self.streamed:
            stream = self._run(ident, self.streamed[command], args, write)
            if stream is not None:
                self._stream(ident, command, stream, write, interrupted)
            return True
        reply = self._run(ident, self.commands[command], args, write)
        if reply is not None:
            write(f"={ident} {reply}\n\n" if reply else f"={ident}\n\n")
        return not self.quit

    @staticmethod
    def _run(ident: str, handler: Callable, args: list[str], write: Callable[[str], None]):
        """``handler(args)``, or None after writing the failure's reply."""
        try:
            return handler(args)
        except GTPFailure as e:
            write(f"?{ident} {one_line(str(e))}\n\n")
        except Exception as e:  # a bug must not end the session; the controller hears of it
            write(f"?{ident} internal error: {one_line(f'{type(e).__name__}: {e}')}\n\n")
        return None

    @staticmethod
    def _stream(ident: str, command: str, stream: Stream, write: Callable[[str], None],
                interrupted: Callable[[], bool] | None) -> None:
        """A streamed reply: ``=``, the stream's lines until ``interrupted()``, the empty line."""
        write(f"={ident}\n")
        try:
            stream(lambda text: write(text + "\n"), interrupted if interrupted is not None else (lambda: True))
        except Exception as e:  # the reply has begun: end it, say why on stderr
            print(f"{command} stopped: {type(e).__name__}: {e}", file=sys.stderr)
        write("\n")

    def _known_command(self, args: list[str]) -> str:
        arg_count(args, 1, "known_command COMMAND")
        return "true" if args[0] in self.command_names() else "false"

    def _quit(self, args: list[str]) -> str:
        self.quit = True
        return ""


# ------------------------------------------------------------------------------ the loop

def serve(engine: Engine, stdin=None, stdout=None) -> int:
    """Run ``engine`` on streams until ``quit`` or the end of input; returns 0.

    Args:
      stdin: a binary stream (default ``sys.stdin.buffer``); lines are decoded as UTF-8, bad
        bytes replaced (they then fail as unknown commands or syntax errors).
      stdout: a text stream (default ``sys.stdout``), flushed after every piece.
    """
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_read_lines, args=(stdin, lines), name="gtp-input", daemon=True).start()

    def write(text: str) -> None:
        stdout.write(text)
        stdout.flush()

    while True:
        line = lines.get()
        if line is None or not engine.respond(line, write, interrupted=lambda: not lines.empty()):
            return 0


def _read_lines(stdin, lines: queue.Queue) -> None:
    """Put each line of ``stdin`` on ``lines`` as text, then None at the end of input.

    From a file descriptor it reads with ``os.read``, not the stream's ``readline``: a thread
    blocked in a buffered stream's ``readline`` holds the stream's lock, and an engine that quits
    while the controller keeps the pipe open could then not close ``sys.stdin`` at exit.
    """
    def put(raw) -> None:
        lines.put(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw)

    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both of the last two
        fd = None
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
