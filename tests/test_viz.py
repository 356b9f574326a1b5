"""Pictures for notebooks (``viz``) and the notebook game (``play.notebook``), on the Agg canvas."""

from __future__ import annotations

import types

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from alphago_jax import viz  # noqa: E402
from alphago_jax.play.notebook import NotebookGame  # noqa: E402
from alphago_jax.play.players import Decision, LocalPlayer  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _stones(ax):
    return [p for p in ax.patches if isinstance(p, matplotlib.patches.Circle) and p.get_radius() > 0.3]


@pytest.mark.parametrize("hex_board", [False, True])
def test_draw_board_draws_every_stone_and_label(hex_board):
    board = np.zeros(25, np.int8)
    board[[0, 6, 12]], board[[1, 24]] = 1, -1
    heat = np.linspace(0, 1, 26)
    ax = viz.draw_board(board, hex=hex_board, last_move=12, heat=heat, labels={12: "x", 3: "50%"}, title="t")
    assert len(_stones(ax)) == 5
    assert {t.get_text() for t in ax.texts} >= {"x", "50%"}
    assert "pass 1.00" in ax.get_title()


def test_draw_board_rejects_a_board_that_is_not_square():
    with pytest.raises(ValueError, match="not square"):
        viz.draw_board(np.zeros(24))


def test_draw_boards_and_planes_lay_out_grids():
    fig = viz.draw_boards(np.zeros((5, 9), np.int8), titles=list("abcde"), cols=4)
    assert [ax.get_title() for ax in fig.axes[:5]] == list("abcde") and len(fig.axes) == 8
    fig = viz.draw_planes(np.zeros((5, 5, 3)), ["one", "two", "three"], cols=2)
    assert [ax.get_title() for ax in fig.axes[:3]] == ["0: one", "1: two", "2: three"]


def _tree():
    """A hand-made batch of one 2x2 Go tree (5 actions): root -> A2 (5 visits) -> B2 (3);
    root -> B1 (2 visits)."""
    cap, actions = 5, 5
    children = np.full((1, cap, actions), -1)
    children[0, 0, 0], children[0, 0, 3], children[0, 1, 1] = 1, 2, 3
    visits = np.array([[8, 5, 2, 3, 0]])
    value_sum = np.array([[2.0, -3.0, 1.0, 1.5, 0.0]])
    return types.SimpleNamespace(visits=visits, value_sum=value_sum, reward=np.zeros((1, cap)),
                                 discount=-np.ones((1, cap)), children=children, num_nodes=np.array([4]))


def test_principal_variation_follows_the_most_visited_children():
    tree = _tree()
    assert viz.principal_variation(tree) == [0, 1]
    assert viz.principal_variation(tree, first=3) == [3]


def test_draw_tree_labels_moves_visits_and_q():
    ax = viz.draw_tree(_tree(), size=2, max_depth=2)
    labels = [t.get_text() for t in ax.texts]
    # Q of a move for its mover: -(value_sum / visits) of the child (discount -1, no reward).
    assert labels == ["root  N 8  V +0.25", "A2  N 5  Q +0.60", "B2  N 3  Q -0.50", "B1  N 2  Q -0.50"]
    ax = viz.draw_tree(_tree(), size=2, max_depth=1, max_children=1)
    assert [t.get_text().split()[0] for t in ax.texts] == ["root", "A2"]


class PassingPlayer(LocalPlayer):
    def __init__(self):
        super().__init__("passer")

    def _decide(self, colour, seconds):
        return Decision(self.pos.pass_action)


def test_notebook_game_plays_refuses_undoes_and_ends():
    game = NotebookGame("random", size=5, komi=0.5)
    game.play("C3")
    assert len(game.pos.moves) == 2 and "You play C3" in game.message
    game.play("C3")
    assert len(game.pos.moves) == 2 and "Cannot play 'C3'" in game.message
    game.play("Z9")
    assert "invalid vertex" in game.message
    game.undo()
    assert game.pos.moves == [] and "Took back your move C3" in game.message
    assert "<img src=\"data:image/png;base64," in game._repr_html_()
    assert game.record().moves == ()

    game = NotebookGame(PassingPlayer(), size=5, komi=0.5, colour="white")
    assert game.pos.moves == [(1, 25)] and "Black (passer) plays pass" in game.message
    game.play("pass")
    assert game.result == "W+0.5" and "Game over" in game.message
    game.play("C3")
    assert game.message == "The game is over (W+0.5)." and len(game.pos.moves) == 2

    game = NotebookGame(PassingPlayer(), size=5).resign()
    assert game.result == "W+R"
