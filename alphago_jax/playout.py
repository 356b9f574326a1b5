"""Batched random legal play inside jit: the rules' throughput loop and the demo.

Layer: depends on ``games`` only.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from alphago_jax.games.base import Game


def sample_legal(key, mask):
    """int32[B]: a uniformly random legal action per row of ``mask`` (bool[B, A]), from one uniform
    number per game (``jax.random.categorical`` draws one per action)."""
    count = jnp.sum(mask, axis=-1)
    target = jnp.floor(jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    return jnp.argmax(jnp.cumsum(mask, axis=-1) > target[:, None], axis=-1).astype(jnp.int32)


def reset_where(done, fresh, states):
    """Replace the games marked in ``done`` (bool[B]) by ``fresh`` states (same pytree)."""
    return jax.tree_util.tree_map(
        lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s), fresh, states
    )


def play_out(game: Game, states, key, max_moves: int | None = None, choose=None):
    """``(final states, moves the longest game took int32[])``: legal moves in every game of a batch
    (leading axis B) until all are over or ``max_moves`` (None: no limit) have been played.
    ``choose`` is ``(states, key) -> int32[B]`` (default: uniformly random legal moves)."""

    def more(carry):
        states, _, t = carry
        going = ~jnp.all(jax.vmap(game.is_terminal)(states))
        return going if max_moves is None else going & (t < max_moves)

    def body(carry):
        states, key, t = carry
        key, k = jax.random.split(key)
        if choose is None:
            actions = sample_legal(k, jax.vmap(game.legal_action_mask)(states))
        else:
            actions = choose(states, k)
        return jax.vmap(game.step)(states, actions), key, t + 1

    states, _, steps = jax.lax.while_loop(more, body, (states, key, jnp.int32(0)))
    return states, steps


def random_games(game: Game, key, batch: int):
    """Play ``batch`` random legal games from the start to the end (see ``play_out``)."""
    return play_out(game, jax.vmap(lambda _: game.init())(jnp.arange(batch)), key)
