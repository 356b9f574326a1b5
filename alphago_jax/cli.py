"""The ``alphago-jax`` command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import sys
import time


def _demo(args) -> int:
    import jax
    import numpy as np

    from alphago_jax import games
    from alphago_jax.games import grid
    from alphago_jax.playout import random_games

    game = games.make("go", size=args.size, komi=args.komi)
    play = jax.jit(random_games, static_argnums=(0, 2))
    key = jax.random.PRNGKey(args.seed)
    print(f"Playing {args.batch} random legal games of {args.size}x{args.size} Go (positional superko, "
          f"komi {game.komi}) in one jitted, vmapped loop on {jax.devices()[0].platform.upper()}...")
    t0 = time.perf_counter()
    compiled = play.lower(game, key, args.batch).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    states, steps = compiled(key)
    moves = int(np.sum(np.asarray(states.move_count)))
    elapsed = time.perf_counter() - t0
    scores = np.asarray(jax.vmap(game.score)(states))
    print(f"compiled in {compile_s:.1f} s; {moves:,} moves in {elapsed:.2f} s: "
          f"{moves / elapsed:,.0f} moves/s (the batch runs in lockstep for {int(steps)} steps)")
    print(f"black won {np.mean(scores > 0):.0%}, white won {np.mean(scores < 0):.0%} of the games")
    s0 = jax.tree_util.tree_map(lambda x: np.asarray(x[0]), states)
    print(f"\nGame 1 after {int(s0.move_count)} moves (X black, O white):")
    print(grid.render(s0.board, args.size, int(s0.last_move) if s0.last_move < args.size**2 else None))
    area = np.asarray(game.area(s0))
    print(f"Tromp-Taylor area: black {area[0]}, white {area[1]}, komi {game.komi}: "
          f"score {float(scores[0]):+.1f} ({'black' if scores[0] > 0 else 'white'} wins)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="alphago-jax", description="AlphaGo, AlphaGo Zero, GRAVE and MCPS as batched JAX functions.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play a batch of random legal games with the JAX rules")
    demo.add_argument("--size", type=int, default=9, help="board size, 2 to 19 (default 9)")
    demo.add_argument("--batch", type=int, default=256, help="games played at once (default 256)")
    demo.add_argument("--komi", type=float, default=7.5, help="points given to white (default 7.5)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.set_defaults(run=_demo)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ValueError as e:  # bad sizes, unknown games: a clear message, no traceback
        print(f"alphago-jax {args.command}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
