"""The main job's evaluation: the network's search against uniform random play, pure-rollout
MCTS, the best network so far (AlphaGo Zero's gate), GNU Go and KataGo, as metrics-row entries."""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
import shutil
from typing import Callable

import jax
import numpy as np

from alphago_jax import katago, sgf
from alphago_jax.gtp_client import GTPError, find_gnugo
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.train.timing import PhaseTimer
from alphago_jax.zero.config import ZeroConfig
from alphago_jax.zero.external_eval import GnuGoOutput
from alphago_jax.zero.programs import Programs, RunState, replicated, to_host
from alphago_jax.zero.selfplay import MatchOutput


def _match_metrics(name: str, result: MatchResult) -> dict:
    lo, hi = result.interval()
    elo_lo, elo_hi = result.elo_interval()
    return {f"win_{name}": result.win_rate, f"win_{name}_low": lo, f"win_{name}_high": hi,
            f"elo_{name}": result.elo, f"elo_{name}_low": elo_lo, f"elo_{name}_high": elo_hi}


def write_sample(path: pathlib.Path, config: ZeroConfig, out: MatchOutput | GnuGoOutput, iteration: int,
                  opponent: str, result: str | None = None) -> None:
    """Game 0 of a match (the network is black) as an SGF file; ``result`` default: by the score."""
    moves = [int(a) for a in np.asarray(out.moves[0]) if a >= 0]
    record = sgf.record_from_moves(
        config.game.game, moves, result=result or sgf.result_string(float(out.scores[0])),
        black_name=f"alphago-jax zero, iteration {iteration}", white_name=opponent)
    sgf.save(record, path)  # atomic: a run killed here keeps the previous samples whole


MATCHES = ("random", "mcts", "best", "gnugo", "katago")
"""The matches of an evaluation, in the order they are played (and kept when time is short);
``eval_<name>_s`` in metrics.csv is the wall time of each."""


EVAL_PARTS = tuple(f"eval_{m}" for m in MATCHES)
"""The timed parts of an evaluation: ``eval_<match>_s`` columns where the match was played."""


def matches_at(config: ZeroConfig, iteration: int, gnugo: str | None) -> tuple[str, ...]:
    """The matches of the evaluation at ``iteration`` (none with ``eval_games = 0``)."""
    if not config.eval_games:
        return ()
    wanted = {"random": True, "mcts": True, "best": config.gate is not None and iteration > 0,
              "gnugo": gnugo is not None, "katago": config.katago_visits is not None}
    return tuple(m for m in MATCHES if wanted[m])


def evaluate_phase(programs: Programs, config: ZeroConfig, state: RunState, key, iteration: int,
                   out_dir: pathlib.Path, gnugo: str | None = None, say: Callable[[str], None] = print, *,
                   play: tuple[str, ...] | None = None, timer: PhaseTimer | None = None) -> tuple[dict, RunState]:
    """Matches against random play, pure MCTS, (after the start) the best network, given
    its binary ``gnugo`` (``gnugo_binary``) GNU Go at ``config.gnugo_level``, and KataGo at
    ``config.katago_visits`` (``with_katago`` checked it is installed); random play and
    pure MCTS also on each of ``config.extra_sizes`` (entries suffixed ``_<n>x<n>``).

    ``play``: the matches to play (default: all of ``matches_at``); the others are left out of the
    row. Each match draws its own key from ``key`` whichever are played. ``timer`` times each
    as ``eval_<name>``.

    Returns ``(metrics row entries, state)``; the state's best network is replaced when the
    latest one passes the gate. ``say`` reports a failed match against GNU Go.
    """
    play = matches_at(config, iteration, gnugo) if play is None else play
    timed = timer if timer is not None else (lambda name: contextlib.nullcontext())
    variables = state.train.variables
    k_random, k_mcts, k_best, k_gnugo = programs.split(key)
    row = {}
    for name, k in (("random", k_random), ("mcts", k_mcts)):
        if name not in play:
            continue
        with timed(f"eval_{name}"):
            out = to_host(programs.matches[name](variables, None, k))
        row.update(_match_metrics(name, MatchResult.from_outcomes("zero", name, out.outcomes)))
        if name == "mcts" and jax.process_index() == 0:
            write_sample(out_dir / "sample.sgf", config, out, iteration,
                         f"pure MCTS, {config.baseline_simulations} playouts")
        for extra, n in zip(programs.extras, config.extra_sizes):  # a curriculum's other sizes
            out = to_host(extra.matches[name](variables, None, jax.random.fold_in(k, n)))
            row.update(_match_metrics(f"{name}_{n}x{n}", MatchResult.from_outcomes("zero", name, out.outcomes)))
    if "best" in play:
        with timed("eval_best"):
            out = to_host(programs.matches["best"](variables, state.best, k_best))
        result = MatchResult.from_outcomes("zero", "best", out.outcomes)
        row.update({k: v for k, v in _match_metrics("best", result).items() if not k.startswith("elo_")})
        promoted = result.win_rate >= config.gate
        if promoted:
            best_elo = np.float32(float(state.best_elo) + result.elo)
            state = state.replace(best=variables, best_elo=replicated(best_elo, programs.mesh))
        row["promoted"] = int(promoted)
    if "gnugo" in play and gnugo is not None:
        with timed("eval_gnugo"):
            row.update(_external_metrics(programs, config, variables, k_gnugo, gnugo, iteration, out_dir, say))
    if "katago" in play:
        with timed("eval_katago"):  # its own key, so that the other matches' keys stay as they were
            row.update(_external_metrics(programs, config, variables, jax.random.fold_in(k_gnugo, 1), None,
                                         iteration, out_dir, say))
    row["best_elo"] = float(state.best_elo)
    return row, state


def gnugo_binary(config: ZeroConfig, say: Callable[[str], None]) -> str | None:
    """The GNU Go binary that evaluations play against; None when ``config`` asks for none, or
    (said once, here: a missing program should not end a long run) when it is missing."""
    if config.gnugo_level is None or not config.eval_games:
        return None
    if config.gnugo_path is not None:
        found = shutil.which(config.gnugo_path)
        if found is None:
            say(f"no evaluation against GNU Go: gnugo_path {config.gnugo_path!r} is not an executable file")
        return found
    found = find_gnugo()
    if found is None:
        say("no evaluation against GNU Go: it is not installed (apt-get install -y gnugo, or set gnugo_path)")
    return found


def with_katago(config: ZeroConfig, say: Callable[[str], None]) -> ZeroConfig:
    """``config``, without its matches against KataGo when KataGo is not installed (said once,
    here: a missing program should not end a long run)."""
    if config.katago_visits is None or not config.eval_games or katago.find_katago() is not None:
        return config
    say("no evaluation against KataGo: it is not installed (alphago-jax katago install)")
    return dataclasses.replace(config, katago_visits=None)


def _external_metrics(programs: Programs, config: ZeroConfig, variables, key, gnugo: str | None, iteration: int,
                      out_dir: pathlib.Path, say: Callable[[str], None]) -> dict:
    """The metrics row's entries of a match against GNU Go (its binary ``gnugo``: ``win_gnugo``,
    ``elo_gnugo`` and their intervals), or KataGo when ``gnugo`` is None (``win_katago``, ...),
    and its first game as ``sample_gnugo.sgf`` (``sample_katago.sgf``). Nothing when the engine
    fails: the run says why and goes on (an external program's failure should not end a long run)."""
    key = to_host(key)  # on every process: a collective in multi-host runs
    if jax.process_index() != 0:
        return {}  # the first process plays the engines, and it alone writes the metrics
    if gnugo is not None:
        name, label, short = "gnugo", f"GNU Go, level {config.gnugo_level}", f"gnugo-{config.gnugo_level}"
        games = dict(games=config.gnugo_games, level=config.gnugo_level, gnugo=gnugo)
    else:
        name, label, short = "katago", f"KataGo, {config.katago_visits} visit{'s' if config.katago_visits > 1 else ''}", f"katago-{config.katago_visits}"
        installed = katago.find_katago()
        if installed is None:
            say(f"iteration {iteration}: no games against {label}: it is no longer installed")
            return {}
        command = installed.command(config.katago_visits, config.board_size)
        games = dict(games=config.katago_games, level=config.katago_visits, command=command)
    try:
        out = programs.gnugo(variables, key, **games)
    except GTPError as e:
        say(f"iteration {iteration}: the games against {label} failed and are left out: {e}")
        return {}
    how = {"resignation": "R", "illegal move": "F"}.get(out.endings[0])
    write_sample(out_dir / f"sample_{name}.sgf", config, out, iteration, label,
                 result=f"B+{how}" if how else None)  # game 0: the network is black, the engine resigned or forfeited
    return _match_metrics(name, MatchResult.from_outcomes("zero", short, out.outcomes))


def summary(row: dict, config: ZeroConfig) -> str:
    def part(name, label):
        if f"win_{name}" not in row:
            return None
        return f"{label} {row[f'win_{name}']:.0%} [{row[f'win_{name}_low']:.0%}, {row[f'win_{name}_high']:.0%}]"

    external = []
    for name, label in (("gnugo", f"GNU Go({config.gnugo_level})"), ("katago", f"KataGo({config.katago_visits})")):
        text = part(name, f"vs {label}")
        if text and np.isfinite(row[f"elo_{name}"]):  # an external reference: its Elo too
            text += f" Elo {row[f'elo_{name}']:+.0f}"
        external.append(text)
    parts = [part("random", "vs random"), part("mcts", f"vs MCTS({config.baseline_simulations})"),
             part("best", "vs best"), *external]
    for n in config.extra_sizes:
        parts += [part(f"random_{n}x{n}", f"{n}x{n} vs random"),
                  part(f"mcts_{n}x{n}", f"{n}x{n} vs MCTS({config.baseline_simulations})")]
    return ", ".join(p for p in parts if p) + f"; best Elo {row['best_elo']:+.0f}"
