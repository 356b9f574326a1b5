"""Match statistics against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from alphago_jax.train import evaluation
from alphago_jax.train.evaluation import MatchResult

Z = evaluation.Z_95


def test_elo_of_even_and_76_percent():
    assert evaluation.elo_difference(0.5) == 0.0
    # -400 log10(1/0.76 - 1) = -400 log10(6/19) = 200.24...
    np.testing.assert_allclose(MatchResult("a", "b", 76, 0, 24).elo, 200.2402, atol=1e-3)
    np.testing.assert_allclose(evaluation.elo_difference(0.64), 99.9, atol=0.1)
    np.testing.assert_allclose(evaluation.score_from_elo(evaluation.elo_difference(0.3)), 0.3)
    assert MatchResult("a", "b", 50, 0, 50).elo == 0.0


def test_draws_count_half():
    r = MatchResult("a", "b", wins=40, draws=20, losses=40)
    assert r.games == 100 and r.win_rate == 0.5 and r.elo == 0.0
    assert evaluation.win_rate(1, 1, 0) == 0.75


def test_wilson_interval_by_hand():
    # 7 of 10: centre (0.7 + z^2/20) / (1 + z^2/10), half z/(1 + z^2/10) sqrt(0.021 + z^2/400).
    denom = 1 + Z**2 / 10
    centre = (0.7 + Z**2 / 20) / denom
    half = Z / denom * math.sqrt(0.7 * 0.3 / 10 + Z**2 / 400)
    np.testing.assert_allclose(evaluation.wilson_interval(7, 10), (centre - half, centre + half), rtol=1e-12)
    np.testing.assert_allclose(evaluation.wilson_interval(7, 10), (0.3968, 0.8922), atol=1e-4)


def test_wilson_interval_of_a_clean_sweep_is_not_degenerate():
    lo, hi = MatchResult("a", "b", 0, 0, 10).interval()
    assert lo == 0.0
    np.testing.assert_allclose(hi, (Z**2 / 10) / (1 + Z**2 / 10), rtol=1e-12)  # 0.2775
    assert 0.25 < hi < 0.3
    lo, hi = MatchResult("a", "b", 10, 0, 0).interval()
    assert hi == 1.0 and 0.7 < lo < 0.75
    assert evaluation.wilson_interval(0, 0) == (0.0, 1.0)


def test_elo_is_clipped_at_zero_and_one():
    sweep = MatchResult("a", "b", 10, 0, 0)
    # p clipped to 1 - 1/(2*10) = 0.95: -400 log10(1/19) = +511.5
    np.testing.assert_allclose(sweep.elo, 400 * math.log10(19), rtol=1e-12)
    lo, hi = sweep.elo_interval()
    assert math.isfinite(lo) and math.isfinite(hi) and lo < hi <= sweep.elo + 1e-9
    assert math.isfinite(evaluation.elo_difference(1.0)) and evaluation.elo_difference(1.0) > 1000
    assert math.isnan(MatchResult("a", "b", 0).elo)
    with pytest.raises(ValueError, match="score"):
        evaluation.elo_difference(1.5)


@pytest.mark.parametrize("wins, draws, losses", [(76, 0, 24), (3, 2, 5), (0, 0, 10), (13, 4, 0)])
def test_swapped_results_mirror(wins, draws, losses):
    r = MatchResult("a", "b", wins, draws, losses)
    s = r.swapped()
    assert (s.player, s.opponent, s.wins, s.losses) == ("b", "a", losses, wins)
    np.testing.assert_allclose(s.win_rate, 1 - r.win_rate, atol=1e-12)
    np.testing.assert_allclose(s.elo, -r.elo, atol=1e-9)
    lo, hi = r.interval()
    np.testing.assert_allclose(s.interval(), (1 - hi, 1 - lo), atol=1e-12)
    elo_lo, elo_hi = r.elo_interval()
    np.testing.assert_allclose(s.elo_interval(), (-elo_hi, -elo_lo), atol=1e-9)
    assert elo_lo <= r.elo <= elo_hi


def test_from_outcomes_and_pooling():
    r = MatchResult.from_outcomes("net", "gnugo", [1.0, -1.0, 0.0, 1.0, 1.0])
    assert (r.wins, r.draws, r.losses) == (3, 1, 1)
    pooled = r + MatchResult("net", "gnugo", 1, 0, 4)
    assert (pooled.wins, pooled.draws, pooled.losses) == (4, 1, 5)
    with pytest.raises(ValueError, match="pool"):
        r + r.swapped()
    with pytest.raises(ValueError, match="wins"):
        MatchResult("a", "b", -1)


def test_format_table():
    table = evaluation.format_table([MatchResult("zero-100", "zero-0", 76, 0, 24), MatchResult("x", "y", 0)])
    lines = table.strip().splitlines()
    assert lines[0] == ("| player | opponent | games | wins | draws | losses | win rate | 95% interval"
                        " | Elo ± |")
    assert lines[1].startswith("|---|---|---:")
    lo, hi = evaluation.wilson_interval(76, 100)
    elo_lo, elo_hi = MatchResult("a", "b", 76, 0, 24).elo_interval()
    half = (elo_hi - elo_lo) / 2
    assert lines[2] == f"| zero-100 | zero-0 | 100 | 76 | 0 | 24 | 0.760 | [{lo:.3f}, {hi:.3f}] | +200 ± {half:.0f} |"
    assert lines[3] == "| x | y | 0 | 0 | 0 | 0 | nan | [0.000, 1.000] | nan |"
    assert all(line.count("|") == 10 for line in lines)
