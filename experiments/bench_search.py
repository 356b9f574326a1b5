"""Search throughput: simulations per second of one jitted searched move for a batch of games.

This project's PUCT search (``alphago_jax.search.make_search``, the JAX Go rules as the model,
AlphaGo Zero's 17 input planes from ``games.history.WithHistory``) against pgx's Go plugged into
mctx's ``muzero_policy`` with the same network and settings, in the same process, timed in
alternation (best of several rounds each). Columns: ours with one leaf per network call; ours
gathering ``--leaf-batch`` leaves per game per call (virtual loss); pgx + mctx; the ratio of
the first to pgx + mctx; the network's forward pass alone at the batch size (the ceiling a
search with one leaf per call approaches). The network is a small dual-head ResNet (stem + 2
residual blocks, 32 channels) on 9x9.

    python experiments/bench_search.py                 # batch 1, 16, 128; 9x9
    python experiments/bench_search.py --smoke         # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import mctx
import numpy as np

from alphago_jax import features, games
from alphago_jax.games.history import WithHistory
from alphago_jax.nets import DualResNet
from alphago_jax.search import SearchConfig, make_search, network_evaluator

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def race(contenders, rounds):
    """Best time of each ``(fn, args)`` over ``rounds`` rounds, the contenders alternating."""
    for fn, args in contenders:
        jax.block_until_ready(fn(*args))  # compile and warm up
    best = [np.inf] * len(contenders)
    for _ in range(rounds):
        for i, (fn, args) in enumerate(contenders):
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*args))
            best[i] = min(best[i], time.perf_counter() - t0)
    return best


def ours(net, variables, size, batch, sims, leaf_batch=1):
    game = WithHistory(games.make("go", size=size), boards=8)
    evaluator = network_evaluator(lambda v, x: net.apply(v, x), features.zero_planes)
    search = make_search(game, evaluator, SearchConfig(num_simulations=sims, temperature=0.0, leaf_batch=leaf_batch))
    states = jax.vmap(lambda _: game.init())(jnp.arange(batch))
    return search, (variables, states, jax.random.PRNGKey(0))


def pgx_search(net, variables, size, batch, sims):
    import pgx

    env = pgx.make(f"go_{size}x{size}")
    step = jax.vmap(env.step)

    def evaluate(v, states):
        logits, value = net.apply(v, states.observation)
        return jnp.where(states.legal_action_mask, logits, -1e9), jnp.where(states.terminated, 0.0, value)

    def recurrent_fn(v, key, action, states):
        player = states.current_player
        after = step(states, action)
        logits, value = evaluate(v, after)
        reward = after.rewards[jnp.arange(action.shape[0]), player]
        out = mctx.RecurrentFnOutput(reward=reward, discount=jnp.where(after.terminated, 0.0, -1.0),
                                     prior_logits=logits, value=value)
        return out, after

    def search(v, states, key):
        logits, value = evaluate(v, states)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
        out = mctx.muzero_policy(v, key, root, recurrent_fn, sims, invalid_actions=~states.legal_action_mask,
                                 temperature=0.0)
        return step(states, out.action)

    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), batch))
    return jax.jit(search), (variables, states, jax.random.PRNGKey(0))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny, for CI")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 16, 128])
    parser.add_argument("--simulations", type=int, default=64)
    parser.add_argument("--leaf-batch", type=int, default=8, help="leaves per game per network call (column 2)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-pgx", action="store_true")
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    size, batches, sims, rounds, k = ((5, [2], 4, 1, 2) if args.smoke else
                                      (args.size, args.batches, args.simulations, args.rounds, args.leaf_batch))
    use_pgx = not (args.no_pgx or args.smoke)

    net = DualResNet(in_planes=17, blocks=2, filters=32, value_hidden=32)
    variables = net.init(jax.random.PRNGKey(0), jnp.zeros((1, size, size, 17)))
    forward = jax.jit(lambda v, x: net.apply(v, x))

    rows = []
    for batch in batches:
        contenders = [ours(net, variables, size, batch, sims), ours(net, variables, size, batch, sims, k),
                      (forward, (variables, jnp.zeros((batch, size, size, 17))))]
        if use_pgx:
            contenders.append(pgx_search(net, variables, size, batch, sims))
        t_ours, t_leaves, t_fwd, *t_peer = race(contenders, rounds)
        sps = [batch * sims / t for t in (t_ours, t_leaves)]
        peer = f"{batch * sims / t_peer[0]:,.0f} | {t_peer[0] / t_ours:.1f}x" if t_peer else "- | -"
        rows.append(f"| {batch} | {sps[0]:,.0f} | {sps[1]:,.0f} | {peer} | {batch / t_fwd:,.0f} |")
    print_header("bench_search.py", argv, f"{size}x{size}, {sims} simulations per move, net: stem + 2 blocks x 32; "
                 f"best of {rounds} alternating rounds", t_start)
    print(f"| batch | sims/s (ours) | sims/s (ours, {k} leaves per call) | sims/s (pgx + mctx) | ratio | forward positions/s |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
