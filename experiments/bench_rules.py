"""Rules throughput: batched random legal play inside jit, side by side with pgx.

Each configuration runs one jitted ``lax.scan`` of random legal moves over a batch of games
(uniform over the legal mask, finished games reset in place) and reports steps per second,
compile time and state bytes per game. pgx's Go (when installed) runs the same loop in the
same process, so the ratio is measured under the same machine load.

    python experiments/bench_rules.py                  # the table in docs/benchmarks.md
    python experiments/bench_rules.py --smoke          # tiny sizes, for CI
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import alphago_jax as ag


def _state_bytes(state) -> int:
    return int(sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(state)))


def sample_legal(key, mask):
    """int32[B]: a uniformly random legal action per row of bool[B, A], from one uniform each.

    Cheaper than ``jax.random.categorical`` (one random number per game, not per action), so
    the loop measures the rules rather than the random number generator.
    """
    count = jnp.sum(mask, axis=-1)
    target = jnp.floor(jax.random.uniform(key, count.shape) * count).astype(jnp.int32)
    return jnp.argmax(jnp.cumsum(mask, axis=-1) > target[:, None], axis=-1).astype(jnp.int32)


def random_play_loop(init_fn, step_fn, mask_fn, done_fn, batch: int, steps: int):
    """A jitted function key -> (total finished games) playing ``steps`` random moves per game."""

    def play(key):
        k0, key = jax.random.split(key)
        states = jax.vmap(init_fn)(jax.random.split(k0, batch))
        fresh = states

        def body(carry, key):
            states, finished = carry
            mask = jax.vmap(mask_fn)(states)
            actions = sample_legal(key, mask)
            states = jax.vmap(step_fn)(states, actions)
            done = jax.vmap(done_fn)(states)
            states = jax.tree_util.tree_map(
                lambda f, s: jnp.where(done.reshape((-1,) + (1,) * (s.ndim - 1)), f, s), fresh, states
            )
            return (states, finished + jnp.sum(done)), None

        (_, finished), _ = jax.lax.scan(body, (states, jnp.int32(0)), jax.random.split(key, steps))
        return finished

    return jax.jit(play)


def measure(fn, batch: int, steps: int, repeats: int = 3):
    key = jax.random.PRNGKey(0)
    t0 = time.perf_counter()
    compiled = fn.lower(key).compile()
    compile_s = time.perf_counter() - t0
    compiled(key).block_until_ready()
    best = np.inf
    for r in range(repeats):
        t0 = time.perf_counter()
        compiled(jax.random.PRNGKey(r + 1)).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return batch * steps / best, compile_s


def ours(name: str, size: int, batch: int, steps: int, **config):
    game = ag.games.make(name, size=size, **config)
    fn = random_play_loop(lambda k: game.init(), game.step, game.legal_action_mask, game.is_terminal, batch, steps)
    sps, comp = measure(fn, batch, steps)
    return sps, comp, _state_bytes(game.init())


def pgx_env(env_id: str, batch: int, steps: int):
    try:
        import pgx
    except ImportError:
        return None
    env = pgx.make(env_id)
    fn = random_play_loop(env.init, lambda s, a: env.step(s, a), lambda s: s.legal_action_mask,
                          lambda s: s.terminated | s.truncated, batch, steps)
    sps, comp = measure(fn, batch, steps)
    return sps, comp, _state_bytes(env.init(jax.random.PRNGKey(0)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 19])
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 64, 512])
    parser.add_argument("--no-pgx", action="store_true")
    args = parser.parse_args(argv)
    sizes, batches = ([5], [4]) if args.smoke else (args.sizes, args.batches)

    print(f"# {platform.processor() or platform.machine()}, {jax.devices()[0].platform}, jax {jax.__version__}")
    print("| game | batch | superko | steps/s | compile s | state B/game | pgx steps/s | pgx compile s | pgx state B/game | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        for batch in batches:
            steps = max(32, min(4096, 40_000 // batch)) if not args.smoke else 16
            peer = None if (args.no_pgx or args.smoke or size not in (9, 19)) else pgx_env(f"go_{size}x{size}", batch, steps)
            for superko in ([True] if args.smoke else [True, False]):
                sps, comp, nbytes = ours("go", size, batch, steps, superko=superko)
                ps = f"{peer[0]:,.0f} | {peer[1]:.1f} | {peer[2]:,}" if peer else "- | - | -"
                ratio = f"{sps / peer[0]:.1f}x" if peer else "-"
                print(f"| go {size}x{size} | {batch} | {'positional' if superko else 'simple ko'} | {sps:,.0f} | {comp:.1f} | {nbytes:,} | {ps} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
