"""MCPS against GRAVE, the design of Cazenave's MCPS paper (arXiv:2510.06381, 2025), as batched games.

Per cell (game x board size x budget): N games, MCPS black in the first half and white in the
second. All N games advance in lockstep, one ply at a time: at each ply MCPS searches the N/2
games in which it is to move as one batch, and GRAVE the other N/2, each with its own
jitted search (``search.grave.GraveSearch``: Cazenave's settings, GRAVE ref = 50,
bias = 1e-5; MCPS W = 10,000, rho = 30, the same ref). The budget is either playouts per move
(``300``) or wall time per batched move (``0.5s``: each side adds chunks of 50 playouts to its
N/2 trees until the time is spent or the trees, of ``--max-playouts`` + 1 nodes, are full, so
the slower side runs fewer playouts). The empty trees are allocated before the time starts;
still, a capacity far above the playouts the time allows costs MCPS, whose nodes hold twice the
statistics, more than GRAVE (docs/mcps.md, "Equal time"): set it a little above them.

With ``--one-at-a-time`` each side searches its games one by one (batch 1) instead, as the
paper's sequential program does, and a budget in seconds is the time per move of one game. Under
``vmap`` every game of a batch waits for the batch's longest descent and longest random game, so
a batched timed move charges a deeper tree for the deepest descent of all its games; alone,
a game pays for its own descent and playout only.

Printed: a markdown table with MCPS's wins, win rate and its 95% Wilson interval, its win rates
as black and as white (a game that the first or the second player wins under both searches
pins the overall rate at 0.5 whatever their strengths), and per side the mean tree depth
(the deepest node of the tree, averaged over the side's searched moves) and playouts per
second (the side's playouts over the wall time of its searches). For the cells budgeted in
seconds, a second table gives each side's playouts per move and game by ply range (the opening
apart from the endgame, where short playouts make many).

    python experiments/mcps_vs_grave.py --smoke                      # tiny, for CI
    python experiments/mcps_vs_grave.py --games nogo atari_go hex go --sizes 5 7 --budgets 300 --n 100
    python experiments/mcps_vs_grave.py --cell go:7:200:50 --cell hex:7:0.5s:100
    python experiments/mcps_vs_grave.py --one-at-a-time --cell nogo:5:0.4s:400   # 0.4 s per move of a game
    python experiments/mcps_vs_grave.py --playout-simple-ko --cell go:7:10000:40    # Go playouts under simple ko
    python experiments/mcps_vs_grave.py --carry-window --cell go:7:1000:200   # MCPS's window spans moves

With ``--carry-window`` MCPS keeps its playout window from one move of a game to the next (all W
slots stored), so that a node frozen early in a search counts the last W playouts of the game's
recent searches too, not only the current search's: the other reading of the seed's "sliding
window of recent playouts" (by default the window holds the current search's playouts only).
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import tqdm

from alphago_jax.search.grave import GraveConfig, GraveSearch
from alphago_jax.search.time_control import search_for
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.train.mesh import data_mesh, to_devices

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from bench_grave_mcps import make_game  # noqa: E402
from benchlib import print_header  # noqa: E402

CHUNK = 50  # playouts per chunk of a time-budgeted search


@dataclasses.dataclass(frozen=True)
class Cell:
    game: str
    size: int
    playouts: int | None  # playouts per move, or None with ``seconds``
    seconds: float | None  # wall time per batched move (per move of one game if ``alone``)
    n: int
    alone: bool = False  # each game searched on its own (batch 1) rather than in a batch

    @property
    def budget(self) -> str:
        budget = f"{self.playouts} playouts" if self.playouts else f"{self.seconds:g} s"
        return f"{budget}, one game at a time" if self.alone else budget


@dataclasses.dataclass
class Side:
    """One side's bookkeeping over a match."""

    name: str
    search: GraveSearch
    seconds: float = 0.0
    playouts: int = 0
    depths: list = dataclasses.field(default_factory=list)
    # per searched move: (ply from 1, playouts per game searched), for ``budget_table``
    per_move: list = dataclasses.field(default_factory=list)
    # "black" / "white" -> MatchResult of the side's games with that colour (set by play_cell)
    by_colour: dict = dataclasses.field(default_factory=dict)
    # MCPS with a window carried across moves: batch key -> the window its last search left
    windows: dict | None = None

    def warm_up(self, states, seconds: float | None) -> None:
        """Compile the calls ``move`` makes (outside its timing)."""
        key = jax.random.PRNGKey(0)
        if seconds is None:
            jax.block_until_ready(self.search.run(None, self.search.init(states), key))
        else:  # one chunk of the timed search, every call it makes
            jax.block_until_ready(search_for(self.search, None, self.search.init(states), key, 0.0, CHUNK)[0].actions)

    def move(self, states, key, seconds: float | None, ply: int = 1, games=None):
        """Search ``states`` (a batch) at ``ply`` (the move number, from 1) and return the
        actions; time and count the search. ``games`` (hashable) names the batch's games, whose
        window the search starts from and leaves when ``windows`` is set."""
        live = ~np.asarray(states.terminal)
        t0 = time.perf_counter()  # the side's wall time, for playouts/s, counts the allocation
        # The empty tree is allocated before a time budget starts: its fixed capacity (MCPS's
        # holds twice the statistics) is an artifact of fixed shapes, not search work.
        tree = self.search.init(states)
        if self.windows is not None and games in self.windows:
            tree = tree.replace(window=self.windows[games])
        tree = jax.block_until_ready(tree)
        if seconds is None:
            out, tree = self.search.run(None, tree, key)
        else:  # chunks while the next one, timed like the last, still fits
            out, tree, _ = search_for(self.search, None, tree, key, seconds, CHUNK)
        jax.block_until_ready(out.actions)
        self.seconds += time.perf_counter() - t0
        if self.windows is not None:
            self.windows[games] = tree.window
        playouts = np.asarray(tree.playouts)
        self.playouts += int(np.sum(playouts))
        if live.any():
            self.per_move.append((ply, float(np.mean(playouts[live]))))
        self.depths.extend(np.asarray(tree.max_depth())[live].tolist())
        return out.actions

    @property
    def rate(self) -> float:
        return self.playouts / max(self.seconds, 1e-9)

    def playouts_per_move(self, first: int, last: float) -> float:
        """Mean playouts per game of the side's searched moves at plies ``first`` to ``last``
        (from 1, both included)."""
        found = [n for ply, n in self.per_move if first <= ply <= last]
        return float(np.mean(found)) if found else float("nan")

    @property
    def depth(self) -> float:
        return float(np.mean(self.depths)) if self.depths else float("nan")


def results_by_colour(returns, player: str, opponent: str) -> tuple[MatchResult, MatchResult]:
    """``player``'s results as black and as white, from ``returns`` float[N, 2] (black's and
    white's, per game), ``player`` black in the first N/2 games and white in the others."""
    half = len(returns) // 2
    return (MatchResult.from_outcomes(player, opponent, returns[:half, 0]),
            MatchResult.from_outcomes(player, opponent, returns[half:, 1]))


def play_cell(cell: Cell, seed: int = 0, max_playouts: int = 4000, players=("mcps", "grave"), progress: bool = True,
              playout_superko: bool = True, carry_window: bool = False):
    """Play one cell between two algorithms of ``GraveConfig`` (default MCPS, GRAVE), with a
    progress bar of finished games on stderr unless ``progress`` is False; ``playout_superko``
    False plays both sides' Go playouts under simple ko (``GraveConfig.playout_superko``);
    ``carry_window`` keeps an MCPS side's window (all W slots) from each move of a game to its
    next (module docstring).

    Returns (MatchResult from the first player's side, the first's Side, the second's, plies);
    each Side's ``by_colour`` holds its results as black and as white.
    """
    if cell.n < 2 or cell.n % 2:
        raise ValueError(f"n must be even and at least 2 (split by colour), got {cell.n}")
    game = make_game(cell.game, cell.size)
    # A carried window needs all W slots: it outlives the search that sized the trimmed one.
    common = dict(playout_superko=playout_superko, trim_window=not carry_window)
    if cell.playouts:
        configs = [GraveConfig(algorithm=alg, playouts=cell.playouts, **common) for alg in players]
    else:
        configs = [GraveConfig(algorithm=alg, playouts=CHUNK, tree_capacity=max_playouts + 1, **common)
                   for alg in players]
    mcps_side, grave_side = (Side(alg.upper(), GraveSearch(game, cfg), windows={} if carry_window and alg == "mcps"
                                  else None) for alg, cfg in zip(players, configs))
    half = cell.n // 2
    states = jax.vmap(lambda _: game.init())(jnp.arange(cell.n))
    # Batched, each side searches its N/2 games on all devices; alone, one game on one device.
    mesh = None if cell.alone else data_mesh(half, "games per side (n / 2)")
    spread = lambda states: to_devices(states, mesh)  # noqa: E731
    for side in (mcps_side, grave_side):
        side.warm_up(spread(jax.tree_util.tree_map(lambda x: x[:1 if cell.alone else half], states)), cell.seconds)
    first, second = np.arange(half), np.arange(half, cell.n)  # MCPS black in ``first``
    step = jax.jit(jax.vmap(game.step))
    take = jax.jit(lambda s, idx: jax.tree_util.tree_map(lambda x: x[idx], s))
    key = jax.random.PRNGKey(seed)
    ply = 0
    bar = tqdm(total=cell.n, desc=f"{cell.game} {cell.size}x{cell.size} {cell.budget}", unit="game",
               disable=not progress, file=sys.stderr)
    while not bool(jnp.all(states.terminal)):
        # Every game starts with black and alternates, so the colour to move is the ply's.
        black = ply % 2 == 0
        live = ~np.asarray(states.terminal)
        assert np.all(np.asarray(states.to_play)[live] == (1 if black else -1))
        mcps_games, grave_games = (first, second) if black else (second, first)
        key, k_m, k_g = jax.random.split(key, 3)
        actions = np.zeros(cell.n, np.int32)
        for side, idx, k in ((mcps_side, mcps_games, k_m), (grave_side, grave_games, k_g)):
            if cell.alone:  # the games still being played, one search each
                for i, k_i in zip(idx[live[idx]], jax.random.split(k, len(idx))):
                    one = take(states, np.array([i]))
                    actions[i] = np.asarray(side.move(one, k_i, cell.seconds, ply + 1, int(i)))[0]
            else:
                actions[idx] = np.asarray(side.move(spread(take(states, idx)), k, cell.seconds, ply + 1, black))
        states = step(states, jnp.asarray(actions))
        ply += 1
        bar.set_postfix(ply=ply, refresh=False)
        bar.update(int(np.sum(np.asarray(states.terminal))) - bar.n)
    bar.close()
    as_black, as_white = results_by_colour(np.asarray(jax.vmap(game.returns)(states)), mcps_side.name, grave_side.name)
    mcps_side.by_colour = {"black": as_black, "white": as_white}
    grave_side.by_colour = {"black": as_white.swapped(), "white": as_black.swapped()}
    return as_black + as_white, mcps_side, grave_side, ply


def _header_lines(header, left: int) -> list[str]:
    """A markdown table's header row and rule, the first ``left`` columns left-aligned."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * left + ["---:"] * (len(header) - left)) + "|"]


def table(rows) -> str:
    a, b = (rows[0][2].name, rows[0][3].name) if rows else ("MCPS", "GRAVE")
    header = ["game", "size", "budget per move", "N", f"{a} wins", f"{a} win rate", "95% interval",
              f"{a} as black", f"{a} as white", f"depth {a}", f"depth {b}", f"playouts/s {a}",
              f"playouts/s {b}", "plies", "wall s"]
    lines = _header_lines(header, 3)
    for cell, match, m, g, plies, wall in rows:
        lo, hi = match.interval()
        lines.append("| " + " | ".join([
            cell.game, f"{cell.size}x{cell.size}", cell.budget, str(match.games), str(match.wins),
            f"{match.win_rate:.3f}", f"[{lo:.3f}, {hi:.3f}]",
            f"{m.by_colour['black'].win_rate:.3f}", f"{m.by_colour['white'].win_rate:.3f}",
            f"{m.depth:.1f}", f"{g.depth:.1f}",
            f"{m.rate:,.0f}", f"{g.rate:,.0f}", str(plies), f"{wall:.0f}",
        ]) + " |")
    return "\n".join(lines) + "\n"


PLY_RANGES = ((1, 10), (11, 20), (21, 30), (31, float("inf")))  # counted from 1, the first move


def budget_table(rows) -> str:
    """Playouts per move of each side by ply range, for the timed cells (where the budget is
    seconds, what each side made of it); empty if there are none."""
    timed = [row for row in rows if row[0].seconds]
    if not timed:
        return ""
    a, b = timed[0][2].name, timed[0][3].name
    ranges = [f"plies {lo}+" if hi == float("inf") else f"plies {lo}-{hi}" for lo, hi in PLY_RANGES]
    header = ["game", "size", "budget per move", "side"] + ranges
    lines = _header_lines(header, 4)
    for cell, _, m, g, _, _ in timed:
        for side in (m, g):
            means = [side.playouts_per_move(lo, hi) for lo, hi in PLY_RANGES]
            lines.append("| " + " | ".join([cell.game, f"{cell.size}x{cell.size}", cell.budget, side.name]
                                            + ["-" if np.isnan(x) else f"{x:,.0f}" for x in means]) + " |")
    return f"Playouts per move and game, {a} and {b}, by ply:\n\n" + "\n".join(lines) + "\n"


def parse_budget(text: str) -> tuple[int | None, float | None]:
    """``"300"`` -> 300 playouts per move; ``"0.5s"`` -> 0.5 s per batched move."""
    t = text.strip().lower()
    if t.endswith("s"):
        return None, float(t[:-1])
    return int(t), None


def parse_cell(text: str, default_n: int, alone: bool = False) -> Cell:
    """``game:size:budget[:n]``, e.g. ``go:7:200:50`` or ``hex:7:0.5s``."""
    parts = text.split(":")
    if len(parts) not in (3, 4):
        raise argparse.ArgumentTypeError(f"--cell wants game:size:budget[:n], got {text!r}")
    playouts, seconds = parse_budget(parts[2])
    return Cell(parts[0], int(parts[1]), playouts, seconds, int(parts[3]) if len(parts) == 4 else default_n, alone)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", nargs="+", default=["nogo", "atari_go", "hex", "go"])
    p.add_argument("--sizes", nargs="+", type=int, default=[5, 7])
    p.add_argument("--budgets", nargs="+", default=["300"], help="playouts per move (300) or seconds (0.5s)")
    p.add_argument("--n", type=int, default=100, help="games per cell, half with each colour")
    p.add_argument("--cell", action="append", default=[], help="game:size:budget[:n]; replaces the grid")
    p.add_argument("--max-playouts", type=int, default=4000,
                   help="tree capacity of time-budgeted searches (a little above the playouts the time allows)")
    p.add_argument("--one-at-a-time", action="store_true",
                   help="each side searches its games one by one (batch 1): seconds are per move of one game")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--players", nargs=2, default=["mcps", "grave"], metavar=("FIRST", "SECOND"),
                   help="two of uct, rave, grave, mcps (e.g. grave uct to check GRAVE)")
    p.add_argument("--playout-simple-ko", action="store_true",
                   help="Go: both sides' random playouts under simple ko instead of positional superko "
                        "(about 1.5x the playouts per second; the games keep positional superko)")
    p.add_argument("--carry-window", action="store_true",
                   help="MCPS keeps its playout window (all W slots) from each move of a game to the next")
    p.add_argument("--smoke", action="store_true", help="one tiny cell, for CI")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    t_start = time.perf_counter()
    if args.smoke:
        cells = [Cell("nogo", 5, 16, None, 4), Cell("nogo", 5, None, 0.01, 2, alone=True)]
    elif args.cell:
        cells = [parse_cell(c, args.n, args.one_at_a_time) for c in args.cell]
    else:
        cells = [Cell(g, s, *parse_budget(b), args.n, args.one_at_a_time)
                 for g in args.games for s in args.sizes for b in args.budgets]
    rows = []
    for cell in cells:
        t0 = time.perf_counter()
        match, m, g, plies = play_cell(cell, args.seed, args.max_playouts, tuple(args.players), not args.no_progress,
                                       not args.playout_simple_ko, args.carry_window)
        rows.append((cell, match, m, g, plies, time.perf_counter() - t0))
        print(table(rows[-1:]).splitlines()[-1], flush=True, file=sys.stderr)  # progress
    print()
    print_header("mcps_vs_grave.py", argv, f"{len(cells)} cell(s)", t_start)
    print(table(rows))
    extra = budget_table(rows)
    if extra:
        print(extra)


if __name__ == "__main__":
    main()
