"""What the capture reader costs (``search.tactical_evaluator``, a network player's ``tactics=``).

Two tables for docs/benchmarks.md:

1. Simulations per second of a network player without and with the tactical prior, each move a
   fixed number of simulations on a position of the 9x9 tactical suite (every third one), the
   players in turn position by position so that a changing load weighs on each alike; the
   ratio to the player without it.
2. The reader alone (``search.tactical_moves``, jitted) on a batch of the suite's positions:
   saving captures and ladders (what every node reads) and with nets (what the root reads).

    python experiments/bench_tactical_prior.py            # the shipped network, 256 simulations
    python experiments/bench_tactical_prior.py --smoke    # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax.games.go import Go
from alphago_jax.play import registry, tactics
from alphago_jax.search import tactical_moves

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402


def load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def simulations_table(base: str, weights, problems, rounds: int) -> None:
    specs = [base] + [f"{base},tactics={w:g}" for w in weights]
    players = [registry.make_player(spec) for spec in specs]
    for player in players:  # compile before timing
        tactics.set_up(player, problems[0])
        player.genmove(problems[0].to_play)
    seconds, sims = np.zeros(len(players)), np.zeros(len(players))
    start_load = load()
    for _ in range(rounds):
        for problem in problems:
            for i, player in enumerate(players):
                tactics.set_up(player, problem)
                t = time.perf_counter()
                decision = player.genmove(problem.to_play)
                seconds[i] += time.perf_counter() - t
                sims[i] += decision.simulations
    rate = sims / seconds
    print(f"| player | positions x rounds | simulations / s | against `{base}` | load (start, end) |")
    print("|---|---:|---:|---:|---|")
    for spec, r in zip(specs, rate):
        print(f"| `{spec}` | {len(problems)} x {rounds} | {r:,.0f} | {r / rate[0]:.2f} | {start_load}, {load()} |")
    print()


def reader_table(problems, repeats: int) -> None:
    game = Go(size=tactics.SIZE)
    boards = jnp.asarray(np.stack([p.setup for p in problems]), jnp.int8)
    states = jax.vmap(game.init_from_board)(boards, jnp.asarray([p.to_play for p in problems], jnp.int8))
    reader = jax.jit(tactical_moves, static_argnums=(1, 2))
    print("| reading | batch | ms per batch | ms per position |")
    print("|---|---:|---:|---:|")
    for nets, name in ((False, "saving captures and ladders (every node)"), (True, "and nets (the root)")):
        jax.block_until_ready(reader(states, tactics.SIZE, nets))
        t = time.perf_counter()
        for _ in range(repeats):
            jax.block_until_ready(reader(states, tactics.SIZE, nets))
        ms = (time.perf_counter() - t) / repeats * 1e3
        print(f"| {name} | {len(problems)} | {ms:.2f} | {ms / len(problems):.3f} |")
    print()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--player", default="default", help="the player without the prior (a registry spec)")
    parser.add_argument("--sims", type=int, default=256, help="simulations a move")
    parser.add_argument("--weights", type=float, nargs="+", default=[0.3], help="the tactics= weights to time")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="tiny, for CI")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    problems = tactics.load_suite()
    base = f"{args.player},sims={args.sims}" if ":" in args.player else f"{args.player}:sims={args.sims}"
    if args.smoke:
        problems, base, args.rounds = problems[:2], "net:net=untrained,sims=8,nodes=64", 1
    else:
        problems = problems[::3]
    simulations_table(base, args.weights, problems, args.rounds)
    reader_table(problems[:8], 2 if args.smoke else 50)
    print_header("bench_tactical_prior.py", argv, "the 9x9 tactical suite's positions", t0)


if __name__ == "__main__":
    main()
