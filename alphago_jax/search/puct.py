"""mctx's searches on the game rules: ``muzero_policy`` (PUCT) and ``gumbel_muzero_policy``.

``make_mctx_search`` builds a fresh mctx tree per move with the rules as the model. Every node's
value is for its player to move; an edge's reward is the game's return for the player who moved
and the discount is -1 (0 once over), so values flip sign at each ply. Illegal actions are
masked at the root and get no prior below; one tried anyway loses by the rules (value -1).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mctx

from alphago_jax.games.base import Game
from alphago_jax.search.config import SearchConfig, SearchOutput, choose_moves
from alphago_jax.search.evaluators import Evaluator, masked, value_for_mover


def make_mctx_search(game: Game, evaluator: Evaluator, config: SearchConfig):
    """The jitted searched move ``(params, states, key) -> SearchOutput`` of mctx's
    ``config.algorithm`` (``"muzero"`` or ``"gumbel"``) with ``evaluator`` at the leaves."""
    if config.algorithm not in ("muzero", "gumbel"):
        raise ValueError(f"mctx runs 'muzero' or 'gumbel', not {config.algorithm!r}")
    step = jax.vmap(game.step)
    legal_of = jax.vmap(game.legal_action_mask)
    evaluate = masked(game, evaluator)

    def recurrent_fn(params, key, action, states):
        after = step(states, action)
        logits, value = evaluate(params, after, key)
        out = mctx.RecurrentFnOutput(
            reward=value_for_mover(game, states, after),
            discount=jnp.where(jax.vmap(game.is_terminal)(after), 0.0, -1.0),
            prior_logits=logits,
            value=value,
        )
        return out, after

    def search(params, states, key):
        k_root, k_search, k_move = jax.random.split(key, 3)
        logits, value = evaluate(params, states, k_root)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
        legal = legal_of(states)
        common = dict(invalid_actions=~legal, max_depth=config.max_depth)
        if config.algorithm == "muzero":
            out = mctx.muzero_policy(
                params, k_search, root, recurrent_fn, config.num_simulations, **common,
                dirichlet_fraction=config.dirichlet_fraction, dirichlet_alpha=config.dirichlet_alpha,
                pb_c_init=config.c_puct,
            )
        else:
            out = mctx.gumbel_muzero_policy(
                params, k_search, root, recurrent_fn, config.num_simulations, **common,
                max_num_considered_actions=config.gumbel_considered, gumbel_scale=config.gumbel_scale,
            )
        tree = out.search_tree
        root_index = jnp.full(legal.shape[0], mctx.Tree.ROOT_INDEX)
        visits = tree.children_visits[:, mctx.Tree.ROOT_INDEX].astype(jnp.float32)
        probs = visits / jnp.maximum(jnp.sum(visits, axis=-1, keepdims=True), 1.0)
        q_values = jnp.where(visits > 0, tree.qvalues(root_index), 0.0)
        if config.algorithm == "gumbel":
            # Sequential halving's survivor is the move (the Gumbel noise explores); the target
            # is the improved policy, softmax(logits + sigma(completed Q)).
            actions, target = out.action.astype(jnp.int32), out.action_weights
        else:
            actions, target = choose_moves(k_move, visits, q_values, legal, states.move_count, config), probs
        return SearchOutput(
            actions=actions,
            visit_probs=probs,
            root_value=tree.node_values[:, mctx.Tree.ROOT_INDEX],
            next_states=step(states, actions),
            q_values=q_values,
            policy_target=target,
        )

    return jax.jit(search)
