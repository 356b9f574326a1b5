"""Match statistics: win rate with a 95% Wilson score interval, Elo difference, a results table.

A match is ``wins``, ``draws`` and ``losses`` of a player against an opponent; draws count half
a win. The score ``p = (wins + draws / 2) / games`` estimates the player's expected score, and

    Elo difference = -400 * log10(1 / p - 1)

(the logistic Elo model: 64% is about +100, 76% about +200). The Wilson score interval
(Wilson 1927) stays inside ``[0, 1]`` and is not degenerate at 0 or ``games`` wins, where the
normal approximation collapses to a point; its ends are mapped through the same Elo formula.

A score of exactly 0 or 1 has an infinite Elo difference; ``elo_difference`` clips ``p`` to
``[1 / (2 n), 1 - 1 / (2 n)]`` for ``n`` games (a perfect score counts as half a game short of
perfect), or to ``[ELO_EPSILON, 1 - ELO_EPSILON]`` (about +-1200 Elo) when ``n`` is not given.

Pure Python and numpy; nothing here needs JAX.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Sequence

import numpy as np

Z_95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal distribution."""

ELO_EPSILON = 1e-3
"""Default clip of the score in ``elo_difference`` when the number of games is unknown."""


def _check_counts(wins, draws, losses) -> int:
    for name, x in (("wins", wins), ("draws", draws), ("losses", losses)):
        if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < 0:
            raise ValueError(f"{name} must be an int >= 0, got {x!r}")
    return int(wins) + int(draws) + int(losses)


def win_rate(wins: int, draws: int = 0, losses: int = 0) -> float:
    """Score ``(wins + draws / 2) / games`` in ``[0, 1]``; NaN when no game was played."""
    games = _check_counts(wins, draws, losses)
    return (wins + 0.5 * draws) / games if games else math.nan


def wilson_interval(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a proportion with ``wins`` successes (may be fractional: draws
    count half) out of ``games``. ``(0, 1)`` when ``games == 0``."""
    if games < 0 or not 0 <= wins <= games:
        raise ValueError(f"need 0 <= wins <= games, got wins={wins!r}, games={games!r}")
    if games == 0:
        return 0.0, 1.0
    if wins > games / 2:
        # Computed from the lower half so that swapping the players mirrors the interval exactly.
        lo, hi = wilson_interval(games - wins, games, z)
        return 1.0 - hi, 1.0 - lo
    p = wins / games
    z2 = z * z
    denom = 1 + z2 / games
    centre = (p + z2 / (2 * games)) / denom
    half = z / denom * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games))
    # At p = 0 the lower end is 0 up to rounding.
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_difference(p: float, games: int | None = None) -> float:
    """Elo difference ``-400 log10(1 / p - 1)`` for a score ``p`` in ``[0, 1]``, clipped (see the
    module docstring) so that 0 and 1 give finite values. NaN in, NaN out."""
    if math.isnan(p):
        return math.nan
    if not 0 <= p <= 1:
        raise ValueError(f"score p must be in [0, 1], got {p!r}")
    eps = 0.5 / games if games else ELO_EPSILON
    p = min(max(p, eps), 1 - eps)
    return -400.0 * math.log10(1.0 / p - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` points stronger: the inverse of ``elo_difference``."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """The outcome of games between ``player`` and ``opponent``, from ``player``'s side."""

    player: str
    opponent: str
    wins: int
    draws: int = 0
    losses: int = 0

    def __post_init__(self):
        _check_counts(self.wins, self.draws, self.losses)

    @classmethod
    def from_outcomes(cls, player: str, opponent: str, outcomes: Iterable[float]) -> "MatchResult":
        """From per-game results for ``player``: > 0 a win, 0 a draw, < 0 a loss (e.g. the
        player's entry of ``game.returns``)."""
        o = np.asarray(list(outcomes), np.float64)
        return cls(player, opponent, int(np.sum(o > 0)), int(np.sum(o == 0)), int(np.sum(o < 0)))

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        """Score with draws as half a win; NaN with no games."""
        return win_rate(self.wins, self.draws, self.losses)

    def interval(self, z: float = Z_95) -> tuple[float, float]:
        """Wilson score interval of the win rate (95% by default)."""
        return wilson_interval(self.wins + 0.5 * self.draws, self.games, z)

    @property
    def elo(self) -> float:
        """Elo difference, player minus opponent (clipped at 0 and 1 by the number of games)."""
        return elo_difference(self.win_rate, self.games)

    def elo_interval(self, z: float = Z_95) -> tuple[float, float]:
        """The win-rate interval's ends mapped to Elo (asymmetric around ``elo``)."""
        if not self.games:
            return -math.inf, math.inf
        lo, hi = self.interval(z)
        return elo_difference(lo, self.games), elo_difference(hi, self.games)

    def swapped(self) -> "MatchResult":
        """The same games from the opponent's side."""
        return MatchResult(self.opponent, self.player, self.losses, self.draws, self.wins)

    def __add__(self, other: "MatchResult") -> "MatchResult":
        """Pool two matches between the same two players (in the same roles)."""
        if (self.player, self.opponent) != (other.player, other.opponent):
            raise ValueError(f"cannot pool {self.player} vs {self.opponent} with {other.player} vs {other.opponent}")
        return MatchResult(self.player, self.opponent, self.wins + other.wins, self.draws + other.draws,
                           self.losses + other.losses)


def _signed(x: float) -> str:
    return "nan" if math.isnan(x) else f"{x:+.0f}"


def format_table(rows: Sequence[MatchResult], z: float = Z_95) -> str:
    """A markdown table, one line per match.

    Columns: player, opponent, games, wins, draws, losses, win rate, 95% interval (Wilson),
    ``Elo ±``: the Elo difference and half the width of its mapped interval (the interval is
    asymmetric; ``MatchResult.elo_interval`` gives its ends).
    """
    header = ["player", "opponent", "games", "wins", "draws", "losses", "win rate", "95% interval", "Elo ±"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 2 + ["---:"] * (len(header) - 2)) + "|"]
    for r in rows:
        lo, hi = r.interval(z)
        elo_lo, elo_hi = r.elo_interval(z)
        cells = [
            r.player, r.opponent, str(r.games), str(r.wins), str(r.draws), str(r.losses),
            "nan" if not r.games else f"{r.win_rate:.3f}",
            f"[{lo:.3f}, {hi:.3f}]",
            f"{_signed(r.elo)} ± {(elo_hi - elo_lo) / 2:.0f}" if r.games else "nan",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


__all__ = [
    "ELO_EPSILON",
    "MatchResult",
    "Z_95",
    "elo_difference",
    "format_table",
    "score_from_elo",
    "wilson_interval",
    "win_rate",
]
