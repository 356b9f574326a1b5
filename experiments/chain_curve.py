"""The learning curve of a network's chain, from the match records each link left.

Each point is one match directory (the SGF records ``alphago-jax arena`` wrote) at the compute
spent so far on the chain. The player is the side whose name is not the opponent's (``--opponent``,
a substring of PW/PB, default ``GNU Go``). For each point: games, distinct games (move sequences),
wins, the win rate with its Wilson 95% interval, each side's mean seconds a move (the arena's
per-move comments), and the mean margin of the scored games from the player's side (our own
Tromp-Taylor count, RE; resignations have no margin). GNU Go's own count is in each match's
``results.md``, not in the records. Prints a markdown table and draws the win rate and the mean
margin against compute, one line per series, into one PNG.

    python experiments/chain_curve.py --out docs/zero_19x19_matches/chain.png \\
        "raw policy=2.0=docs/zero_19x19_matches/policy_transfer_vs_gnugo1" \\
        "raw policy=5.4=docs/zero_19x19_matches/policy_second_vs_gnugo1" \\
        "default, 2 s a move=2.8=docs/zero_19x19_matches/default_vs_gnugo1"
    python experiments/chain_curve.py --smoke   # two of those, the figure into a temporary folder
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import tempfile

from alphago_jax import sgf
from alphago_jax.train.evaluation import wilson_interval

MATCHES = pathlib.Path(__file__).resolve().parent.parent / "docs" / "zero_19x19_matches"


@dataclasses.dataclass(frozen=True)
class Point:
    """One match of one link: ``series`` at ``hours`` of compute, its records in ``directory``."""

    series: str
    hours: float
    directory: pathlib.Path
    games: int
    distinct: int
    wins: int
    margins: tuple[float, ...]
    seconds: tuple[float, float]  # mean seconds a move: the player's, the opponent's

    @property
    def win_rate(self) -> float:
        return self.wins / self.games

    @property
    def mean_margin(self) -> float:
        return sum(self.margins) / len(self.margins) if self.margins else float("nan")


def parse_point(text: str) -> tuple[str, float, pathlib.Path]:
    """``SERIES=HOURS=DIRECTORY`` -> its parts; ValueError naming what is wrong."""
    parts = text.rsplit("=", 2)
    if len(parts) != 3:
        raise ValueError(f"a point is SERIES=HOURS=DIRECTORY, got {text!r}")
    series, hours, directory = parts
    try:
        value = float(hours)
    except ValueError:
        raise ValueError(f"{text!r}: compute {hours!r} is not a number of hours") from None
    path = pathlib.Path(directory)
    if not path.is_dir():
        raise ValueError(f"{text!r}: no directory {directory!r}")
    return series, value, path


def margin(result: str | None) -> float | None:
    """Black's margin in an RE value (``B+3.5`` -> 3.5, ``W+12`` -> -12); None for a resignation,
    a time loss or a forfeit."""
    side = sgf.winner_of(result)
    try:
        return side * float(result.strip()[2:]) if side else None
    except ValueError:
        return None


def move_seconds(record: sgf.GameRecord, colour: int) -> list[float]:
    """The seconds of ``colour``'s moves from the arena's comments (``"1.90 s"``); opening moves
    the arena placed have none."""
    return [float(text[:-2]) for (c, _), text in zip(record.moves, record.comments)
            if c == colour and text.endswith(" s")]


def read_point(series: str, hours: float, directory: pathlib.Path, opponent: str) -> Point:
    """Wins, margins and seconds of the player (the side not named ``opponent``) over a match's records."""
    files = sorted(directory.glob("*.sgf"))
    if not files:
        raise ValueError(f"no SGF records in {directory}")
    wins, margins, sequences, ours, theirs = 0, [], set(), [], []
    for path in files:
        record = sgf.load(path, require_moves=False)
        black_is_opponent = opponent.lower() in (record.black_name or "").lower()
        if black_is_opponent == (opponent.lower() in (record.white_name or "").lower()):
            raise ValueError(f"{path}: exactly one side must be named {opponent!r} "
                             f"(PB {record.black_name!r}, PW {record.white_name!r})")
        colour = -1 if black_is_opponent else 1
        sequences.add(record.moves)
        ours += move_seconds(record, colour)
        theirs += move_seconds(record, -colour)
        wins += sgf.winner_of(record.result) == colour
        black_margin = margin(record.result)
        if black_margin is not None:
            margins.append(colour * black_margin)
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    return Point(series, hours, directory, len(files), len(sequences), wins, tuple(margins), (mean(ours), mean(theirs)))


def table(points: list[Point]) -> str:
    """The points as a markdown table."""
    rows = ["| series | compute (CPU core-hours) | games | distinct | wins | win rate | 95% interval | "
            "s / move (player, opponent) | mean margin (scored games) | records |",
            "|---|---:|---:|---:|---:|---:|---|---|---:|---|"]
    for p in points:
        lo, hi = wilson_interval(p.wins, p.games)
        rows.append(f"| {p.series} | {p.hours:g} | {p.games} | {p.distinct} | {p.wins} | {p.win_rate:.3f} | "
                    f"[{lo:.3f}, {hi:.3f}] | {p.seconds[0]:.2f}, {p.seconds[1]:.2f} | "
                    f"{p.mean_margin:+.1f} ({len(p.margins)}) | `{p.directory}` |")
    return "\n".join(rows)


def plot(points: list[Point], out: pathlib.Path, title: str) -> None:
    """Win rate (with its interval) and mean margin against compute, a line per series."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for series in dict.fromkeys(p.series for p in points):
        mine = sorted((p for p in points if p.series == series), key=lambda p: p.hours)
        hours = [p.hours for p in mine]
        rates = [p.win_rate for p in mine]
        bounds = [wilson_interval(p.wins, p.games) for p in mine]
        errors = [[r - lo for r, (lo, _) in zip(rates, bounds)], [hi - r for r, (_, hi) in zip(rates, bounds)]]
        left.errorbar(hours, rates, yerr=errors, marker="o", capsize=4, label=series)
        right.plot(hours, [p.mean_margin for p in mine], marker="o", label=series)
    left.set(xlabel="compute (CPU core-hours)", ylabel="win rate (95% interval)", ylim=(0, 1))
    right.set(xlabel="compute (CPU core-hours)", ylabel="mean margin of the scored games (points)")
    right.axhline(0, color="grey", linewidth=0.8)
    left.legend()
    fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("points", nargs="*", metavar="SERIES=HOURS=DIRECTORY",
                        help="a match of one link: its series, the chain's compute so far, its records")
    parser.add_argument("--opponent", default="GNU Go", help="the opponent's name in PB/PW (default 'GNU Go')")
    parser.add_argument("--title", default="the chain against GNU Go level 1, 19x19", help="the figure's title")
    parser.add_argument("--out", type=pathlib.Path, help="write the figure here (PNG)")
    parser.add_argument("--smoke", action="store_true",
                        help="the raw policies of the 19x19 chain's first two links, the figure into a temporary folder (CI)")
    args = parser.parse_args()
    if args.smoke:
        args.points = [f"raw policy=2={MATCHES / 'policy_transfer_vs_gnugo1'}",
                       f"raw policy=5.4={MATCHES / 'policy_second_vs_gnugo1'}"]
        args.out = pathlib.Path(tempfile.mkdtemp()) / "chain.png"
    if not args.points:
        parser.error("name at least one SERIES=HOURS=DIRECTORY (or --smoke)")
    try:
        points = [read_point(*parse_point(text), args.opponent) for text in args.points]
    except ValueError as error:
        parser.error(str(error))
    print(table(points))
    if args.out:
        plot(points, args.out, args.title)
        print(f"figure: {args.out}")


if __name__ == "__main__":
    main()
