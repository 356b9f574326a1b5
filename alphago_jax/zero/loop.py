"""AlphaGo Zero's main job: self-play, training, evaluation and checkpoints in one loop.

One iteration of ``train(config, out_dir)``::

    self-play   config.selfplay_moves searched moves of config.selfplay_batch games, in one
                jitted call (lax.scan over moves); finished games go to the replay buffer
    training    config.train_steps steps of train_step on batches sampled from the buffer,
                8-fold random symmetry augmentation
    evaluation  at the start, every config.eval_interval iterations and at the end: the
                network's search (temperature 0, no noise) against uniform random play,
                against pure-rollout MCTS, against the best network so far and,
                with config.gnugo_level set, against GNU Go (``zero.external_eval``)
    logging     one row of metrics.csv (RunLogger) per iteration
    checkpoint  the whole run state (Checkpointer, kind "zero")

The game loops are in ``zero.selfplay``. Self-play draws moves from the visit counts for the
first ``temperature_moves`` moves of a game, then plays the most visited move; Dirichlet noise
is on every root. Win rates come with a 95% Wilson interval and an Elo difference
(``evaluation.MatchResult``). Self-play always uses the latest network; the "best" network is
replaced by the latest when the latest scores at least ``config.gate`` against it (AlphaGo
Zero's 55% gate), and ``best_elo`` adds up the Elo gains of those replacements (the best
network's rating over the initial one).

Checkpoints hold the network (params, batch statistics), the optimizer state, the step, the
replay buffer, the self-play games in flight with their trajectories, the best network, the PRNG
key and the iteration: a resumed run continues the same games and draws the same random numbers,
so it reproduces the run that was not interrupted. One checkpoint every ``checkpoint_interval``
iterations (default every one) and after the last; the metrics rows past the checkpoint resumed
from are dropped and logged again.

Data parallelism: the games are split into ``workers`` groups, each with its own share of the
self-play batch, its own replay shard (``replay_capacity / workers`` positions, fed by its own
games) and its own random stream, and a training batch takes ``train_batch / workers`` examples
from each shard. Workers are laid out over a 1-D mesh of all ``jax.devices()``
(``learner.make_mesh``), several per device if there are more workers than devices. Self-play
and matches run under ``jax.shard_map``: each device plays its own games with no communication
(a search is many small ``while_loop``s; over a globally sharded batch every loop test would be a
collective). Training is one ``jax.jit`` over the global batch with replicated parameters: XLA
all-reduces the gradients and batch-norm statistics. The results depend on the number of
workers, not on the number of devices (up to floating-point summation order): fix ``workers`` to
compare device counts (the ``smoke`` preset has 4); the default is one per device. For several
hosts (a TPU pod, multi-node GPUs) call ``jax.distributed.initialize()`` before anything touches
JAX: ``train(..., distributed=True)``, the CLI's ``--distributed`` or ``ALPHAGO_JAX_DISTRIBUTED=1``.

Layout of ``out_dir``: ``checkpoints/<iteration>/``, ``metrics.csv``, ``tb/`` (TensorBoard, with
tensorboardX installed), ``metrics.png``, ``sample.sgf`` (the first game of the last evaluation
against pure MCTS), ``sample_gnugo.sgf`` (the same against GNU Go, when it plays).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import shutil
import signal
import threading
from typing import Any, Callable, Mapping, NamedTuple

import jax
import numpy as np

from alphago_jax import sgf
from alphago_jax.train import learner
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.checkpoint import Checkpointer
from alphago_jax.gtp_client import GTPError, find_gnugo
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.zero.external_eval import GnuGoOutput
from alphago_jax.train.metrics import RunLogger, read_metrics
from alphago_jax.train.timing import Clock, PhaseTimer, TimeBudget, WallClock, plan_end
from alphago_jax.zero.config import KIND, ZeroConfig, config_differences, saved_config
from alphago_jax.zero.programs import Programs, build, replicated, to_host, train_iteration
from alphago_jax.zero.runs import init_network, network_chain, plot_run
from alphago_jax.zero.selfplay import STAT_NAMES, MatchOutput

DISTRIBUTED_ENV = "ALPHAGO_JAX_DISTRIBUTED"
"""Environment variable: set to 1 to call ``jax.distributed.initialize()`` (multi-host runs)."""


# ---------------------------------------------------------------------------------- the run

class RunResult(NamedTuple):
    """Where a finished run put its results, and its final counters."""

    out_dir: pathlib.Path
    checkpoint: pathlib.Path
    metrics: pathlib.Path
    plot: pathlib.Path | None
    sample_game: pathlib.Path | None
    iterations: int
    train_steps: int
    stopped: str | None = None
    """The signal that stopped the run early (``"SIGTERM"``, ``"SIGINT"``; on several processes
    also ``"a signal to another process"``), or None."""


class _Stop:
    """A SIGTERM or SIGINT received during a run (``signal``: its name): the run stops after the
    iteration in progress, checkpointed. A second such signal acts as it would without the run."""

    def __init__(self, previous: dict):
        self.signal: str | None = None
        self._previous = previous

    def __call__(self, signum, frame) -> None:
        self.signal = signal.Signals(signum).name
        signal.signal(signum, self._previous[signum])


@contextlib.contextmanager
def _stop_on_signals():
    """A ``_Stop`` that SIGTERM and SIGINT set while the block runs (only the main thread can
    take signals: elsewhere none is set)."""
    if threading.current_thread() is not threading.main_thread():
        yield _Stop({})
        return
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    stop = _Stop(previous)
    for s in previous:
        signal.signal(s, stop)
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _match_metrics(name: str, result: MatchResult) -> dict:
    lo, hi = result.interval()
    elo_lo, elo_hi = result.elo_interval()
    return {f"win_{name}": result.win_rate, f"win_{name}_low": lo, f"win_{name}_high": hi,
            f"elo_{name}": result.elo, f"elo_{name}_low": elo_lo, f"elo_{name}_high": elo_hi}


def _resign_metrics(config: ZeroConfig, stats: Mapping[str, int], sp) -> dict:
    """The metrics row's resignation entries (none without resignation): ``resign_rate``
    (resigned / finished games), ``false_resign_rate`` (of the no-resign games in which a player
    fell below the threshold, the share that player did not lose; NaN with none),
    ``resign_threshold`` (after the iteration's calibration: the next iteration's), and the counts."""
    if config.resign_threshold is None:
        return {}
    would = stats["would_resign"]
    return {"resign_rate": stats["resigned"] / max(stats["games"], 1),
            "false_resign_rate": stats["false_resigns"] / would if would else float("nan"),
            "resign_threshold": float(to_host(sp.resign.threshold)[0]),
            "no_resign_games": stats["no_resign_games"], "would_resign": would}


def _write_sample(path: pathlib.Path, config: ZeroConfig, out: MatchOutput | GnuGoOutput, iteration: int,
                  opponent: str, result: str | None = None) -> None:
    """Game 0 of a match (the network is black) as an SGF file; ``result`` default: by the score."""
    moves = [int(a) for a in np.asarray(out.moves[0]) if a >= 0]
    record = sgf.record_from_moves(
        config.game.game, moves, result=result or sgf.result_string(float(out.scores[0])),
        black_name=f"alphago-jax zero, iteration {iteration}", white_name=opponent)
    sgf.save(record, path)  # atomic: a run killed here keeps the previous samples whole


MATCHES = ("random", "mcts", "best", "gnugo")
"""The matches of an evaluation, in the order they are played (and kept when time is short);
``eval_<name>_s`` in metrics.csv is the wall time of each."""


def _matches(config: ZeroConfig, iteration: int, gnugo: str | None) -> tuple[str, ...]:
    """The matches of the evaluation at ``iteration`` (none with ``eval_games = 0``)."""
    if not config.eval_games:
        return ()
    wanted = {"random": True, "mcts": True, "best": config.gate is not None and iteration > 0,
              "gnugo": gnugo is not None}
    return tuple(m for m in MATCHES if wanted[m])


def _evaluate(programs: Programs, config: ZeroConfig, state: dict, key, iteration: int, out_dir: pathlib.Path,
              gnugo: str | None = None, say: Callable[[str], None] = print, *,
              play: tuple[str, ...] | None = None, timer: PhaseTimer | None = None) -> tuple[dict, dict]:
    """Matches against random play, pure MCTS, (after the start) the best network and, given
    its binary ``gnugo`` (``_gnugo_binary``), GNU Go at ``config.gnugo_level``.

    ``play``: the matches to play (default: all of ``_matches``); the others are left out of the
    row. Each match draws its own key from ``key`` whichever are played. ``timer`` times each
    as ``eval_<name>``.

    Returns ``(metrics row entries, state)``; the state's best network is replaced when the
    latest one passes the gate. ``say`` reports a failed match against GNU Go.
    """
    play = _matches(config, iteration, gnugo) if play is None else play
    timed = timer if timer is not None else (lambda name: contextlib.nullcontext())
    variables = state["train"].variables
    k_random, k_mcts, k_best, k_gnugo = programs.split(key)
    row, results = {}, {}
    for name, k in (("random", k_random), ("mcts", k_mcts)):
        if name not in play:
            continue
        with timed(f"eval_{name}"):
            out = to_host(programs.matches[name](variables, None, k))
        results[name] = MatchResult.from_outcomes("zero", name, out.outcomes)
        row.update(_match_metrics(name, results[name]))
        if name == "mcts" and jax.process_index() == 0:
            _write_sample(out_dir / "sample.sgf", config, out, iteration,
                          f"pure MCTS, {config.baseline_simulations} playouts")
    if "best" in play:
        with timed("eval_best"):
            out = to_host(programs.matches["best"](variables, state["best"], k_best))
        result = MatchResult.from_outcomes("zero", "best", out.outcomes)
        row.update({k: v for k, v in _match_metrics("best", result).items() if not k.startswith("elo_")})
        promoted = result.win_rate >= config.gate
        if promoted:
            best_elo = np.float32(float(state["best_elo"]) + result.elo)
            state = {**state, "best": variables, "best_elo": replicated(best_elo, programs.mesh)}
        row["promoted"] = int(promoted)
    if "gnugo" in play and gnugo is not None:
        with timed("eval_gnugo"):
            row.update(_gnugo_metrics(programs, config, variables, k_gnugo, gnugo, iteration, out_dir, say))
    row["best_elo"] = float(state["best_elo"])
    return row, state


def _gnugo_binary(config: ZeroConfig, say: Callable[[str], None]) -> str | None:
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


def _gnugo_metrics(programs: Programs, config: ZeroConfig, variables, key, gnugo: str, iteration: int,
                   out_dir: pathlib.Path, say: Callable[[str], None]) -> dict:
    """The metrics row's entries of a match against GNU Go (``win_gnugo``, ``elo_gnugo`` and their
    intervals) and its first game as ``sample_gnugo.sgf``. Nothing when GNU Go fails: the run says
    why and goes on (an external program's failure should not end a long run)."""
    key = to_host(key)  # on every process: a collective in multi-host runs
    if jax.process_index() != 0:
        return {}  # the first process plays GNU Go, and it alone writes the metrics
    try:
        out = programs.gnugo(variables, key, games=config.gnugo_games, level=config.gnugo_level, gnugo=gnugo)
    except GTPError as e:
        say(f"iteration {iteration}: the games against GNU Go failed and are left out: {e}")
        return {}
    how = {"resignation": "R", "illegal move": "F"}.get(out.endings[0])
    _write_sample(out_dir / "sample_gnugo.sgf", config, out, iteration, f"GNU Go, level {config.gnugo_level}",
                  result=f"B+{how}" if how else None)  # game 0: the network is black, GNU Go resigned or forfeited
    return _match_metrics("gnugo", MatchResult.from_outcomes("zero", f"gnugo-{config.gnugo_level}", out.outcomes))


def _summary(row: dict, config: ZeroConfig) -> str:
    def part(name, label):
        if f"win_{name}" not in row:
            return None
        return f"{label} {row[f'win_{name}']:.0%} [{row[f'win_{name}_low']:.0%}, {row[f'win_{name}_high']:.0%}]"

    gnugo = part("gnugo", f"vs GNU Go({config.gnugo_level})")
    if gnugo and np.isfinite(row["elo_gnugo"]):  # the external reference: its Elo too
        gnugo += f" Elo {row['elo_gnugo']:+.0f}"
    parts = [part("random", "vs random"), part("mcts", f"vs MCTS({config.baseline_simulations})"),
             part("best", "vs best"), gnugo]
    return ", ".join(p for p in parts if p) + f"; best Elo {row['best_elo']:+.0f}"


def initialize_distributed(enabled: bool | None = None) -> bool:
    """Call ``jax.distributed.initialize()`` when ``enabled`` (None: when ``ALPHAGO_JAX_DISTRIBUTED=1``).

    ``initialize()`` finds the coordinator itself on Cloud TPU pods, SLURM and Open MPI; elsewhere
    set ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` (read by JAX).
    Must run before any other JAX call. Returns whether it was called.
    """
    if enabled is None:
        enabled = os.environ.get(DISTRIBUTED_ENV, "") not in ("", "0")
    if enabled:
        kwargs = {}
        for name, arg, cast in (("JAX_COORDINATOR_ADDRESS", "coordinator_address", str),
                                ("JAX_NUM_PROCESSES", "num_processes", int), ("JAX_PROCESS_ID", "process_id", int)):
            if os.environ.get(name):
                kwargs[arg] = cast(os.environ[name])
        jax.distributed.initialize(**kwargs)
    return enabled


def train(config: ZeroConfig, out_dir, *, resume: bool = False, progress: bool = True,
          callback: Callable[[str, int], None] | None = None, distributed: bool | None = None,
          log: Callable[[str], None] | None = None, time_limit: float | None = None, init=None,
          clock: Clock | None = None) -> RunResult:
    """Run (or resume) AlphaGo Zero training of ``config`` into ``out_dir``.

    Args:
      config: the run's configuration.
      out_dir: the run's directory (see the module docstring for its layout).
      resume: continue from the latest checkpoint in ``out_dir`` (start afresh if there is
        none). Without it, a directory that holds checkpoints is refused. A resumed run keeps
        its configuration; only ``iterations`` may differ (to extend a run).
      progress: show a tqdm progress bar (on stderr), its label naming the current phase.
      callback: called as ``callback(phase, iteration)`` before each phase of each iteration
        (``"selfplay"``, ``"train"``, ``"evaluate"``, ``"checkpoint"``; iteration counting from
        1) and with ``("done", iterations)`` at the end.
      distributed: call ``jax.distributed.initialize()`` first (None: per ``ALPHAGO_JAX_DISTRIBUTED``).
      log: where the per-evaluation lines, the programs' compile times and the time-limit
        decisions go (default: through tqdm to stdout).
      time_limit: seconds of wall time for this call, a hard budget: after each iteration's
        training the run checks that another iteration, the evaluation and checkpoint of both
        still fit before the deadline (``timing.plan_end``, from the times measured so far);
        if not, this iteration is the last, and its evaluation plays only the matches that
        fit (or none), saying which it left out. The run ends within the limit plus one
        iteration; ``--resume`` continues it.
      init: start the network (and nothing else: optimizer, buffer and games are new) from a
        network file, a training run's directory or a warm-start directory (``init_network``).
        Only for a new run: a directory that holds checkpoints keeps its own network.
      clock: where the run reads wall seconds and compile seconds (``timing.Clock``; default a
        ``timing.WallClock`` opened for the call). The phase times in metrics.csv and the time
        limit use it.

    SIGTERM or SIGINT (a preemption notice, Ctrl-C) to any process of the run: every process
    ends the iteration in progress without its evaluation, saves its checkpoint and returns
    (``RunResult.stopped`` names the signal); ``--resume`` continues from that checkpoint as if
    the run had not stopped. A second signal acts as usual (Ctrl-C interrupts at once).

    Returns:
      A ``RunResult``.

    Raises:
      ValueError: a bad configuration, a directory holding another run, or (``CheckpointError``)
        a corrupted or foreign checkpoint directory; the message names the path.
    """
    with _stop_on_signals() as stop, contextlib.ExitStack() as stack:
        clock = clock if clock is not None else stack.enter_context(WallClock())
        return _run(config, out_dir, resume, progress, callback, distributed, log, time_limit, init, clock, stop)


def _run(config: ZeroConfig, out_dir, resume: bool, progress: bool, callback, distributed, log, time_limit, init,
         clock: Clock, stop: _Stop) -> RunResult:
    """``train``'s body, on an open ``clock``."""
    from tqdm.auto import tqdm

    session_start = clock.now()
    budget = TimeBudget(None if time_limit is None else max(0.0, float(time_limit)), session_start)
    initialize_distributed(distributed)
    out = pathlib.Path(out_dir).absolute()
    lead = jax.process_index() == 0  # the process that writes logs, plots and the sample game
    ckpt = Checkpointer(checkpoint_dir(out), kind=KIND, keep=config.keep)
    latest = ckpt.latest_step()
    if latest is not None and not resume:
        raise ValueError(f"{ckpt.directory}: holds checkpoints of a run (up to iteration {latest}); "
                         "pass --resume to continue it, or choose another output directory")
    saved = saved_config(out) if latest is not None else None
    if config.workers is None:
        # One per device, then fixed for the run's life: it can resume on other device counts.
        workers = saved.workers if saved is not None and saved.workers else jax.device_count()
        config = dataclasses.replace(config, workers=workers)
    if saved is not None:
        differences = config_differences(saved, config)
        if differences:
            raise ValueError(f"{ckpt.directory / str(latest)}: the run there has another configuration "
                             f"({'; '.join(differences)}); resume it with its own settings")

    if init is not None and latest is not None:
        raise ValueError(f"{ckpt.directory}: holds a run to resume; --init starts a new run (drop it, or choose "
                         "another output directory)")
    started_from = init_network(init, config) if init is not None else None
    programs = build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    chain = []  # the provenance of the network: what it started from
    elapsed = 0.0  # wall seconds of this run over all its sessions
    metadata = {}
    if latest is not None:
        restored = ckpt.restore(latest, target=state)
        state, metadata = restored.state, restored.metadata
        chain, elapsed = list(metadata.get("chain", [])), float(metadata.get("elapsed_s", 0.0))
    elif started_from is not None:
        fresh = learner.init_train_state(started_from.variables, config.optimizer)
        fresh = jax.device_put(fresh, jax.tree_util.tree_map(lambda x: x.sharding, state["train"]))
        state = {**state, "train": fresh, "best": fresh.variables}
        chain = network_chain(started_from)
    start = int(state["iteration"])
    stopped = None
    metrics_path = out / "metrics.csv"
    logger = RunLogger(metrics_path, tensorboard_dir=out / "tb", resume_step=start if start > 0 else -1) if lead else None
    if logger and start > 0:
        _log_saved_row(logger, metrics_path, start, metadata)
    bar = tqdm(total=config.iterations, initial=min(start, config.iterations), desc="AlphaGo Zero",
               unit="it", disable=not (progress and lead), dynamic_ncols=True)
    say = log or (lambda text: tqdm.write(text) if lead else None)
    notify = callback or (lambda phase, iteration: None)
    gnugo = _gnugo_binary(config, say)
    timer = PhaseTimer(clock, say=say)

    def enter(phase, iteration):
        notify(phase, iteration)
        bar.set_description(f"AlphaGo Zero [{phase}]")

    def evaluate(iteration, key, play):
        nonlocal state
        with timer("eval", report=False):
            row, state = _evaluate(programs, config, state, key, iteration, out, gnugo=gnugo, say=say, play=play,
                                   timer=timer)
        say(f"iteration {iteration}: {_summary(row, config)}")
        return row

    if start == 0 and config.eval_games:
        # The untrained network: the baseline the later evaluations are compared with.
        if budget.left(clock.now()) > 0:
            enter("evaluate", 0)
            row = evaluate(0, jax.random.fold_in(state["key"], 1 << 30), _matches(config, 0, gnugo))
            row.update(timer.row(EVAL_PARTS))
            if logger:
                logger.log(0, {**row, "train_step": 0})
        else:
            say("time limit: no evaluation of the untrained network")

    for iteration in range(start + 1, config.iterations + 1):
        timer.reset()
        key, k_selfplay, k_train, k_eval = programs.split(state["key"])
        enter("selfplay", iteration)
        with timer("selfplay"):
            sp, buffer, stats = programs.selfplay(state["train"].variables, state["selfplay"], state["replay"],
                                                  k_selfplay)
            stats = dict(zip(STAT_NAMES, to_host(stats).sum(axis=1).tolist()))
            sizes = to_host(buffer.size)  # [W]
        state = {**state, "selfplay": sp, "replay": buffer}
        row = {"games": stats["games"], "positions": stats["positions"], "replay_size": int(sizes.sum()),
               "black_win_rate": stats["black_wins"] / max(stats["games"], 1),
               "selfplay_positions_per_s": config.selfplay_batch * config.selfplay_moves / timer.seconds["selfplay"]}
        row.update(_resign_metrics(config, stats, sp))

        enter("train", iteration)
        if int(sizes.min()) * programs.workers >= config.min_replay:  # every shard has its share
            with timer("train"):
                train_state, metrics = train_iteration(programs, state["train"], state["replay"], k_train,
                                                       config.train_steps)
            state = {**state, "train": train_state}
            row.update({k: float(np.mean(v)) for k, v in metrics.items()})
            row["train_steps_per_s"] = config.train_steps / timer.seconds["train"]
        row["train_step"] = int(state["train"].step)

        left = budget.left(clock.now())
        plan, stopping = _plan(config, timer, left, iteration, gnugo, stop.signal)
        if stopping:
            stopped = stop.signal or "a signal to another process"
            say(f"{stopped}: stopping after iteration {iteration}, without its evaluation; its checkpoint is "
                "saved and --resume continues from it")
        elif plan.last and iteration < config.iterations:
            say(f"time limit: iteration {iteration} is the last of this session ({max(0.0, left):.0f} s left, not "
                "enough for another iteration and the final evaluation); --resume continues")
        if plan.skipped:
            say(_skipped_note(iteration, plan, _match_costs(timer, plan.skipped), left))
        if plan.play:
            enter("evaluate", iteration)
            row.update(evaluate(iteration, k_eval, plan.play))
        state = {**state, "key": key, "iteration": replicated(np.int32(iteration), programs.mesh)}

        if plan.last or iteration % config.checkpoint_interval == 0:
            enter("checkpoint", iteration)
            saved_row = {k: v for k, v in {**row, **timer.row(EVAL_PARTS)}.items() if k != "checkpoint_s"}
            with timer("checkpoint", report=False):
                ckpt.save(iteration, state, metadata={
                    "config": config.to_dict(), "iteration": iteration, "train_step": row["train_step"],
                    "devices": programs.mesh.devices.size, "workers": programs.workers, "chain": chain,
                    "elapsed_s": elapsed + clock.now() - session_start,
                    "device": f"{programs.mesh.devices.size} x {programs.mesh.devices.flat[0].device_kind}",
                    "row": _jsonable(saved_row)})
        row.update(timer.row(EVAL_PARTS))
        if logger:
            logger.log(iteration, row)
        bar.set_postfix({k: f"{row[k]:.3g}" for k in ("loss", "win_random", "win_mcts") if k in row})
        bar.update(1)
        if plan.last:
            break
    bar.set_description("AlphaGo Zero")
    bar.close()
    notify("done", int(state["iteration"]))

    final = ckpt.latest_step()
    plot = sample = None
    if logger:
        logger.close()
        try:
            plot = plot_run(out)
        except ValueError:  # nothing logged yet to plot
            plot = None
        sample = out / "sample.sgf" if (out / "sample.sgf").exists() else None
    ckpt.close()
    return RunResult(out_dir=out, checkpoint=ckpt.directory / str(final), metrics=metrics_path, plot=plot,
                     sample_game=sample, iterations=final, train_steps=int(state["train"].step), stopped=stopped)


EVAL_PARTS = tuple(f"eval_{m}" for m in MATCHES)
"""The timed parts of an evaluation: ``eval_<match>_s`` columns where the match was played."""


def _match_costs(timer: PhaseTimer, matches) -> dict:
    """The estimated seconds of each match (None: unknown). The match against the best network,
    before it is first played: about twice the one against random play (the network's search
    on both sides) plus that one's first compile (a program of its size to compile)."""
    cost = {m: timer.estimate(f"eval_{m}") for m in matches}
    random_s = timer.estimate("eval_random")
    if "best" in cost and cost["best"] is None and random_s is not None:
        cost["best"] = 2 * random_s + (timer.first_compile("eval_random") or 0.0)
    return cost


def _plan(config: ZeroConfig, timer: PhaseTimer, left: float, iteration: int, gnugo: str | None,
          signalled: str | None = None):
    """``timing.plan_end`` for the iteration whose training just ended, the same on every process,
    and whether the run stops there for a signal (``signalled`` here, or on another process)."""
    matches = _matches(config, iteration, gnugo)
    estimates = [timer.estimate(p) for p in ("selfplay", "train")]
    plan = plan_end(left, final=iteration >= config.iterations,
                    due=bool(config.eval_interval) and iteration % config.eval_interval == 0,
                    matches=matches, cost=_match_costs(timer, matches),
                    iteration_s=sum(e for e in estimates if e is not None), checkpoint_s=timer.estimate("checkpoint"))
    if jax.process_count() == 1:
        return (plan._replace(last=True, play=(), skipped=()), True) if signalled else (plan, False)
    from jax.experimental import multihost_utils

    if np.any(multihost_utils.process_allgather(np.int32(signalled is not None))):  # any process signalled
        return plan._replace(last=True, play=(), skipped=()), True

    # Every process must stop after the same iteration and play the same matches: the first decides.
    code = int(plan.last) + sum(2 << i for i, m in enumerate(MATCHES) if m in plan.play)
    code = int(multihost_utils.broadcast_one_to_all(np.int32(code)))
    play = tuple(m for i, m in enumerate(MATCHES) if code & (2 << i))
    last = bool(code & 1)
    return plan._replace(last=last, play=play, skipped=tuple(m for m in matches if m not in play) if last else ()), False


def _skipped_note(iteration: int, plan, costs: Mapping[str, float | None], left: float) -> str:
    """The log line of a final evaluation shortened or skipped for lack of time."""
    what = "no final evaluation" if not plan.play else \
        f"a shortened final evaluation, without {', '.join(plan.skipped)}"
    known = [c for c in costs.values() if c is not None]
    about = f"; the matches left out take about {sum(known):.0f} s" if known else ""
    return f"time limit: iteration {iteration} gets {what} ({max(0.0, left):.0f} s left{about})"


def _jsonable(row: Mapping[str, Any]) -> dict:
    """A metrics row as JSON values (NaN and infinities as None), for the checkpoint's metadata."""
    out = {}
    for k, v in row.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and not np.isfinite(v) else v
    return out


def _log_saved_row(logger: RunLogger, metrics_path: pathlib.Path, iteration: int, metadata: Mapping) -> None:
    """Log the metrics row saved with the checkpoint of ``iteration`` when metrics.csv lacks it
    (the run was killed between writing the checkpoint and logging its row)."""
    row = metadata.get("row")
    if row is not None and iteration not in read_metrics(metrics_path).get("step", np.zeros(0)):
        logger.log(iteration, row)
