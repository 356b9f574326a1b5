"""An external GTP engine (GNU Go, another program) as a ``Player``.

    with GTPPlayer("/usr/games/gnugo --mode gtp --level 1") as gnugo:
        gnugo.new_game(9, 7.5)
        gnugo.play(BLACK, 40)
        gnugo.genmove(WHITE)

Moves go to the engine as GTP commands (``play``, ``genmove``, ``reg_genmove``,
``kgs-genmove_cleanup`` when the engine knows it, ``undo``). The engine plays at its own
settings: a match's time per move is not passed on, since an engine such as GNU Go lowers its
level to fit a clock; ``time=SECONDS`` gives it a clock of its own (Canadian byo-yomi of that
many seconds per move, sent with every new game). GNU Go is started with this project's rules
flags (``gtp_client.with_gnugo_rules``); the arena scores every game with this project's rules,
not the engine's.

An engine that does not answer within ``timeout`` seconds is stopped (``gtp_client``) and the
command raises ``GTPError``, as does one that dies or answers nonsense; the next game starts it
afresh, so that a match goes on (the arena scores the failed game as a forfeit).
"""

from __future__ import annotations

import math
import shlex

import numpy as np

from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.gtp_client import GTPClient, GTPError, with_gnugo_rules
from alphago_jax.play.players import RESIGN, Decision, Player
from alphago_jax.play.position import colour_letter


def default_timeout(time: float | None) -> float:
    """Seconds an engine may take to answer before it counts as hung: 120 without a clock (GNU Go
    level 10 takes seconds on 19x19; a program's first answer may compile or tune for a minute),
    else ten times its time per move, at least 30."""
    return 120.0 if time is None else max(30.0, 10.0 * time)


class GTPPlayer(Player):
    """A running external GTP engine. Use as a context manager, or call ``close``.

    Args:
      command: the engine's command line (a string split like a shell would, or a list).
      name: the player's name; default the engine's ``name`` and ``version``.
      time: seconds per move to give the engine as its clock (``time_settings 0 T 1``, T the
        seconds rounded up); None: no clock, the engine's own settings decide.
      timeout: seconds to wait for any answer before the engine counts as hung (default
        ``default_timeout(time)``).

    Raises:
      GTPError: if the engine cannot be started or does not answer.
    """

    def __init__(self, command: str | list[str], name: str | None = None, time: float | None = None,
                 timeout: float | None = None):
        for what, x in (("time", time), ("timeout", timeout)):
            if x is not None and not x > 0:
                raise ValueError(f"{what} must be a positive number of seconds, got {x!r}")
        self.argv = with_gnugo_rules(shlex.split(command) if isinstance(command, str) else list(command))
        self.timeout = default_timeout(time) if timeout is None else timeout
        self.client = GTPClient(self.argv, timeout=self.timeout)
        try:
            self.commands = set(self.client.send("list_commands").split())
            if name is None:
                engine, version = self.client.send_many(["name", "version"])
                name = f"{engine} {version}".strip()
        except GTPError:
            self.client.close()
            raise
        self.name = name
        self.can_cleanup = "kgs-genmove_cleanup" in self.commands
        self.time = time
        self._size = None

    def close(self) -> None:
        self.client.close()

    def reseed(self, seed: int) -> None:
        """Seed the engine's random choices (``set_random_seed``, where it knows it), so that a
        deterministic engine varies from game to game of a match."""
        if "set_random_seed" in self.commands:
            self.client.send(f"set_random_seed {int(seed)}")

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
        if not self.client.alive:  # stopped or dead in an earlier game: a fresh process for this one
            self.client.close()
            self.client = GTPClient(self.argv, timeout=self.timeout)
        stones = np.zeros(size * size, np.int8) if setup is None else np.asarray(setup).reshape(-1)
        if (stones == WHITE).any():
            raise ValueError(f"{self.name}: cannot set up white stones over GTP (only handicap stones)")
        black = [grid.to_vertex(int(p), size) for p in np.flatnonzero(stones == BLACK)]
        if len(black) == 1:
            raise ValueError(f"{self.name}: cannot set up a single black stone over GTP")
        try:
            self.client.send(f"boardsize {size}")
        except GTPError as e:
            raise ValueError(f"{self.name} cannot play on a {size}x{size} board: {e}") from None
        commands = ["clear_board", f"komi {komi:g}"]
        if self.time is not None:
            commands.append(f"time_settings 0 {max(1, math.ceil(self.time))} 1")
        if black:
            commands.append("set_free_handicap " + " ".join(black))
        self.client.send_many(commands)
        self._size = size

    def _play(self, colour: int, action: int) -> None:
        try:
            self.client.send(f"play {colour_letter(colour)} {grid.to_vertex(action, self._size)}")
        except GTPError as e:
            if not self.client.alive:  # dead or stopped: an engine failure, not a refusal
                raise
            raise ValueError(f"{self.name} refused the move: {e}") from None

    def undo(self) -> None:
        if "undo" not in self.commands:
            return super().undo()
        if not getattr(self, "_moves", None):
            raise ValueError("no move to undo")
        self.client.send("undo")
        self._moves.pop()

    def genmove(self, colour: int, seconds: float | None = None, *, commit: bool = True, cleanup: bool = False,
                resign_below: float = 0.0) -> Decision:
        """Ask the engine for a move (its own resignation decides ``RESIGN``). ``seconds`` and
        ``resign_below`` are unused: the engine keeps its own settings, or the clock of ``time``."""
        del seconds, resign_below
        c = colour_letter(colour)
        if not commit:
            command = f"reg_genmove {c}"
        elif cleanup and self.can_cleanup:
            command = f"kgs-genmove_cleanup {c}"
        else:
            command = f"genmove {c}"
        reply = self.client.send(command).strip().lower()
        if reply == "resign":  # nothing was played
            return Decision(RESIGN)
        try:
            action = grid.from_vertex(reply, self._size)
        except ValueError:
            raise GTPError(f"{self.name} answered {command!r} with {reply!r}, not a move") from None
        if commit:
            self._moves.append((colour, action))
        return Decision(action)
