"""AlphaGo Zero's main job (``train``): a short driver (``_run``) over the phases of an iteration,
each a function of its own: ``selfplay_phase``, ``train_phase``, ``evaluate.evaluate_phase``
(when due) and ``checkpoint_phase`` (the whole ``RunState``: a resumed run continues the same
games with the same random numbers, so it reproduces the run that was not interrupted).

A session also handles what long runs meet: a time limit (``timing.plan_end``), SIGTERM and
SIGINT (stop checkpointed after the phase in progress), several processes
(``initialize_distributed``; they agree on where to stop), a run directory removed under it.
How work is split over devices and hosts: docs/architecture.md.

Layout of ``out_dir``: ``checkpoints/<iteration>/``, ``metrics.csv``, ``tb/`` (TensorBoard, with
tensorboardX installed), ``metrics.png``, ``sample.sgf`` (the first game of the last evaluation
against pure MCTS), ``sample_gnugo.sgf`` (the same against GNU Go, when it plays).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import pathlib
import signal
import threading
from typing import Any, Callable, Mapping, NamedTuple

import jax
import numpy as np

from alphago_jax.checks import seconds_from_env
from alphago_jax.train.optimizer import init_train_state
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.train.checkpoint import Checkpointer, CheckpointError
from alphago_jax.train.metrics import RunLogger, read_metrics
from alphago_jax.train.timing import Clock, PhaseTimer, TimeBudget, WallClock, plan_end
from alphago_jax.zero.config import KIND, ZeroConfig, config_differences, saved_config
from alphago_jax.zero.evaluate import (EVAL_PARTS, MATCHES, evaluate_phase, gnugo_binary, matches_at, summary,
                                      with_katago)
from alphago_jax.zero.programs import Programs, RunState, SizeGames, build, replicated, to_host, train_iteration
from alphago_jax.zero.runs import init_network, network_chain, plot_run
from alphago_jax.zero.selfplay import STAT_NAMES

DISTRIBUTED_ENV = "ALPHAGO_JAX_DISTRIBUTED"
"""Environment variable: set to 1 to call ``jax.distributed.initialize()`` (multi-host runs)."""

DISTRIBUTED_TIMEOUTS = {"ALPHAGO_JAX_INIT_TIMEOUT_S": ("initialization_timeout", 300),
                        "ALPHAGO_JAX_HEARTBEAT_S": ("heartbeat_timeout_seconds", 100)}
"""Environment variables -> (``jax.distributed.initialize`` argument, default seconds): how long
processes wait for each other to join, and how long a silent process counts as alive."""


STATE_LAYOUT = "RunState"
"""The ``state_layout`` of checkpoints holding a ``programs.RunState`` (before it: a dict)."""


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


def initialize_distributed(enabled: bool | None = None) -> bool:
    """Call ``jax.distributed.initialize()`` when ``enabled`` (None: when ``ALPHAGO_JAX_DISTRIBUTED=1``).

    ``initialize()`` finds the coordinator itself on Cloud TPU pods, SLURM and Open MPI; elsewhere
    set ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` (read by JAX).
    ``ALPHAGO_JAX_INIT_TIMEOUT_S`` bounds the wait for every process to join, and
    ``ALPHAGO_JAX_HEARTBEAT_S`` the time after which a process that stopped answering (killed,
    its host lost) is declared dead, which ends every other process (``DISTRIBUTED_TIMEOUTS``).
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
        for name, (arg, default) in DISTRIBUTED_TIMEOUTS.items():
            kwargs[arg] = seconds_from_env(name, default)
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
        session, state = _open(config, out_dir, resume=resume, progress=progress, callback=callback,
                               distributed=distributed, log=log, time_limit=time_limit, init=init, clock=clock,
                               stop=stop)
        return _run(session, state)


@dataclasses.dataclass
class _Session:
    """What the phases of one ``train`` call share: the run's fixed parts and its open resources."""

    config: ZeroConfig
    out: pathlib.Path
    programs: Programs
    ckpt: Checkpointer
    clock: Clock
    timer: PhaseTimer
    budget: TimeBudget
    stop: _Stop
    say: Callable[[str], None]
    notify: Callable[[str, int], None]  # the caller's callback(phase, iteration)
    bar: Any  # the tqdm progress bar
    logger: RunLogger | None  # on the first process only
    gnugo: str | None  # the GNU Go binary evaluations play against
    chain: list  # the provenance of the network: what it started from
    elapsed: float  # wall seconds of the run over its earlier sessions
    started: float  # the clock's time at the start of this session
    directory: tuple | None = None  # the run directory's (device, inode) when the session opened

    def enter(self, phase: str, iteration: int) -> None:
        """Announce a phase of an iteration to the caller and on the progress bar."""
        self.notify(phase, iteration)
        self.bar.set_description(f"AlphaGo Zero [{phase}]")


def _resolve_config(config: ZeroConfig, ckpt: Checkpointer, latest: int | None, resume: bool, init) -> ZeroConfig:
    """``config`` with its worker count fixed, checked against the run already in the directory."""
    if latest is not None and not resume:
        raise ValueError(f"{ckpt.directory}: holds checkpoints of a run (up to iteration {latest}); "
                         "pass --resume to continue it, or choose another output directory")
    if init is not None and latest is not None:
        raise ValueError(f"{ckpt.directory}: holds a run to resume; --init starts a new run (drop it, or choose "
                         "another output directory)")
    saved = saved_config(ckpt.directory.parent) if latest is not None else None
    if config.workers is None:
        # One per device, then fixed for the run's life: it can resume on other device counts.
        workers = saved.workers if saved is not None and saved.workers else jax.device_count()
        config = dataclasses.replace(config, workers=workers)
    if saved is not None:
        differences = config_differences(saved, config)
        if differences:
            raise ValueError(f"{ckpt.directory / str(latest)}: the run there has another configuration "
                             f"({'; '.join(differences)}); resume it with its own settings")
    return config


def restore_state(ckpt: Checkpointer, step: int, target: RunState) -> tuple[RunState, dict]:
    """The run state and metadata of checkpoint ``step``, in ``target``'s shapes and shardings.

    Checkpoints written before ``RunState`` (no ``state_layout`` in their metadata) held the same
    fields as a dict: they are read as one and converted.
    """
    metadata = ckpt.metadata(step)
    if metadata.get("state_layout") == STATE_LAYOUT:
        restored = ckpt.restore(step, target=target)
        return restored.state, restored.metadata
    if "state_layout" in metadata:
        raise CheckpointError(f"{ckpt.directory / str(step)}: run state layout {metadata['state_layout']!r}, "
                              f"this version reads {STATE_LAYOUT!r} and the dict layout before it")
    restored = ckpt.restore(step, target=target.as_dict())
    return RunState.from_dict(restored.state), restored.metadata


def _open(config: ZeroConfig, out_dir, *, resume: bool, progress: bool, callback, distributed, log,
          time_limit, init, clock: Clock, stop: _Stop) -> tuple[_Session, RunState]:
    """Resolve the configuration, build the programs and restore (or start) the run state."""
    from tqdm.auto import tqdm

    started = clock.now()
    initialize_distributed(distributed)
    out = pathlib.Path(out_dir).absolute()
    lead = jax.process_index() == 0  # the process that writes logs, plots and the sample game
    ckpt = Checkpointer(checkpoint_dir(out), kind=KIND, keep=config.keep)
    latest = ckpt.latest_step()
    config = _resolve_config(config, ckpt, latest, resume, init)
    started_from = init_network(init, config) if init is not None else None
    programs = build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    chain, elapsed, metadata = [], 0.0, {}
    if latest is not None:
        state, metadata = restore_state(ckpt, latest, state)
        chain, elapsed = list(metadata.get("chain", [])), float(metadata.get("elapsed_s", 0.0))
    elif started_from is not None:
        fresh = init_train_state(started_from.variables, config.optimizer)
        fresh = jax.device_put(fresh, jax.tree_util.tree_map(lambda x: x.sharding, state.train))
        state = state.replace(train=fresh, best=fresh.variables)
        chain = network_chain(started_from)
    start = int(state.iteration)
    metrics_path = out / "metrics.csv"
    logger = RunLogger(metrics_path, tensorboard_dir=out / "tb", resume_step=start if start > 0 else -1) if lead else None
    if logger and start > 0:
        _log_saved_row(logger, metrics_path, start, metadata)
    bar = tqdm(total=config.iterations, initial=min(start, config.iterations), desc="AlphaGo Zero",
               unit="it", disable=not (progress and lead), dynamic_ncols=True)
    say = log or (lambda text: tqdm.write(text) if lead else None)
    config = with_katago(config, say)
    budget = TimeBudget(None if time_limit is None else max(0.0, float(time_limit)), started)
    session = _Session(config=config, out=out, programs=programs, ckpt=ckpt, clock=clock,
                       timer=PhaseTimer(clock, say=say), budget=budget, stop=stop, say=say, bar=bar,
                       notify=callback or (lambda phase, iteration: None),
                       logger=logger, gnugo=gnugo_binary(config, say), chain=chain, elapsed=elapsed,
                       started=started, directory=_identity(out))
    return session, state


def _run(s: _Session, state: RunState) -> RunResult:
    """``train``'s driver: the untrained network's evaluation, then one iteration after another."""
    config, start, stopped = s.config, int(state.iteration), None
    if start == 0 and config.eval_games:
        state = _evaluate_untrained(s, state)
    saved, row = start, {}
    for iteration in range(start + 1, config.iterations + 1):
        stopped = _signalled(s)
        if stopped:  # during an evaluation or a checkpoint: stop before the next iteration, checkpointed
            if saved < iteration - 1:
                checkpoint_phase(s, state, {"train_step": int(state.train.step), **row}, iteration - 1)
            s.say(f"{stopped}: stopping after iteration {iteration - 1}; its checkpoint is saved and --resume "
                  "continues from it")
            break
        s.timer.reset()
        key, k_selfplay, k_train, k_eval = s.programs.split(state.key)
        s.enter("selfplay", iteration)
        state, row = selfplay_phase(s.programs, config, state, k_selfplay, s.timer)
        s.enter("train", iteration)
        state, trained = train_phase(s.programs, config, state, k_train, s.timer)
        row.update(trained)
        plan, stopped = _plan_iteration(s, iteration)
        if plan.play:
            s.enter("evaluate", iteration)
            state, evaluated = _evaluate_logged(s, state, k_eval, iteration, plan.play)
            row.update(evaluated)
        state = state.replace(key=key, iteration=replicated(np.int32(iteration), s.programs.mesh))
        if plan.last or iteration % config.checkpoint_interval == 0:
            s.enter("checkpoint", iteration)
            checkpoint_phase(s, state, row, iteration)
            saved = iteration
        row.update(s.timer.row(EVAL_PARTS))
        if s.logger:
            s.logger.log(iteration, row)
        s.bar.set_postfix({k: f"{row[k]:.3g}" for k in ("loss", "win_random", "win_mcts") if k in row})
        s.bar.update(1)
        if plan.last:
            break
    return _close(s, state, stopped)


def _signalled(s: _Session) -> str | None:
    """The signal that stops the run (here, or on another process: the same on every process), or None."""
    if jax.process_count() == 1:
        return s.stop.signal
    from jax.experimental import multihost_utils

    if np.any(multihost_utils.process_allgather(np.int32(s.stop.signal is not None))):
        return s.stop.signal or "a signal to another process"
    return None


def _evaluate_untrained(s: _Session, state: RunState) -> RunState:
    """The evaluation at iteration 0: the baseline the later evaluations are compared with."""
    if s.budget.left(s.clock.now()) <= 0:
        s.say("time limit: no evaluation of the untrained network")
        return state
    s.enter("evaluate", 0)
    key = jax.random.fold_in(state.key, 1 << 30)
    state, row = _evaluate_logged(s, state, key, 0, matches_at(s.config, 0, s.gnugo))
    row.update(s.timer.row(EVAL_PARTS))
    if s.logger:
        s.logger.log(0, {**row, "train_step": 0})
    return state


def _evaluate_logged(s: _Session, state: RunState, key, iteration: int, play) -> tuple[RunState, dict]:
    """``evaluate_phase`` timed as ``eval``, its summary said."""
    with s.timer("eval", report=False):
        row, state = evaluate_phase(s.programs, s.config, state, key, iteration, s.out, gnugo=s.gnugo, say=s.say,
                                    play=play, timer=s.timer)
    s.say(f"iteration {iteration}: {summary(row, s.config)}")
    return state, row


def selfplay_phase(programs: Programs, config: ZeroConfig, state: RunState, key, timer: PhaseTimer
                   ) -> tuple[RunState, dict]:
    """One iteration's self-play on every board size into its replay buffer; the metrics row's
    self-play entries (those of ``extra_sizes`` suffixed ``_<n>x<n>``, each size timed apart)."""
    variables, curriculum = state.train.variables, bool(config.extra_sizes)
    with timer("selfplay"):
        part = f"selfplay_{config.board_size}x{config.board_size}" if curriculum else None
        sp, buffer, row = _play_size(programs, config, variables, state.selfplay, state.replay, key, timer, part)
        sizes = []
        for extra, n, games in zip(programs.extras, config.extra_sizes, state.sizes):
            extra_sp, extra_buffer, extra_row = _play_size(extra, config.at_size(n), variables, games.selfplay,
                                                           games.replay, jax.random.fold_in(key, n), timer,
                                                           f"selfplay_{n}x{n}")
            row.update({f"{k}_{n}x{n}": v for k, v in extra_row.items()})
            sizes.append(SizeGames(replay=extra_buffer, selfplay=extra_sp))
    if not curriculum:
        row["selfplay_positions_per_s"] = config.selfplay_batch * config.selfplay_moves / timer.seconds["selfplay"]
    return state.replace(selfplay=sp, replay=buffer, sizes=tuple(sizes)), row


def _play_size(programs: Programs, config: ZeroConfig, variables, sp, buffer, key, timer: PhaseTimer,
               part: str | None):
    """One board size's self-play: ``(sp, buffer, row entries)``; positions/s when timed as ``part``."""
    with timer(part) if part else contextlib.nullcontext():
        sp, buffer, stats = programs.selfplay(variables, sp, buffer, key)
        stats = dict(zip(STAT_NAMES, to_host(stats).sum(axis=1).tolist()))
        sizes = to_host(buffer.size)  # [W]
    row = {"games": stats["games"], "positions": stats["positions"], "replay_size": int(sizes.sum()),
           "black_win_rate": stats["black_wins"] / max(stats["games"], 1)}
    if part:
        row["selfplay_positions_per_s"] = config.selfplay_batch * config.selfplay_moves / timer.seconds[part]
    row.update(_resign_metrics(config, stats, sp))
    return sp, buffer, row


def train_phase(programs: Programs, config: ZeroConfig, state: RunState, key, timer: PhaseTimer
                ) -> tuple[RunState, dict]:
    """``config.train_steps`` steps, split over the board sizes by ``size_weights``; a size trains once
    every shard of its replay buffer holds its share of ``min_replay`` positions. The metrics row's
    training entries: means over the steps (those of ``extra_sizes`` suffixed ``_<n>x<n>``)."""
    buffers = (state.replay,) + tuple(games.replay for games in state.sizes)
    todo = [(i, count) for i, (buffer, count) in enumerate(zip(buffers, config.steps_per_size()))
            if count and int(to_host(buffer.size).min()) * programs.workers >= config.min_replay]
    row, train_state = {}, state.train
    if todo:
        with timer("train"):
            for i, count in todo:
                n = config.sizes[i]
                size_programs = programs.extras[i - 1] if i else programs
                train_state, metrics = train_iteration(size_programs, train_state, buffers[i],
                                                       jax.random.fold_in(key, n) if i else key, count)
                row.update({f"{k}_{n}x{n}" if i else k: float(np.mean(v)) for k, v in metrics.items()})
        row["train_steps_per_s"] = sum(count for _, count in todo) / timer.seconds["train"]
    row["train_step"] = int(train_state.step)
    return state.replace(train=train_state), row


def _plan_iteration(s: _Session, iteration: int):
    """The end plan after this iteration's training (``timing.plan_end``), said; and the signal
    that stops the run here, or None."""
    left = s.budget.left(s.clock.now())
    plan, stopping = _plan(s.config, s.timer, left, iteration, s.gnugo, s.stop.signal)
    stopped = None
    if stopping:
        stopped = s.stop.signal or "a signal to another process"
        s.say(f"{stopped}: stopping after iteration {iteration}, without its evaluation; its checkpoint is "
              "saved and --resume continues from it")
    elif plan.last and iteration < s.config.iterations:
        s.say(f"time limit: iteration {iteration} is the last of this session ({max(0.0, left):.0f} s left, not "
              "enough for another iteration and the final evaluation); --resume continues")
    if plan.skipped:
        s.say(_skipped_note(iteration, plan, _match_costs(s.timer, plan.skipped), left))
    return plan, stopped


def _identity(directory: pathlib.Path) -> tuple | None:
    """``(device, inode)`` of ``directory``, None where it is missing."""
    try:
        info = directory.stat()
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def checkpoint_phase(s: _Session, state: RunState, row: dict, iteration: int) -> None:
    """Save the run state with its metadata: the config, the counters, the chain and the row.
    OSError when the run directory was removed or replaced since the session opened (the files
    would otherwise be written afresh where the rest of the run is gone)."""
    if _identity(s.out) != s.directory:
        raise FileNotFoundError(errno.ENOENT, "the run directory was removed or replaced while the run was going; "
                                "nothing is saved from here", str(s.out))
    mesh = s.programs.mesh
    saved_row = {k: v for k, v in {**row, **s.timer.row(EVAL_PARTS)}.items() if k != "checkpoint_s"}
    with s.timer("checkpoint", report=False):
        s.ckpt.save(iteration, state, metadata={
            "config": s.config.to_dict(), "iteration": iteration, "train_step": row["train_step"],
            "devices": mesh.devices.size, "workers": s.programs.workers, "chain": s.chain,
            "elapsed_s": s.elapsed + s.clock.now() - s.started, "state_layout": STATE_LAYOUT,
            "device": f"{mesh.devices.size} x {mesh.devices.flat[0].device_kind}", "row": _jsonable(saved_row)})


def _close(s: _Session, state: RunState, stopped: str | None) -> RunResult:
    """End the session: the progress bar, the logger, the plot; what the run left where."""
    s.bar.set_description("AlphaGo Zero")
    s.bar.close()
    s.notify("done", int(state.iteration))
    final = s.ckpt.latest_step()
    plot = sample = None
    if s.logger:
        s.logger.close()
        try:
            plot = plot_run(s.out)
        except ValueError:  # nothing logged yet to plot
            plot = None
        sample = s.out / "sample.sgf" if (s.out / "sample.sgf").exists() else None
    s.ckpt.close()
    return RunResult(out_dir=s.out, checkpoint=s.ckpt.directory / str(final), metrics=s.out / "metrics.csv",
                     plot=plot, sample_game=sample, iterations=final, train_steps=int(state.train.step),
                     stopped=stopped)


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
    matches = matches_at(config, iteration, gnugo)
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
