"""What the GRAVE and MCPS tests share: the AtariGo capture position, searches driven one
playout at a time from Python, and the checks of a searched move (the capture, legality)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

import boards
import tactics

CAPTURE = next(p for p in tactics.POSITIONS if p[0] == "atari_go" and p[1] == dict(size=5))
"""AtariGo 5x5: (game, options, board, to play, (row, col) of the only winning capture)."""


def stack(states):
    """A batch (leading axis) of unbatched states."""
    return jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)


def capture_states(game):
    """A batch of 2 AtariGo 5x5 games: the capture position and the empty board."""
    board = jnp.asarray(boards.parse(CAPTURE[2]), jnp.int8)
    return stack([game.init_from_board(board, CAPTURE[3]), game.init()])


def playouts(search, states, count: int, seed: int = 0):
    """Yield ``(i, tree, trace)`` after each of ``count`` playouts per game (``search.iterate``,
    one compiled call; ``trace`` as numpy). Read what you need from ``tree`` before the next
    step: ``iterate`` consumes it."""
    tree = search.init(states)
    for i in range(count):
        tree, trace = search.iterate(tree, jax.random.PRNGKey(seed * 100_003 + i))
        yield i, tree, jax.tree_util.tree_map(np.asarray, trace)


def run_playouts(search, states, count: int, seed: int = 0):
    """The tree after ``count`` playouts per game, and every playout's trace (numpy)."""
    tree, traces = None, []
    for _, tree, trace in playouts(search, states, count, seed):
        traces.append(trace)
    return tree, traces


def check_the_capture_and_legal_choices(game, states, search, tree) -> None:
    """The search of the batch ``capture_states`` plays the capture in game 0; every game's move
    and visits are on legal actions, and every tree node's action was legal at its parent."""
    out = search.result(tree, jax.random.PRNGKey(0))
    row, col = CAPTURE[4]
    assert int(out.actions[0]) == row * game.size + col
    legal = np.asarray(jax.vmap(game.legal_action_mask)(states))
    assert legal[np.arange(2), np.asarray(out.actions)].all()
    assert np.all(np.asarray(out.visit_probs)[~legal] == 0)
    chex.assert_trees_all_close(jnp.sum(out.visit_probs, -1), jnp.ones(2))
    chex.assert_trees_all_equal(tree.legal[:, 0], jnp.asarray(legal))
    t = jax.tree_util.tree_map(np.asarray, tree)
    for g in range(2):
        for x in range(1, int(t.num_nodes[g])):
            assert t.legal[g, t.parent[g, x], t.action[g, x]]
