"""An external GTP engine (GNU Go, another program) as a ``Player``.

    with GTPPlayer("/usr/games/gnugo --mode gtp --level 1") as gnugo:
        gnugo.new_game(9, 7.5)
        gnugo.play(BLACK, 40)
        gnugo.genmove(WHITE)

Moves go to the engine as GTP commands (``play``, ``genmove``, ``reg_genmove``,
``kgs-genmove_cleanup`` when the engine knows it, ``undo``); a time budget is passed on as
Canadian byo-yomi of that many seconds per move. The engine keeps its own rules: the arena
scores its games with this project's rules, not the engine's.
"""

from __future__ import annotations

import math

import numpy as np

from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play.gtp_client import GTPClient, GTPError
from alphago_jax.play.players import RESIGN, Decision, Player
from alphago_jax.play.position import colour_letter


class GTPPlayer(Player):
    """A running external GTP engine. Use as a context manager, or call ``close``.

    Args:
      command: the engine's command line (a string split like a shell would, or a list).
      name: the player's name; default the engine's ``name`` and ``version``.

    Raises:
      GTPError: if the engine cannot be started or does not answer.
    """

    def __init__(self, command: str | list[str], name: str | None = None):
        self.client = GTPClient(command)
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
        self._size = None
        self._seconds = None

    def close(self) -> None:
        self.client.close()

    def _new_game(self, size, komi, setup, first_player, handicap) -> None:
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
        if black:
            commands.append("set_free_handicap " + " ".join(black))
        self.client.send_many(commands)
        self._size = size

    def _play(self, colour: int, action: int) -> None:
        try:
            self.client.send(f"play {colour_letter(colour)} {grid.to_vertex(action, self._size)}")
        except GTPError as e:
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
        """Ask the engine for a move (its own resignation decides ``RESIGN``; ``resign_below`` is unused)."""
        del resign_below
        if seconds is not None and seconds != self._seconds:
            self.client.send(f"time_settings 0 {max(1, math.ceil(seconds))} 1")
            self._seconds = seconds
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
