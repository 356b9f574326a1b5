"""Search settings against the shipped network's own: matches of PUCT settings, one network.

Each candidate (``--candidate c_puct=2.5``, ``--candidate fpu_reduction=0.2,c_puct=2``: fields of
``search.SearchConfig``) plays ``2 * --pairs`` games against the network player's settings
(``play.search_player.play_search_config``: c_puct 1.25, no FPU reduction, 8 leaves a network
call), both with the same network and the same simulations a move. The games run batched in
lockstep (``zero.selfplay.play_match``): each pair starts from its own random opening of
``--opening`` moves (``play.arena.match_openings``: distinct up to the board's symmetries), once
with each colour, and both sides play their most-visited move, so every game is its own. Each
move is searched on a fresh tree (the players reuse theirs); games are scored by area
(Tromp-Taylor) and played to the end, as the arena plays them.

    python experiments/tune_search.py --candidate c_puct=2.5 --candidate fpu_reduction=0.2
    python experiments/tune_search.py --smoke          # tiny, for CI
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import games
from alphago_jax.games.history import WithHistory
from alphago_jax.play.arena import match_openings
from alphago_jax.play.registry import load_network
from alphago_jax.play.search_player import play_search_config
from alphago_jax.search import SYMMETRIES, SearchConfig, make_search, network_evaluator
from alphago_jax.train.evaluation import elo_difference, wilson_interval
from alphago_jax.zero.selfplay import play_match, search_mover

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import print_header  # noqa: E402

TUNABLE = {"c_puct": float, "fpu_reduction": float, "leaf_batch": int, "max_depth": int, "move_choice": str,
           "symmetries": str}
"""What a candidate may change, and the types: ``SearchConfig`` fields, and the network evaluator's
``symmetries`` (``"random"``: one random map of the board per position evaluated)."""


def parse_candidate(text: str, base: SearchConfig) -> tuple[SearchConfig, str]:
    """``base`` with the ``name=value`` pairs of ``text`` (comma-separated) replaced, and the
    evaluator's symmetries (``"none"`` unless ``text`` names them)."""
    changes = {}
    for part in filter(None, text.split(",")):
        name, sep, value = part.partition("=")
        if not sep or name not in TUNABLE:
            raise SystemExit(f"--candidate: expected name=value with name one of {', '.join(TUNABLE)}; got {part!r}")
        try:
            changes[name] = TUNABLE[name](value)
        except ValueError:
            raise SystemExit(f"--candidate: {name} takes a {TUNABLE[name].__name__}, got {value!r}") from None
    symmetries = changes.pop("symmetries", "none")
    if symmetries not in SYMMETRIES:
        raise SystemExit(f"--candidate: symmetries is one of {', '.join(SYMMETRIES)}, got {symmetries!r}")
    try:
        return dataclasses.replace(base, **changes), symmetries
    except (TypeError, ValueError) as e:
        raise SystemExit(f"--candidate {text!r}: {e}") from None


def starts_of(game, openings: list[list[int]]):
    """A batch of ``game`` states, one per opening (each an even number of moves: black to move)."""
    step = jax.jit(game.step)
    states = []
    for opening in openings:
        state = game.init()
        for action in opening:
            state = step(state, jnp.int32(action))
        states.append(state)
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *states)


def match(game, network, params, candidate: tuple[SearchConfig, str], base: SearchConfig, starts, pairs: int,
          seed: int):
    """``play_match`` of ``candidate`` (settings and symmetries: the player) against ``base``;
    returns (outcomes float[G], moves int[G, T], seconds)."""
    ours = search_mover(make_search(game, network_evaluator(network.apply, network.planes, candidate[1]),
                                    candidate[0]))
    theirs = search_mover(make_search(game, network_evaluator(network.apply, network.planes), base))
    run = jax.jit(functools.partial(play_match, game, ours, theirs, pairs, starts=starts))
    t0 = time.perf_counter()
    out = jax.block_until_ready(run(params, params, jax.random.PRNGKey(seed)))
    return np.asarray(out.outcomes), np.asarray(out.moves), time.perf_counter() - t0


def row(name: str, outcomes: np.ndarray, moves: np.ndarray, seconds: float) -> dict:
    """One candidate's figures: wins (draws count half), the 95% interval, Elo, distinct games."""
    games_n = len(outcomes)
    wins = float(np.sum(outcomes > 0) + 0.5 * np.sum(outcomes == 0))
    lo, hi = wilson_interval(wins, games_n)
    as_black = float(np.sum(outcomes[0::2] > 0))
    distinct = len({tuple(m[m >= 0]) for m in moves})
    plies = int(np.sum(moves >= 0))
    return dict(candidate=name, games=games_n, wins=wins, rate=wins / games_n, low=lo, high=hi,
                elo=elo_difference(wins / games_n, games_n), as_black=as_black, distinct=distinct,
                mean_moves=plies / games_n, seconds=seconds)


def table(rows: list[dict], sims: int) -> str:
    lines = [f"| candidate (against c_puct 1.25, no FPU reduction; {sims} simulations a move, both) | games | wins "
             "| win rate | 95% interval | Elo | wins as black | distinct games | moves a game after the opening | wall |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| `{r['candidate']}` | {r['games']} | {r['wins']:g} | {r['rate']:.3f} | "
                     f"[{r['low']:.3f}, {r['high']:.3f}] | {round(r['elo']) or 0:+d} | {r['as_black']:g} / {r['games'] // 2} | "
                     f"{r['distinct']} | {r['mean_moves']:.0f} | {r['seconds'] / 60:.1f} min |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidate", action="append", default=[], metavar="NAME=VALUE[,...]")
    ap.add_argument("--net", default="shipped", help="a network spec, as the players take it (default: shipped)")
    ap.add_argument("--size", type=int, default=9)
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--sims", type=int, default=128, help="simulations a move, both sides")
    ap.add_argument("--pairs", type=int, default=32, help="pairs of games a candidate (one opening each)")
    ap.add_argument("--first-pair", type=int, default=1,
                    help="start from this pair's opening (more games after an earlier run: --first-pair 33)")
    ap.add_argument("--opening", type=int, default=2, help="random moves before the match's own (even)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=pathlib.Path, help="also write the rows as JSON here")
    ap.add_argument("--smoke", action="store_true", help="tiny: an untrained network, 5x5, 8 simulations")
    args = ap.parse_args(argv)
    if args.smoke:
        args.net, args.size, args.sims, args.pairs = "untrained", 5, 8, 2
        args.candidate = args.candidate or ["c_puct=2.5"]
    if not args.candidate:
        ap.error("give at least one --candidate, e.g. --candidate c_puct=2.5")
    if args.first_pair < 1:
        ap.error("--first-pair counts from 1")
    if args.opening % 2:
        ap.error("--opening must be even: each pair starts with black to move")
    t_start = time.perf_counter()
    try:
        network = load_network(args.net)
    except ValueError as e:
        ap.error(f"--net: {e}")
    game = WithHistory(games.make("go", size=args.size, komi=args.komi), boards=network.history)
    params = network.variables(args.size)
    base = play_search_config(args.sims, args.sims + 1, leaf_batch=min(8, args.sims))
    openings = match_openings(args.size, args.komi, args.opening)
    for _ in range(args.first_pair - 1):  # the earlier runs' openings
        next(openings)
    starts = starts_of(game, [next(openings) for _ in range(args.pairs)])
    rows = []
    for text in args.candidate:
        candidate = parse_candidate(text, base)
        outcomes, moves, seconds = match(game, network, params, candidate, base, starts, args.pairs, args.seed)
        rows.append(row(text, outcomes, moves, seconds))
        print(f"{text}: {rows[-1]['wins']:g} of {rows[-1]['games']} ({seconds:.0f} s)", flush=True)
    print()
    print_header("tune_search.py", argv, f"network {args.net}, {args.size}x{args.size}, komi {args.komi}", t_start)
    print(table(rows, args.sims))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
