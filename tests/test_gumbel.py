"""Gumbel AlphaZero self-play: the improved policy as the policy target.

- A one-move bandit on the empty 5x5 board: a uniform prior, and every move's value known (the
  evaluator values each child position by the move that made it). Gumbel search's target must
  be a distribution that puts more weight than the prior on the best move, and makes it the
  heaviest; the move played (``gumbel_scale = 0``) is the best one.
- Self-play records ``SearchOutput.policy_target``, not the visit counts.
- ``ZeroConfig(search="gumbel")`` builds Gumbel searches for self-play and evaluation.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import games, zero
from alphago_jax.games.history import WithHistory
from alphago_jax.search import SearchConfig, make_search
from alphago_jax.search.config import SearchOutput
from alphago_jax.train import replay
from alphago_jax.zero import selfplay

BEST = 7  # the bandit's best move (row 1, col 2)


def bandit_evaluator(size: int):
    """Uniform logits; a child position's value (for its player to move, the opponent of the
    mover) is -0.9 after the best move and +0.2 after any other: Q = 0.9 against -0.2."""

    def evaluate(params, states, key):
        del params, key
        logits = jnp.zeros(states.board.shape[:1] + (size * size + 1,), jnp.float32)
        after_best = states.last_move == BEST
        value = jnp.where(states.move_count == 0, 0.0, jnp.where(after_best, -0.9, 0.2))
        return logits, value.astype(jnp.float32)

    return evaluate


@pytest.mark.parametrize("simulations, considered", [(16, 16), (32, 8)])
def test_gumbel_target_favours_the_best_move_of_a_bandit(simulations, considered):
    game = games.make("go", size=5)
    config = SearchConfig(num_simulations=simulations, algorithm="gumbel", gumbel_considered=considered,
                          gumbel_scale=0.0, max_depth=1)
    states = jax.vmap(lambda _: game.init())(jnp.arange(4))
    out = make_search(game, bandit_evaluator(5), config)(None, states, jax.random.PRNGKey(0))
    target = np.asarray(out.policy_target)
    chex.assert_shape(out.policy_target, (4, game.num_actions))
    np.testing.assert_allclose(target.sum(-1), 1.0, rtol=1e-5)
    assert np.all(target >= 0)
    legal = np.asarray(jax.vmap(game.legal_action_mask)(states))
    prior = 1.0 / legal.sum(-1)
    # More weight than the prior's on the best move, and the most of any move.
    assert np.all(target[:, BEST] > 2 * prior), target[:, BEST]
    assert np.all(np.argmax(target, -1) == BEST)
    # With every move considered, the best one is found and played; the visits are not the target.
    if considered == 16:
        assert np.all(np.asarray(out.actions) == BEST)
    assert not np.allclose(target, np.asarray(out.visit_probs))


def test_puct_target_is_the_visit_distribution():
    game = games.make("go", size=5)
    states = jax.vmap(lambda _: game.init())(jnp.arange(2))
    out = make_search(game, bandit_evaluator(5), SearchConfig(num_simulations=8, temperature=0.0))(
        None, states, jax.random.PRNGKey(0))
    chex.assert_trees_all_close(out.policy_target, out.visit_probs)


def test_selfplay_records_the_policy_target():
    game = WithHistory(games.make("go", size=5, max_moves=6), boards=8)
    a = game.num_actions

    def search(params, states, key):  # visits on move 0, the target on move 1: they differ
        b = states.board.shape[0]
        visits = jnp.zeros((b, a)).at[:, 0].set(1.0)
        target = jnp.zeros((b, a)).at[:, 1].set(1.0)
        actions = jnp.full((b,), 2 + states.move_count, jnp.int32)
        return SearchOutput(actions=actions, visit_probs=visits, root_value=jnp.zeros(b),
                            next_states=jax.vmap(game.step)(states, actions), q_values=jnp.zeros((b, a)),
                            policy_target=target)

    sp = selfplay.selfplay_init(game, 2)
    example = replay.Examples(planes=sp.planes[0, 0], policy=sp.policy[0, 0], value=jnp.float32(0))
    buffer = replay.replay_init(64, example)
    sp, buffer, stats = jax.jit(lambda sp, b, k: selfplay.selfplay(game, search, 6, None, sp, b, k))(
        sp, buffer, jax.random.PRNGKey(0))
    assert int(stats["positions"]) == 12 and int(buffer.size) == 12
    np.testing.assert_array_equal(np.argmax(np.asarray(buffer.policy[:12]), -1), 1)


def test_zero_config_builds_gumbel_searches():
    config = zero.ZeroConfig(search="gumbel", gumbel_considered=4)
    assert config.selfplay_search.algorithm == "gumbel" and config.selfplay_search.gumbel_scale == 1.0
    assert config.eval_search.algorithm == "gumbel" and config.eval_search.gumbel_scale == 0.0
    assert config.selfplay_search.gumbel_considered == 4
    assert zero.with_overrides(zero.ZeroConfig(), {"search": "gumbel"}).search == "gumbel"
    with pytest.raises(ValueError, match="ZeroConfig.search"):
        zero.ZeroConfig(search="alphabeta")
    with pytest.raises(ValueError, match="gumbel_considered"):
        zero.ZeroConfig(gumbel_considered=0)
