"""A client for external GTP engines (GNU Go and others) over a pipe.

``send_many`` pipelines a batch of commands before reading the replies, which makes whole-board
legality checks against an engine fast. A reply that does not come within ``timeout``, or is not
GTP, raises ``GTPError`` and kills the engine (its later replies could not be matched).

Layer: imports nothing of the package, so that ``play`` and ``zero`` can both use it.
"""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import subprocess
import threading

GNUGO = "/usr/games/gnugo"
GNUGO_RULES_ARGS = ("--mode", "gtp", "--chinese-rules", "--positional-superko", "--forbid-suicide")


# On Linux the engine gets SIGKILL when the thread that started it ends with its process (a match
# killed, its worker processes too): no engine outlives what it played for.
_DIE_WITH_PARENT = ["setpriv", "--pdeathsig", "KILL", "--"] if shutil.which("setpriv") else []


class GTPError(RuntimeError):
    """An engine answered a command with ``?``, or died."""


_RULE_CONFLICTS = {  # each rules flag of GNUGO_RULES_ARGS, and the flags that choose otherwise
    "--chinese-rules": ("--japanese-rules",),
    "--positional-superko": ("--situational-superko",),
    "--forbid-suicide": ("--allow-suicide", "--allow-all-suicide"),
}


def is_gnugo(argv: list[str]) -> bool:
    """Whether a command line starts GNU Go (its binary is named ``gnugo``)."""
    return bool(argv) and os.path.basename(argv[0]).startswith("gnugo")


def with_gnugo_rules(argv: list[str]) -> list[str]:
    """``argv`` with the ``GNUGO_RULES_ARGS`` it does not override added when it starts GNU Go, so
    that GNU Go plays the rules scored here; any other command line unchanged."""
    if not is_gnugo(argv):
        return list(argv)
    extra = [] if "--mode" in argv else ["--mode", "gtp"]
    extra += [flag for flag, others in _RULE_CONFLICTS.items() if not {flag, *others} & set(argv)]
    return [argv[0], *extra, *argv[1:]]


def find_gnugo() -> str | None:
    """Path of the GNU Go binary, or None when it is not installed."""
    return GNUGO if shutil.which(GNUGO) else shutil.which("gnugo")


class GTPClient:
    """A running GTP engine. Use as a context manager, or call ``close``.

    Args:
      command: the command line (a string split like a shell would, or a list).
      timeout: seconds to wait for each reply (None: no limit); the attribute may be changed.
    """

    def __init__(self, command: str | list[str], timeout: float | None = None):
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        self.argv = argv
        self.timeout = timeout
        binary = shutil.which(argv[0]) if argv else None
        if binary is None:
            raise GTPError(f"cannot start GTP engine {argv[0] if argv else ''!r}: not an executable file")
        try:
            self._proc = subprocess.Popen(
                _DIE_WITH_PARENT + [binary, *argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, text=True, bufsize=1,
            )
        except OSError as e:
            raise GTPError(f"cannot start GTP engine {argv[0]!r}: {e}") from None
        # The engine's lines, read by a thread of their own, so that a wait for one can time out.
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, args=(self._proc.stdout, self._lines), daemon=True,
                         name=f"gtp-{os.path.basename(argv[0])}").start()

    @staticmethod
    def _pump(stream, lines: queue.Queue) -> None:
        try:
            for line in stream:
                lines.put(line)
        except (OSError, ValueError):  # the pipe was closed under the reader
            pass
        lines.put(None)

    @property
    def alive(self) -> bool:
        """Whether the engine is still running."""
        return self._proc.poll() is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()  # reap it: a closed client holds no process, not even a zombie

    def _kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait()

    def _read_reply(self, command: str) -> str:
        lines = []
        while True:
            try:
                line = self._lines.get(timeout=self.timeout)
            except queue.Empty:
                self._kill()
                raise GTPError(f"engine {self.argv[0]!r} did not answer {command!r} within {self.timeout:g} s "
                               "(stopped)") from None
            if line is None:
                self._lines.put(None)  # every later read sees the end too
                raise GTPError(f"engine {self.argv[0]!r} exited while answering {command!r}")
            line = line.rstrip("\r\n")
            if line == "" and lines:
                break
            if line or lines:
                lines.append(line)
        text = "\n".join(lines)
        if text.startswith("?"):
            raise GTPError(f"{command!r} failed: {text[1:].strip()}")
        if not text.startswith("="):
            self._kill()  # out of step with its commands: nothing it says can be trusted now
            raise GTPError(f"{command!r}: malformed reply {text!r} (engine stopped)")
        return text[1:].strip()

    def send(self, command: str) -> str:
        """Send one command; return the reply text without ``=``. Raises GTPError on ``?``."""
        return self.send_many([command])[0]

    def send_many(self, commands: list[str]) -> list[str]:
        """Send commands in one write, then read their replies in order."""
        try:
            self._proc.stdin.write("".join(c + "\n" for c in commands))
            self._proc.stdin.flush()
        except OSError as e:
            raise GTPError(f"engine {self.argv[0]!r} is not running: {e}") from None
        return [self._read_reply(c) for c in commands]


def gnugo_player_args(level: int, size: int, komi: float) -> list[str]:
    """GNU Go's arguments after the binary as an opponent under ``GNUGO_RULES_ARGS``, at ``level``
    (0 to 10; 10 the strongest), on ``size`` x ``size`` with ``komi``."""
    return [*GNUGO_RULES_ARGS, "--level", str(int(level)), "--boardsize", str(int(size)), "--komi", f"{komi:g}"]


def gnugo_rules_engine(path: str | None = None) -> GTPClient:
    """GNU Go in GTP mode with area scoring, positional superko and suicide forbidden."""
    binary = path or find_gnugo()
    if binary is None:
        raise GTPError("GNU Go is not installed (apt-get install -y gnugo)")
    return GTPClient([binary, *GNUGO_RULES_ARGS])
