"""Play against the engine in a notebook: one call per move, the board drawn after each.

    game = NotebookGame("mcts:sims=64", size=9, colour="black")
    game.play("E5")      # your move, then the engine's answer; the cell shows the board
    game.play("pass")    # also: game.undo(), game.resign(), game.score()
    game.record()        # the game as an SGF record (sgf.dump / sgf.save)

No ``input()``: each move is a call, so a notebook runs top to bottom unattended (CI runs it).
A move that cannot be played (a typo, an occupied point, superko) is not an error: the game
says why and waits for another. The game ends when both players pass in a row (Tromp-Taylor
area with komi), at the move limit, or when a player resigns.

Creating the game compiles the engine's move (``Player.prepare``), so that the cell of your
first move waits no longer than the later ones, and turns on JAX's persistent compilation cache
as the ``alphago-jax`` command does (``compile_cache.configure``: ``~/.cache/alphago_jax`` or
``$ALPHAGO_JAX_CACHE_DIR``; a cache the notebook already set is kept), so that the next session's
first game starts in seconds.

In Jupyter and Colab a ``NotebookGame`` shows itself as the drawn board and what just happened
(``_repr_html_``); ``str(game)`` is the same in text.
"""

from __future__ import annotations

import base64
import html
import io

from alphago_jax import compile_cache as _compile_cache, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import COLOUR_NAMES, IllegalMove, Position, parse_colour, play_game
from alphago_jax.play.terminal import score_line


class NotebookGame:
    """A game of Go between you and ``player``, one ``play`` call per move of yours.

    Args:
      player: a ``Player`` or a player spec for ``play.registry.make_player`` (``"mcts:sims=64"``,
        ``"net:net=shipped,sims=64"``, ...).
      size, komi: the board and komi (Tromp-Taylor area scoring).
      colour: your colour, ``"black"`` or ``"white"`` (the engine moves first if you are white).
      seconds: the engine's time per move (None: its own fixed effort).
      compile_cache: where compiled programs are kept between sessions: a directory,
        ``compile_cache.OFF``, or None for the command's rules (``compile_cache.configure``).
    """

    def __init__(self, player: Player | str, size: int = 9, komi: float = 7.5, colour: str = "black",
                 seconds: float | None = None, compile_cache: str | None = None):
        _compile_cache.configure(compile_cache)  # before anything compiles
        if isinstance(player, str):
            from alphago_jax.play.registry import make_player

            player = make_player(player)
        self.player, self.seconds = player, seconds
        self.human = parse_colour(colour)
        self.engine = -self.human
        self.pos = Position(play_game(size, komi))
        self.size = size
        self.player.new_game(size, komi)
        self.player.prepare(seconds)  # compile the engine's move now: its first answer is as quick as the rest
        self.result: str | None = None
        self.winrate: float | None = None  # the engine's estimate after its last move
        self.message = f"You are {COLOUR_NAMES[self.human]}, {self.player.name} is {COLOUR_NAMES[self.engine]}."
        if self.pos.to_play == self.engine:
            self.message += " " + self._engine_move()

    # -- moves -----------------------------------------------------------------------------
    def play(self, move: str) -> "NotebookGame":
        """Play ``move`` (a vertex such as ``"D4"`` or ``"pass"``), then the engine's answer."""
        if self.result is not None:
            self.message = f"The game is over ({self.result})."
            return self
        try:
            action = grid.from_vertex(move, self.size)
            self.pos.play(self.human, action)
        except (IllegalMove, ValueError) as e:
            self.message = f"Cannot play {move!r}: {e}. Your move again."
            return self
        self.player.play(self.human, action)
        self.message = f"You play {grid.to_vertex(action, self.size)}."
        if not self._over():
            self.message += " " + self._engine_move()
            self._over()
        return self

    def undo(self) -> "NotebookGame":
        """Take back your last move and the engine's answer to it."""
        if not any(colour == self.human for colour, _ in self.pos.moves):
            self.message = "Nothing to undo: you have not moved yet."
            return self
        while True:
            colour, action = self.pos.undo()
            self.player.undo()
            if colour == self.human:
                break
        self.result = None
        self.message = f"Took back your move {grid.to_vertex(action, self.size)}."
        return self

    def resign(self) -> "NotebookGame":
        if self.result is None:
            self.result = f"{'B' if self.engine == BLACK else 'W'}+R"
            self.message = f"You resign: {self.result}."
        return self

    def score(self) -> str:
        """The Tromp-Taylor count of the board now, in words."""
        return score_line(self.pos)

    def record(self) -> sgf.GameRecord:
        """The game so far as an SGF record (``sgf.save(game.record(), "game.sgf")``)."""
        names = ("you", self.player.name) if self.human == BLACK else (self.player.name, "you")
        return self.pos.record(self.result, black_name=names[0], white_name=names[1])

    def _engine_move(self) -> str:
        decision = self.player.genmove(self.engine, self.seconds)
        name = f"{COLOUR_NAMES[self.engine].capitalize()} ({self.player.name})"
        if decision.action == RESIGN:
            self.result = f"{'B' if self.human == BLACK else 'W'}+R"
            return f"{name} resigns: {self.result}."
        self.pos.play(self.engine, decision.action)
        self.winrate = decision.winrate
        estimate = "" if decision.winrate is None else f" (its win rate {decision.winrate:.0%})"
        return f"{name} plays {grid.to_vertex(decision.action, self.size)}{estimate}."

    def _over(self) -> bool:
        """End the game after two passes in a row or at the move limit; True if it is over."""
        if self.result is None and (self.pos.consecutive_passes >= 2 or self.pos.at_move_limit):
            self.result = sgf.result_string(self.pos.score())
            self.message += f" Game over. {score_line(self.pos)}"
        return self.result is not None

    # -- display ---------------------------------------------------------------------------
    @property
    def to_play(self) -> int:
        return self.pos.to_play

    def figure(self):
        """The board as a matplotlib ``Figure`` (not attached to pyplot)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from alphago_jax.viz import draw_board

        side = 0.42 * self.size + 1.2
        fig = Figure(figsize=(side, side))
        FigureCanvasAgg(fig)
        moves = len(self.pos.moves)
        status = self.result or f"move {moves + 1}, {COLOUR_NAMES[self.pos.to_play]} to play"
        draw_board(self.pos.board, self.size, ax=fig.add_subplot(), last_move=self.pos.last_move, title=status)
        fig.tight_layout()
        return fig

    def png(self) -> bytes:
        buffer = io.BytesIO()
        self.figure().savefig(buffer, format="png", dpi=90)
        return buffer.getvalue()

    def _repr_html_(self) -> str:
        image = base64.b64encode(self.png()).decode("ascii")
        return f'<div><img src="data:image/png;base64,{image}"/><pre>{html.escape(self.message)}</pre></div>'

    def __str__(self) -> str:
        return f"{self.pos.render()}\n{self.message}"

    def __repr__(self) -> str:
        return str(self)


__all__ = ["NotebookGame"]
