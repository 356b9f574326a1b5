"""What MCPS's permutation statistics hold, per game, and how well they order a node's moves.

MCPS's third statistic at a node counts the window's playouts that contain every move of the
node's path and the candidate move, in any order (``search.mcps``). How much that tells a
search depends on the game. For each game this runs ``--batch`` MCPS searches of
``--playouts`` playouts from the empty board, with the settings of ``mcps_vs_grave.py`` (Go:
komi 7.5, eyes kept, positional superko), one playout at a time (``GraveSearch.iterate``), and
reads the playouts and the final window back with numpy, independently of the package's bitset
code:

- plies: moves per playout from the root (path and random moves), mean over all playouts;
- replayed: the share of those moves (passes aside) played on a point already played in the
  same playout, which in Go follows a capture; where stones stay, 0;
- presence gap: over the move codes in 10 to 90% of a window's playouts, the mean of
  |black's win rate over the playouts that contain the code - over those that do not|: how
  much a move's presence anywhere in a playout says about its result, which AMAF and
  permutation statistics both rest on;
- for the frozen nodes at depth 1 and 2 (those whose permutation statistics MCPS uses below
  them): "nodes", how many. Then, for up to ``--nodes`` of them drawn at random: "share", the
  mean share of the window's playouts that contain a node's whole path (the playouts its
  statistics count); and for each of their moves with at least 20 samples in each statistic
  ("pairs"): the move's permutation estimate Q^ (black's win rate over the final window's
  playouts that contain the path and the move), the same as frozen (over the window when the
  node froze: what MCPS mixes in below it), its AMAF estimate Q~ at GRAVE's reference (the
  deepest node of the path with over 50 playouts: what GRAVE mixes in), and its value v, the
  mean result of ``--rollouts`` uniform random playouts (eyes kept) from the position after it,
  which the estimates stand in for. Per node (5 moves or more): "spread v", the standard
  deviation of v over its moves, to set beside v's own noise (at most 0.5 / sqrt(rollouts));
  "rank corr", the Spearman correlation of each estimate with v over its moves, which is what a
  selection rule needs of it (an offset shared by a node's moves leaves the choice among them
  unchanged); each the mean over nodes.

    python experiments/mcps_statistics.py              # the four games on 7x7, 8 x 1,000 playouts
    python experiments/mcps_statistics.py --smoke      # tiny, for CI
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings
from collections import defaultdict

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import spearmanr
from tqdm import tqdm

from alphago_jax.search.amaf import black_score, game_length_bound, random_playout
from alphago_jax.search.grave import GraveConfig, GraveSearch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from bench_grave_mcps import make_game  # noqa: E402
from benchlib import print_header  # noqa: E402

DEPTHS = (1, 2)
MIN_SAMPLES = 20  # samples a move needs in both estimates to be compared


def run_searches(game, batch: int, playouts: int, seed: int, progress: bool):
    """The final trees (numpy pytree) and the playouts' actions int32[P, B, L] and lengths int32[P, B]."""
    search = GraveSearch(game, GraveConfig(algorithm="mcps", playouts=playouts))
    tree = search.init(jax.vmap(lambda _: game.init())(jnp.arange(batch)))
    actions, lengths = [], []
    for key in tqdm(jax.random.split(jax.random.PRNGKey(seed), playouts), desc=f"{game.name} {game.size}x{game.size}",
                    leave=False, disable=not progress):
        tree, rows = search.iterate(tree, key)
        actions.append(np.asarray(rows.actions))
        lengths.append(np.asarray(rows.length))
    return jax.tree_util.tree_map(np.asarray, tree), np.stack(actions), np.stack(lengths)


def replayed_share(actions, lengths, num_points: int) -> tuple[float, float]:
    """(mean plies per playout, share of point moves on a point already played in the playout)."""
    plies = replays = point_moves = 0
    for row, length in zip(actions.reshape(-1, actions.shape[-1]), lengths.reshape(-1)):
        moves = row[:length]
        moves = moves[moves < num_points]  # passes (and Hex's swap) are not points
        plies += length
        point_moves += moves.size
        replays += moves.size - np.unique(moves).size
    return plies / lengths.size, replays / max(point_moves, 1)


def window_arrays(window, game_index: int):
    """One game's window, its P filled slots in slot order: bool[P, M] (the playout contains the
    code) and black's score float64[P] (1 win, 1/2 draw, 0 loss)."""
    filled = np.unpackbits(window.filled[game_index].view(np.uint8), bitorder="little").astype(bool)
    bits = np.unpackbits(window.bits[game_index].view(np.uint8), axis=-1, bitorder="little")
    black = np.unpackbits(window.black_wins[game_index].view(np.uint8), bitorder="little")
    white = np.unpackbits(window.white_wins[game_index].view(np.uint8), bitorder="little")
    score = np.where(black, 1.0, np.where(white, 0.0, 0.5))
    return bits[:, filled].T.astype(bool), score[filled]


def presence_gap(contains, score) -> float:
    """Mean |win rate with the code - without it| over codes in 10 to 90% of the playouts."""
    share = contains.mean(axis=0)
    gaps = [abs(score[c].mean() - score[~c].mean()) for c, s in zip(contains.T, share) if 0.1 <= s <= 0.9]
    return float(np.mean(gaps)) if gaps else float("nan")


def path_nodes(tree, game_index: int, node: int) -> list[int]:
    """The nodes from the root to ``node``, both included."""
    nodes = [node]
    while tree.parent[game_index, nodes[-1]] >= 0:
        nodes.append(int(tree.parent[game_index, nodes[-1]]))
    return nodes[::-1]


def playout_values(game, states, keys) -> np.ndarray:
    """float32[N]: black's score of one uniform random playout (eyes kept, as the searches')
    from each state; ``states`` a batch of N, ``keys`` N keys."""
    bound = game_length_bound(game)
    record = (jnp.zeros((bound,), jnp.int32), jnp.zeros((bound,), jnp.int32), jnp.zeros((bound,), jnp.int8))

    def one(state, key):
        final, _, _ = random_playout(game, state, record, jnp.int32(0), key, True)
        return black_score(game, final)

    return np.asarray(jax.jit(jax.vmap(one))(states, keys))


def move_pairs(tree, windows, depth: int, ref: int, max_nodes: int, rng):
    """The (node, action) pairs of up to ``max_nodes`` frozen nodes at ``depth`` (drawn over the
    batch's games) whose action has at least ``MIN_SAMPLES`` samples in each statistic.

    Returns (frozen nodes at ``depth``, mean share of the window containing a drawn node's path,
    and per pair: game, node, action, Q^, Q^ as frozen, Q~): black's win rates over the final
    window, over the window when the node froze (what MCPS uses), and at GRAVE's reference of
    the node (the deepest node of its path with over ``ref`` playouts)."""
    nodes = [(g, n) for g in range(len(windows)) for n in np.flatnonzero(tree.frozen[g] & (tree.depth[g] == depth))]
    drawn = [nodes[i] for i in rng.permutation(len(nodes))[:max_nodes]]
    shares, pairs = [], []
    for g, node in drawn:
        contains, score = windows[g]
        path = path_nodes(tree, g, node)
        codes = [int(tree.codes[g, parent, tree.action[g, child]]) for parent, child in zip(path, path[1:])]
        in_path = contains[:, codes].all(axis=1)
        shares.append(in_path.mean())
        reference = ([x for x in path if tree.visits[g, x] > ref] or [0])[-1]
        for action in np.flatnonzero(tree.legal[g, node]):
            code = tree.codes[g, node, action]
            with_code = in_path & contains[:, code]
            n_amaf, n_frozen = tree.amaf_n[g, reference, code], tree.perm_n[g, node, code]
            if min(with_code.sum(), n_amaf, n_frozen) >= MIN_SAMPLES:
                pairs.append((g, node, action, score[with_code].mean(), tree.perm_w[g, node, code] / n_frozen,
                              tree.amaf_w[g, reference, code] / n_amaf))
    return len(nodes), float(np.mean(shares)) if shares else float("nan"), pairs


def move_values(game, tree, pairs, rollouts: int, seed: int) -> np.ndarray:
    """float32[len(pairs)]: each pair's v, the mean black score of ``rollouts`` random playouts
    from the position after its action (one batch: one compilation)."""
    g, node, action = (np.array(x) for x in list(zip(*pairs))[:3])
    states = jax.tree_util.tree_map(lambda x: jnp.asarray(x[g, node]), tree.states)
    after = jax.vmap(game.step)(states, jnp.asarray(action, jnp.int32))
    repeated = jax.tree_util.tree_map(lambda x: jnp.repeat(x, rollouts, axis=0), after)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(pairs) * rollouts)
    return playout_values(game, repeated, keys).reshape(len(pairs), rollouts).mean(axis=1)


def rank_agreement(pairs, values) -> str:
    """``pairs | spread v | rank corr Q^ | Q^ frozen | Q~`` cells: over the frozen nodes with at
    least 5 compared moves, the mean standard deviation of v over a node's moves and the mean
    Spearman correlation of each estimate with v over them."""
    by_node = defaultdict(list)
    for (g, node, _, *estimates), v in zip(pairs, values):
        by_node[g, node].append((*estimates, v))
    spread, corr = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant estimate has no rank correlation: nan, skipped
        for *estimates, v in (np.array(rows).T for rows in by_node.values() if len(rows) >= 5):
            spread.append(v.std())
            corr.append([spearmanr(q, v)[0] for q in estimates])
    if not spread:
        return f"{len(pairs)} | - | - | - | -"
    return f"{len(pairs)} | {np.mean(spread):.3f} | " + " | ".join(f"{c:.2f}" for c in np.nanmean(corr, axis=0))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=["nogo", "atari_go", "hex", "go"])
    p.add_argument("--size", type=int, default=7)
    p.add_argument("--batch", type=int, default=8, help="searches per game (each from the empty board)")
    p.add_argument("--playouts", type=int, default=1000, help="playouts per search")
    p.add_argument("--nodes", type=int, default=16, help="frozen nodes per depth whose moves are valued")
    p.add_argument("--rollouts", type=int, default=256, help="random playouts valuing each move")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for CI")
    args = p.parse_args(argv)
    if args.smoke:
        args.games, args.size, args.batch, args.playouts, args.nodes, args.rollouts = ["nogo"], 5, 2, 120, 2, 8
    t_start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    ref = GraveConfig().ref
    lines = []
    for name in args.games:
        game = make_game(name, args.size)
        tree, actions, lengths = run_searches(game, args.batch, args.playouts, args.seed, not args.no_progress)
        plies, replayed = replayed_share(actions, lengths, game.num_points)
        windows = [window_arrays(tree.window, g) for g in range(args.batch)]
        gap = np.mean([presence_gap(contains, score) for contains, score in windows])
        by_depth = [move_pairs(tree, windows, depth, ref, args.nodes, rng) for depth in DEPTHS]
        every_pair = [pair for _, _, pairs in by_depth for pair in pairs]
        values = move_values(game, tree, every_pair, args.rollouts, args.seed) if every_pair else np.zeros(0)
        cells, start = [], 0
        for frozen, share, pairs in by_depth:
            cells.append(f"{frozen} | {share:.3f} | {rank_agreement(pairs, values[start:start + len(pairs)])}")
            start += len(pairs)
        lines.append(f"| {name} | {args.size}x{args.size} | {plies:.1f} | {replayed:.3f} | {gap:.3f} | "
                     + " | ".join(cells) + " |")
    print_header("mcps_statistics.py", argv,
                 f"{args.batch} MCPS searches of {args.playouts:,} playouts per game from the empty board, "
                 f"{args.rollouts} random playouts per valued move", t_start)
    head = " | ".join(f"nodes d{d} | share d{d} | pairs d{d} | spread v d{d} | rank corr Q^ d{d} | Q^ frozen d{d} | Q~ d{d}" for d in DEPTHS)
    print(f"| game | size | plies | replayed | presence gap | {head} |")
    print("|---|---|" + "---:|" * (3 + 7 * len(DEPTHS)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
