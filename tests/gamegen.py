"""Random Go games biased toward captures, generated in one batched, jitted scan.

Random play rarely builds kos; choosing a capture whenever one is available (with some
probability) produces ko fights, recaptures and superko cycles often enough to test them.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games.go import Go


def capture_points(state, n):
    """bool[N]: points where the player to move would capture."""
    opp_atari = (state.board == -state.to_play) & (state.atari_lib >= 0)
    return jnp.zeros(n + 1, bool).at[jnp.where(opp_atari, state.atari_lib, n)].set(True)[:n]


def biased_action(key, state, n, capture_p=0.6, pass_p=0.03):
    """Capture with probability capture_p when possible, pass with pass_p, else a random move."""
    k1, k2, k3 = jax.random.split(key, 3)
    legal = state.legal[:n]
    caps = legal & capture_points(state, n)
    u = jax.random.uniform(k1)
    use_caps = jnp.any(caps) & (u < capture_p)
    choices = jnp.where(use_caps, caps, legal)
    logits = jnp.where(choices, 0.0, -jnp.inf)
    move = jax.random.categorical(k2, logits)
    want_pass = ~jnp.any(choices) | (jax.random.uniform(k3) < pass_p)
    return jnp.where(want_pass, n, move).astype(jnp.int32)


@functools.partial(jax.jit, static_argnums=(0, 2, 3))
def _generate(game: Go, key, batch: int, steps: int):
    simple = Go(size=game.size, komi=game.komi, superko=False, max_moves=game.max_moves)
    n = game.num_points

    def one(key):
        def body(carry, key):
            s, ks = carry
            a = biased_action(key, s, n)
            a = jnp.where(s.terminal, n, a)
            s2, ks2 = game.step(s, a), simple.step(ks, a)
            out = (a, s2.board, s2.legal, ks2.legal, ks2.board, s2.terminal, s.terminal)
            return (s2, ks2), out

        _, out = jax.lax.scan(body, (game.init(), simple.init()), jax.random.split(key, steps))
        return out

    return jax.vmap(one)(jax.random.split(key, batch))


def generate(game: Go, seed: int, batch: int, steps: int | None = None):
    """Play ``batch`` games of up to ``steps`` moves; return numpy arrays per game.

    Returns a list of dicts with ``actions`` int32[T], ``boards`` int8[T, N] and ``legal``
    bool[T, N + 1] after each move (superko), ``simple_legal`` (simple ko, same moves), and
    ``simple_boards``; T is the game's length.
    """
    steps = steps or game.max_moves
    a, boards, legal, slegal, sboards, term, was_term = map(np.asarray, _generate(game, jax.random.PRNGKey(seed), batch, steps))
    games = []
    for b in range(batch):
        t = int(np.sum(~was_term[b]))
        games.append(dict(actions=a[b, :t], boards=boards[b, :t], legal=legal[b, :t],
                          simple_legal=slegal[b, :t], simple_boards=sboards[b, :t], terminal=term[b, :t]))
    return games
