"""Play against the engine in a terminal: a drawn board, moves typed as vertices.

    alphago-jax play --player mcts:sims=400 --size 9 --colour black

At your turn, type a vertex (``D4``, any case), ``pass``, ``undo`` (takes back your last move
and the engine's answer), ``resign``, ``score`` (the Tromp-Taylor count of the board now),
``help`` or ``quit``. The game ends when both players pass in a row (or at the move limit)
and is scored by Tromp-Taylor area with komi; or when a player resigns.

Before the first turn the engine compiles its move (``Player.prepare``), so that its first
answer takes as long as the later ones; the ``alphago-jax`` command keeps what it compiles in
JAX's persistent compilation cache (``alphago_jax.compile_cache``), so later starts are quicker.

``play_terminal`` takes its input and output streams as arguments, so that a scripted session
can be tested.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from alphago_jax import sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play.players import RESIGN, Player
from alphago_jax.play.position import COLOUR_NAMES, IllegalMove, Position, play_game

HELP = ("Type a vertex such as D4 to play there, or: pass, undo (take back your last move), resign, "
        "score (count the board now), help, quit.")


def _name(colour: int) -> str:
    return COLOUR_NAMES[colour].capitalize()


def score_line(pos: Position) -> str:
    """The Tromp-Taylor count of ``pos`` in words."""
    black, white = pos.area()
    score = pos.score()
    verdict = "a draw" if score == 0 else f"{_name(BLACK if score > 0 else WHITE)} wins by {abs(score):g}"
    return (f"Tromp-Taylor area: black {black}, white {white}, komi {pos.game.komi:g}: "
            f"{sgf.result_string(score)} ({verdict})")


def play_terminal(player: Player, *, size: int = 9, komi: float = 7.5, human: int = BLACK,
                  seconds: float | None = None, resign_below: float = 0.0, sgf_path=None,
                  stdin: TextIO | None = None, stdout: TextIO | None = None) -> str | None:
    """Play one game, the human ``human`` (colour) against ``player``.

    Args:
      seconds: the engine's time per move (None: its own fixed effort).
      resign_below: the engine resigns below this estimated win rate (0: never).
      sgf_path: where to save the game at its end (also after ``quit``), or None.
      stdin, stdout: the streams (default the terminal's).

    Returns:
      The result (``"B+3.5"``, ``"W+R"``), or None when the human quit before the end.
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout

    def say(text: str = "") -> None:
        stdout.write(text + "\n")
        stdout.flush()

    engine = -human
    pos = Position(play_game(size, komi))
    _prepare(player, pos, komi, seconds, stdout)
    say(f"{size}x{size} Go, komi {komi:g}, Tromp-Taylor area scoring. You are {COLOUR_NAMES[human]} "
        f"({'X' if human == BLACK else 'O'}), {player.name} is {COLOUR_NAMES[engine]}. {HELP}")
    result = None
    while result is None:
        if pos.consecutive_passes >= 2 or pos.at_move_limit:
            result = _game_over(pos, say)
        elif pos.to_play == engine:
            result = _engine_move(pos, player, seconds, resign_below, say)
        else:
            say()
            say(pos.render())
            stdout.write(f"{_name(human)} to play (move {len(pos.moves) + 1}): ")
            stdout.flush()
            line = stdin.readline()
            if not line:  # end of input
                say()
                say("Input ended: game abandoned.")
                break
            if line.strip().lower() in ("quit", "exit", "q"):
                say("Game abandoned.")
                break
            result = _human_turn(line.strip(), pos, player, human, say)
    if sgf_path is not None:
        names = (("you", player.name) if human == BLACK else (player.name, "you"))
        sgf.save(pos.record(result, black_name=names[0], white_name=names[1]), sgf_path)
        say(f"Game saved to {sgf_path}.")
    return result


def _prepare(player: Player, pos: Position, komi: float, seconds: float | None, stdout: TextIO) -> None:
    """Start the engine's game and compile its move now, saying so: a cold start takes a while."""
    player.new_game(pos.size, komi)
    stdout.write(f"Preparing {player.name} for {pos.size}x{pos.size}... ")
    stdout.flush()
    t0 = time.perf_counter()
    player.prepare(seconds)
    pos.compile()
    stdout.write(f"ready in {time.perf_counter() - t0:.1f} s.\n")
    stdout.flush()


def _game_over(pos: Position, say) -> str:
    """Announce the end by passes or the move limit, with the count; the result."""
    say()
    say(pos.render())
    say(("Both players passed. " if pos.consecutive_passes >= 2 else "The move limit is reached. ")
        + score_line(pos))
    return sgf.result_string(pos.score())


def _engine_move(pos: Position, player: Player, seconds: float | None, resign_below: float, say) -> str | None:
    """The engine's move, announced; the result if it resigns, else None."""
    engine = pos.to_play
    decision = player.genmove(engine, seconds, resign_below=resign_below)
    if decision.action == RESIGN:
        say(f"{_name(engine)} ({player.name}) resigns. You win.")
        return f"{'W' if engine == BLACK else 'B'}+R"
    pos.play(engine, decision.action)
    if decision.action == pos.pass_action:
        say(f"{_name(engine)} passes.")
    else:
        say(f"{_name(engine)} plays {grid.to_vertex(decision.action, pos.size)}.")
    return None


def _human_turn(text: str, pos: Position, player: Player, human: int, say) -> str | None:
    """Act on the human's input ``text`` (a move or a command but quit); the result if the human
    resigns, else None."""
    word = text.lower()
    if not word:
        return None
    if word in ("help", "?", "h"):
        say(HELP)
    elif word == "score":
        say(score_line(pos))
    elif word == "resign":
        say(f"You resign. {_name(-human)} ({player.name}) wins.")
        return f"{'B' if -human == BLACK else 'W'}+R"
    elif word == "undo":
        _undo(pos, player, human, say)
    else:
        try:
            action = grid.from_vertex(word, pos.size)
        except ValueError:
            say(f"Not a move or command: {text!r}. {HELP}")
            return None
        try:
            pos.play(human, action)
        except IllegalMove as e:
            say(f"Illegal move {grid.to_vertex(action, pos.size)}: {e}.")
            return None
        player.play(human, action)
    return None


def _undo(pos: Position, player: Player, human: int, say) -> None:
    """Take back the human's last move and every move after it."""
    if not any(colour == human for colour, _ in pos.moves):
        say("Nothing to undo: you have not moved yet.")
        return
    taken = 0
    while True:
        colour, action = pos.undo()
        player.undo()
        taken += 1
        if colour == human:
            break
    after = " and the reply" if taken > 1 else ""
    say(f"Took back your move {grid.to_vertex(action, pos.size)}{after}.")
