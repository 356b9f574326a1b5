"""Rules throughput: batched random legal play inside jit, side by side with pgx.

Each configuration runs one jitted ``lax.scan`` of random legal moves over a batch of games
(uniform over the legal mask, finished games reset in place) and reports steps per second,
compile time and state bytes per game. pgx's Go (when installed) runs the same loop in the
same process, so the ratio is measured under the same machine load.

    python experiments/bench_rules.py                  # the Go table in docs/benchmarks.md
    python experiments/bench_rules.py --smoke          # tiny sizes, for CI
    python experiments/bench_rules.py --games go atari_go nogo hex --sizes 9 --batches 512

With games other than ``go``, a second table follows: AtariGo and NoGo on ``--sizes`` and Hex
on ``--hex-sizes``, each beside its pgx peer (pgx's Go of the same size for AtariGo and NoGo,
which pgx lacks; pgx's 11x11 Hex for Hex) and beside pgx's Go 9x9, measured in the same run.
"""

from __future__ import annotations

import argparse
import platform
import time

import jax
import jax.numpy as jnp
import numpy as np

import alphago_jax as ag
from alphago_jax.playout import reset_where, sample_legal


def _state_bytes(state) -> int:
    return int(sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(state)))


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
            states = reset_where(done, fresh, states)
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


VARIANTS = ("atari_go", "nogo", "hex")


def _pgx_peer_id(name: str, size: int):
    if name == "hex":
        return "hex" if size == 11 else None
    return f"go_{size}x{size}" if size in (9, 19) else None


def variant_table(games, sizes, hex_sizes, batches, smoke, use_pgx, peer_cache):
    """Rows for AtariGo, NoGo and Hex: steps/s beside their pgx peer and pgx's Go 9x9."""

    def peer(env_id, batch, steps):
        if not use_pgx or smoke or env_id is None:
            return None
        if (env_id, batch) not in peer_cache:
            peer_cache[(env_id, batch)] = pgx_env(env_id, batch, steps)
        return peer_cache[(env_id, batch)]

    print()
    print("| game | batch | steps/s | compile s | state B/game | pgx peer | pgx steps/s | pgx compile s | pgx state B/game | ratio | ratio to pgx go 9x9 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [g for g in games if g in VARIANTS]:
        for size in (hex_sizes if name == "hex" else sizes):
            for batch in batches:
                steps = max(32, min(4096, 40_000 // batch)) if not smoke else 16
                sps, comp, nbytes = ours(name, size, batch, steps)
                env_id = _pgx_peer_id(name, size)
                p, go9 = peer(env_id, batch, steps), peer("go_9x9", batch, steps)
                ps = f"{env_id} | {p[0]:,.0f} | {p[1]:.1f} | {p[2]:,}" if p else "- | - | - | -"
                ratio = f"{sps / p[0]:.1f}x" if p else "-"
                ratio9 = f"{sps / go9[0]:.1f}x" if go9 else "-"
                print(f"| {name} {size}x{size} | {batch} | {sps:,.0f} | {comp:.1f} | {nbytes:,} | {ps} | {ratio} | {ratio9} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 19])
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 64, 512])
    parser.add_argument("--no-pgx", action="store_true")
    parser.add_argument("--games", nargs="*", default=["go"], choices=["go", *VARIANTS],
                        help="games to measure (default: go); AtariGo and NoGo use --sizes")
    parser.add_argument("--hex-sizes", type=int, nargs="*", default=[11])
    args = parser.parse_args(argv)
    sizes, batches = ([5], [4]) if args.smoke else (args.sizes, args.batches)
    hex_sizes = [5] if args.smoke else args.hex_sizes

    print(f"# {platform.processor() or platform.machine()}, {jax.devices()[0].platform}, jax {jax.__version__}")
    peer_cache = {}
    if "go" in args.games:
        go_table(sizes, batches, args.smoke, not args.no_pgx, peer_cache)
    if any(g in VARIANTS for g in args.games):
        variant_table(args.games, sizes, hex_sizes, batches, args.smoke, not args.no_pgx, peer_cache)


def go_table(sizes, batches, smoke, use_pgx, peer_cache):
    print("| game | batch | superko | steps/s | compile s | state B/game | pgx steps/s | pgx compile s | pgx state B/game | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        for batch in batches:
            steps = max(32, min(4096, 40_000 // batch)) if not smoke else 16
            peer = None if (not use_pgx or smoke or size not in (9, 19)) else pgx_env(f"go_{size}x{size}", batch, steps)
            if peer is not None:
                peer_cache[(f"go_{size}x{size}", batch)] = peer
            for superko in ([True] if smoke else [True, False]):
                sps, comp, nbytes = ours("go", size, batch, steps, superko=superko)
                ps = f"{peer[0]:,.0f} | {peer[1]:.1f} | {peer[2]:,}" if peer else "- | - | -"
                ratio = f"{sps / peer[0]:.1f}x" if peer else "-"
                print(f"| go {size}x{size} | {batch} | {'positional' if superko else 'simple ko'} | {sps:,.0f} | {comp:.1f} | {nbytes:,} | {ps} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
