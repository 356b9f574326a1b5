"""Terminal play with scripted input: moves, mistakes, undo, pass, resign, quit, the final score."""

from __future__ import annotations

import io
import sys

from alphago_jax import cli, sgf
from alphago_jax.games import grid
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.play.players import RESIGN, Decision, LocalPlayer
from alphago_jax.play.terminal import play_terminal


class Scripted(LocalPlayer):
    """Answers with the given vertices in turn, then passes; ``"resign"`` resigns."""

    def __init__(self, vertices, name="bot"):
        super().__init__(name)
        self.vertices = list(vertices)

    def _decide(self, colour, seconds):
        i = sum(c == colour for c, _ in self.pos.moves)
        if i >= len(self.vertices):
            return Decision(self.pos.pass_action)
        v = self.vertices[i]
        return Decision(RESIGN if v == "resign" else grid.from_vertex(v, self.pos.size))


def run(script: str, player, **kw):
    out = io.StringIO()
    result = play_terminal(player, size=5, komi=0.5, stdin=io.StringIO(script), stdout=out, **kw)
    return result, out.getvalue()


def test_a_scripted_game_to_the_final_score(tmp_path):
    bot = Scripted(["B2", "D4"])
    path = tmp_path / "game.sgf"
    script = "c3\nc3\nz9\nhelp\nscore\nd2\nundo\nc2\n\npass\n"
    result, text = run(script, bot, sgf_path=path)
    assert "   A B C D E" in text and " 5 . . . . ." in text  # the drawn board, coordinates
    assert "White plays B2." in text
    assert "Illegal move C3: the point is occupied." in text
    assert "Not a move or command: 'z9'." in text
    assert "Type a vertex such as D4" in text
    assert "Tromp-Taylor area: black 1, white 1, komi 0.5: W+0.5 (White wins by 0.5)" in text
    assert "Took back your move D2 and the reply." in text
    # The engine's reply to D2 (D4) was taken back too, so it answers C2 with D4 again.
    assert text.count("White plays D4.") == 2
    assert text.rstrip().endswith(f"Game saved to {path}.")
    assert "Both players passed." in text
    record = sgf.load(path)
    assert record.result == result and result.startswith(("B+", "W+"))
    moves = [(c, grid.to_vertex(a, 5)) for c, a in record.moves]
    assert moves == [(BLACK, "C3"), (WHITE, "B2"), (BLACK, "C2"), (WHITE, "D4"), (BLACK, "pass"), (WHITE, "pass")]
    assert record.black_name == "you" and record.white_name == "bot"


def test_resign_quit_and_end_of_input():
    result, text = run("c3\nresign\n", Scripted(["B2"]))
    assert result == "W+R" and "You resign. White (bot) wins." in text
    result, text = run("quit\n", Scripted([]))
    assert result is None and "Game abandoned." in text
    result, text = run("c3\n", Scripted([]))
    assert result is None and "Input ended" in text
    result, text = run("c3\n", Scripted(["resign"]))
    assert result == "B+R" and "White (bot) resigns. You win." in text


def test_the_engine_moves_first_when_the_human_is_white():
    result, text = run("undo\npass\n", Scripted(["C3"]), human=WHITE)
    assert text.index("Black plays C3.") < text.index("White to play")
    assert "Nothing to undo" in text
    assert result == "B+24.5"  # black's lone stone owns the board


def test_play_command_line(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("e5\nquit\n"))
    assert cli.main(["play", "--player", "random", "--size", "9", "--colour", "white"]) == 0
    out = capsys.readouterr().out
    assert "You are white (O), random is black." in out and "Game abandoned." in out
