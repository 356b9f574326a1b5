"""Rules throughput: batched random legal play inside jit, side by side with pgx.

Each configuration runs one jitted ``lax.scan`` of random legal moves over a batch of games
(uniform over the legal mask, finished games reset in place) and reports steps per second,
compile time and state bytes per game. pgx (when installed) runs the same loop in the same
process; the contenders of a row group are timed in alternation, several rounds, and each
keeps its best round, so a change in machine load hits all of them alike.

    python experiments/bench_rules.py                  # the Go table in docs/benchmarks.md
    python experiments/bench_rules.py --smoke          # tiny sizes, for CI
    python experiments/bench_rules.py --games go atari_go nogo hex --sizes 9 --batches 512

With games other than ``go``, a second table follows: AtariGo and NoGo on ``--sizes`` and Hex
on ``--hex-sizes``, each beside its pgx peer (pgx's Go of the same size for AtariGo and NoGo,
which pgx lacks; pgx's 11x11 Hex for Hex) and beside pgx's Go 9x9, measured in the same run.
"""

from __future__ import annotations

import argparse
import dataclasses
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


@dataclasses.dataclass
class Contender:
    """One compiled random-play loop and what was measured of it."""

    label: str
    run: object
    compile_s: float
    state_bytes: int
    work: int  # steps per call: batch * scan length
    best_s: float = np.inf

    @property
    def steps_per_s(self) -> float:
        return self.work / self.best_s


def _contender(label, init_fn, step_fn, mask_fn, done_fn, state, batch, steps) -> Contender:
    fn = random_play_loop(init_fn, step_fn, mask_fn, done_fn, batch, steps)
    key = jax.random.PRNGKey(0)
    t0 = time.perf_counter()
    compiled = fn.lower(key).compile()
    compile_s = time.perf_counter() - t0
    compiled(key).block_until_ready()  # warm-up
    return Contender(label, compiled, compile_s, _state_bytes(state), batch * steps)


def ours(name: str, size: int, batch: int, steps: int, **config) -> Contender:
    game = ag.games.make(name, size=size, **config)
    return _contender(name, lambda k: game.init(), game.step, game.legal_action_mask, game.is_terminal,
                      game.init(), batch, steps)


def pgx_env(env_id: str, batch: int, steps: int) -> Contender | None:
    try:
        import pgx
    except ImportError:
        return None
    env = pgx.make(env_id)
    return _contender(f"pgx {env_id}", env.init, lambda s, a: env.step(s, a), lambda s: s.legal_action_mask,
                      lambda s: s.terminated | s.truncated, env.init(jax.random.PRNGKey(0)), batch, steps)


def race(contenders, rounds: int) -> None:
    """Time the contenders in alternation; each keeps its fastest round."""
    for r in range(rounds):
        for c in contenders:
            if c is None:
                continue
            t0 = time.perf_counter()
            c.run(jax.random.PRNGKey(r + 1)).block_until_ready()
            c.best_s = min(c.best_s, time.perf_counter() - t0)


def _peer_cells(peer: Contender | None) -> str:
    return f"{peer.steps_per_s:,.0f} | {peer.compile_s:.1f} | {peer.state_bytes:,}" if peer else "- | - | -"


def _ratio(c: Contender, peer: Contender | None) -> str:
    return f"{c.steps_per_s / peer.steps_per_s:.1f}x" if peer else "-"


def _steps(batch: int, smoke: bool) -> int:
    return 16 if smoke else max(32, min(4096, 40_000 // batch))


def go_table(sizes, batches, smoke, use_pgx, rounds):
    print("| game | batch | superko | steps/s | compile s | state B/game | pgx steps/s | pgx compile s | pgx state B/game | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        for batch in batches:
            steps = _steps(batch, smoke)
            peer = pgx_env(f"go_{size}x{size}", batch, steps) if use_pgx and size in (9, 19) else None
            mine = [ours("go", size, batch, steps, superko=sk) for sk in ([True] if smoke else [True, False])]
            race([peer, *mine], rounds)
            for superko, c in zip((True, False), mine):
                print(f"| go {size}x{size} | {batch} | {'positional' if superko else 'simple ko'} | {c.steps_per_s:,.0f} | "
                      f"{c.compile_s:.1f} | {c.state_bytes:,} | {_peer_cells(peer)} | {_ratio(c, peer)} |", flush=True)


VARIANTS = ("atari_go", "nogo", "hex")


def _pgx_peer_id(name: str, size: int):
    if name == "hex":
        return "hex" if size == 11 else None
    return f"go_{size}x{size}" if size in (9, 19) else None


def variant_table(games, sizes, hex_sizes, batches, smoke, use_pgx, rounds):
    """Rows for AtariGo, NoGo and Hex: steps/s beside their pgx peer and pgx's Go 9x9."""
    print()
    print("| game | batch | steps/s | compile s | state B/game | pgx peer | pgx steps/s | pgx compile s | pgx state B/game | ratio | ratio to pgx go 9x9 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [g for g in games if g in VARIANTS]:
        for size in (hex_sizes if name == "hex" else sizes):
            for batch in batches:
                steps = _steps(batch, smoke)
                env_id = _pgx_peer_id(name, size) if use_pgx else None
                peer = pgx_env(env_id, batch, steps) if env_id else None
                go9 = (peer if env_id == "go_9x9" else pgx_env("go_9x9", batch, steps)) if use_pgx else None
                c = ours(name, size, batch, steps)
                race([peer, go9 if go9 is not peer else None, c], rounds)
                peer_name = env_id if peer else "-"
                print(f"| {name} {size}x{size} | {batch} | {c.steps_per_s:,.0f} | {c.compile_s:.1f} | {c.state_bytes:,} | "
                      f"{peer_name} | {_peer_cells(peer)} | {_ratio(c, peer)} | {_ratio(c, go9)} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--smoke", action="store_true", help="tiny run for CI")
    parser.add_argument("--sizes", type=int, nargs="*", default=[9, 19])
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 64, 512])
    parser.add_argument("--no-pgx", action="store_true")
    parser.add_argument("--rounds", type=int, default=5, help="alternating timing rounds per row group")
    parser.add_argument("--games", nargs="*", default=["go"], choices=["go", *VARIANTS],
                        help="games to measure (default: go); AtariGo and NoGo use --sizes")
    parser.add_argument("--hex-sizes", type=int, nargs="*", default=[11])
    args = parser.parse_args(argv)
    sizes, batches = ([5], [4]) if args.smoke else (args.sizes, args.batches)
    hex_sizes = [5] if args.smoke else args.hex_sizes
    use_pgx = not (args.no_pgx or args.smoke)
    rounds = 1 if args.smoke else args.rounds

    print(f"# {platform.processor() or platform.machine()}, {jax.devices()[0].platform}, jax {jax.__version__}")
    if "go" in args.games:
        go_table(sizes, batches, args.smoke, use_pgx, rounds)
    if any(g in VARIANTS for g in args.games):
        variant_table(args.games, sizes, hex_sizes, batches, args.smoke, use_pgx, rounds)


if __name__ == "__main__":
    main()
