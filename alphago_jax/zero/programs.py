"""AlphaGo Zero's jitted programs for one config and one device mesh (``build``): a fresh run
state, self-play iterations, training steps and the evaluation matches, laid out over the
devices by worker.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from alphago_jax import nets
from alphago_jax.search import make_search, network_evaluator
from alphago_jax.train import replay
from alphago_jax.zero.external_eval import GnuGoMatch
from alphago_jax.train.mesh import DATA_AXIS, make_mesh
from alphago_jax.train.optimizer import TrainState, init_train_state
from alphago_jax.zero import learner
from alphago_jax.zero.config import ZeroConfig
from alphago_jax.zero.selfplay import (
    STAT_NAMES,
    SelfPlay,
    calibrate_resignation,
    inner_mover,
    play_match,
    random_mover,
    search_mover,
    selfplay,
    selfplay_init,
)



# ------------------------------------------------------------------------------ the programs

@flax.struct.dataclass
class SizeGames:
    """The games of one more board size of a curriculum (``ZeroConfig.extra_sizes``): as in ``RunState``."""

    replay: replay.ReplayBuffer  # leaves [W, C / W, ...]
    selfplay: SelfPlay  # leaves [W, B / W, ...]


@flax.struct.dataclass
class RunState:
    """The whole state of a run, what a checkpoint holds. W workers, B self-play games, C replay
    capacity. ``selfplay`` and ``replay`` are split over the devices by worker; the rest is replicated."""

    train: TrainState  # the latest network, its optimizer state and step
    replay: replay.ReplayBuffer  # leaves [W, C / W, ...]; insert and size int32[W]
    selfplay: SelfPlay  # leaves [W, B / W, ...]; resignation threshold [W], record [W, RESIGN_BINS]
    best: dict  # the best network's variables (params, batch_stats)
    best_elo: jax.Array  # float32[]: the Elo gains of the best network's promotions
    key: jax.Array  # uint32[2]: the run's PRNG key
    iteration: jax.Array  # int32[]: the iterations done
    sizes: tuple[SizeGames, ...] = ()  # the games of each of ``ZeroConfig.extra_sizes``

    @classmethod
    def from_dict(cls, state: dict) -> "RunState":
        """A run state from the dict that checkpoints held before ``RunState`` (its fields but ``sizes``)."""
        return cls(**{f.name: state[f.name] for f in dataclasses.fields(cls) if f.name != "sizes"})

    def as_dict(self) -> dict:
        """The fields as a dict (shallow), the layout of checkpoints written before ``RunState``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "sizes"}


class Programs(NamedTuple):
    """The jitted programs of a run, built by ``build`` for one config and one mesh. W workers.

    - ``init(key) -> RunState``: a fresh run state.
    - ``selfplay(variables, sp, buffer, key) -> (sp, buffer, stats)``: one iteration's self-play;
      ``stats`` int32[len(STAT_NAMES), W] per worker; the resignation threshold is recalibrated
      at the end (``selfplay.calibrate_resignation``).
    - ``train_step(train_state, buffer, key) -> (train_state, metrics)``: one step on
      ``train_batch / W`` examples from each replay shard.
    - ``matches``: ``{"random", "mcts", "best"} -> (player_variables, opponent_variables, key)
      -> MatchOutput`` over all ``eval_games`` (leaves split over the devices; ``to_host``).
    - ``split(key) -> (key, k_selfplay, k_train, k_eval)``.
    - ``gnugo``: the evaluation search against GNU Go (``external_eval.GnuGoMatch``), compiled on first use.
    """

    init: Callable
    selfplay: Callable
    train_step: Callable
    matches: dict
    split: Callable
    mesh: Any
    workers: int
    gnugo: GnuGoMatch
    extras: tuple = ()  # the Programs of each of ``ZeroConfig.extra_sizes``


COMPILE_TIMEOUT_ENV = "ALPHAGO_JAX_COMPILE_TIMEOUT_S"
"""Environment variable: seconds the processes of a run wait for each other to compile a program
(default 1800: first compilations on a loaded host take minutes)."""


class CoordinationError(TimeoutError):
    """The processes of a run did not all reach, in time, a point they must reach together."""


class SyncedFirstRun:
    """A jitted program that, on several processes, compiles ahead of its first run and waits
    there for every process to have compiled it (a coordination-service barrier bounded by
    ``ALPHAGO_JAX_COMPILE_TIMEOUT_S``), so that its collectives never wait on a process still
    compiling (gloo gives up after 30 s). On one process it is the program itself."""

    _count = 0  # barriers so far: the same sequence on every process

    def __init__(self, name: str, program: Callable):
        self.name, self.program, self._compiled = name, program, None

    def __call__(self, *args):
        if jax.process_count() == 1:
            return self.program(*args)
        if self._compiled is None:
            self._compiled = self.program.lower(*args).compile()
            _wait_for_every_process(f"{self.name} compiled")
        return self._compiled(*args)


def _wait_for_every_process(what: str) -> None:
    """Block until every process of the run reaches this point; CoordinationError naming the processes
    that did not, after ``ALPHAGO_JAX_COMPILE_TIMEOUT_S`` seconds."""
    from jax._src import distributed

    from alphago_jax.checks import seconds_from_env

    timeout = seconds_from_env(COMPILE_TIMEOUT_ENV, 1800)
    SyncedFirstRun._count += 1
    barrier = f"alphago_jax/{SyncedFirstRun._count}"
    client = distributed.global_state.client
    client.key_value_set(f"{barrier}/{jax.process_index()}", what)  # who arrived, for the message
    try:
        client.wait_at_barrier(barrier, timeout * 1000)
    except Exception as e:  # the coordination service raises XlaRuntimeError
        try:
            arrived = {int(k.rsplit("/", 1)[1]) for k, _ in client.key_value_dir_get(f"{barrier}/")}
        except Exception:
            arrived = {jax.process_index()}
        missing = sorted(set(range(jax.process_count())) - arrived)
        detail = (str(e).splitlines() or [""])[0][:200]
        raise CoordinationError(f"process {jax.process_index()}: waited {timeout} s ({COMPILE_TIMEOUT_ENV}) for every "
                           f"process to reach '{what}'; process(es) {missing} did not: slow, stuck or dead "
                           f"({detail})") from None


def num_workers(config: ZeroConfig, devices: int) -> int:
    """W: ``config.workers``, or one per device; ValueError unless the sizes divide evenly."""
    w = config.workers or devices
    if w % devices:
        raise ValueError(f"ZeroConfig.workers = {w} must be a multiple of the {devices} devices the run is "
                         "spread over")
    for name, value in (("selfplay_batch", config.selfplay_batch), ("train_batch", config.train_batch),
                        ("replay_capacity", config.replay_capacity), ("eval_games / 2", config.eval_games // 2)):
        if value % w:
            raise ValueError(f"ZeroConfig: {name} = {value} must be a multiple of the {w} workers (one per "
                             "device unless ZeroConfig.workers says otherwise)")
    return w


def to_host(tree):
    """numpy copies of the leaves, gathered from every process in a multi-host run."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree_util.tree_map(np.asarray, tree)


def replicated(value: np.ndarray, mesh) -> jax.Array:
    """``value`` (the same on every process) as an array on every device of ``mesh``: a global
    array, which multi-host checkpoints need (a plain ``jnp`` scalar is local to one process)."""
    value = np.asarray(value)
    return jax.make_array_from_callback(value.shape, NamedSharding(mesh, PartitionSpec()), lambda _: value)


def _per_worker(tree, workers: int):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (workers,) + x.shape), tree)


def _init(config: ZeroConfig, w: int, key) -> RunState:
    """A fresh run state of ``config`` with ``w`` workers."""
    k_net, k_run = jax.random.split(key)
    variables = nets.init_variables(config.net, k_net, size=config.board_size)
    train_state = init_train_state(variables, config.optimizer)
    buffer, games = _games_init(config, w)
    sizes = tuple(SizeGames(*_games_init(config.at_size(n), w)) for n in config.extra_sizes)
    return RunState(train=train_state, replay=buffer, selfplay=games, best=train_state.variables,
                    best_elo=jnp.float32(0), key=k_run, iteration=jnp.int32(0), sizes=sizes)


def _games_init(config: ZeroConfig, w: int) -> tuple[replay.ReplayBuffer, SelfPlay]:
    """An empty replay buffer and fresh self-play games of ``config``'s board size, per worker."""
    points = config.board_size * config.board_size
    example = replay.Examples(
        planes=jnp.zeros((config.board_size, config.board_size, config.net.in_planes), jnp.uint8),
        policy=jnp.zeros((config.game.num_actions,), jnp.float32), value=jnp.float32(0),
        ownership=jnp.zeros((points,), jnp.int8) if config.net.ownership else None,  # the heads' targets
        score=jnp.float32(0) if config.net.score else None)
    return (_per_worker(replay.replay_init(config.replay_capacity // w, example), w),
            _per_worker(selfplay_init(config.game, config.selfplay_batch // w, config.resign_threshold,
                                      inputs=config.inputs), w))


def build(config: ZeroConfig, mesh=None) -> Programs:
    """The jitted programs of ``config`` on ``mesh`` (default: all devices)."""
    mesh = make_mesh() if mesh is None else mesh
    w = num_workers(config, mesh.devices.size)
    game, net, opt = config.game, config.net, config.optimizer
    split_spec = PartitionSpec(DATA_AXIS)
    rep = NamedSharding(mesh, PartitionSpec())
    split = NamedSharding(mesh, split_spec)

    def on_workers(f, in_axes, in_specs):
        """``f`` of one worker, vmapped over each device's workers, with no communication."""
        return jax.shard_map(jax.vmap(f, in_axes=in_axes), mesh=mesh, in_specs=in_specs, out_specs=split_spec,
                             check_vma=False)

    evaluator = network_evaluator(nets.policy_value_apply(net), config.input_planes, symmetries=config.symmetries)
    sp_search = make_search(game, evaluator, config.selfplay_search)

    state_sharding = RunState(train=rep, replay=split, selfplay=split, best=rep, best_elo=rep, key=rep, iteration=rep,
                              sizes=tuple(SizeGames(split, split) for _ in config.extra_sizes))

    fast_search = make_search(game, evaluator, config.fast_search) if config.playout_cap else None
    resigning = config.resign_threshold is not None
    one_worker = functools.partial(selfplay, game, sp_search, config.selfplay_moves, fast_search=fast_search,
                                   resign=resigning, no_resign_fraction=config.no_resign_fraction, random_start=config.random_start)
    if fast_search is None:
        play = on_workers(one_worker, (None, 0, 0, 0), (PartitionSpec(), split_spec, split_spec, split_spec))
    else:  # the schedule of full-search moves is one for all workers: lax.cond then runs one search
        play = on_workers(one_worker, (None, 0, 0, 0, None),
                          (PartitionSpec(), split_spec, split_spec, split_spec, PartitionSpec()))

    def selfplay_program(variables, sp, buffer, key):
        if fast_search is None:
            sp, buffer, stats = play(variables, sp, buffer, jax.random.split(key, w))
        else:
            schedule = jax.random.bernoulli(jax.random.fold_in(key, 1), config.full_search_fraction,
                                            (config.selfplay_moves,))
            sp, buffer, stats = play(variables, sp, buffer, jax.random.split(key, w), schedule)
        if resigning and config.false_resign_target is not None:
            sp = sp.replace(resign=calibrate_resignation(sp.resign, config.false_resign_target))
        return sp, buffer, jnp.stack([stats[k] for k in STAT_NAMES])

    def train_step(train_state, buffer, key):
        k_sample, k_augment = jax.random.split(key)
        per = config.train_batch // w
        batch = jax.vmap(lambda b, k: replay.replay_sample(b, k, per))(buffer, jax.random.split(k_sample, w))
        batch = jax.tree_util.tree_map(lambda x: x.reshape((w * per,) + x.shape[2:]), batch)
        batch = jax.lax.with_sharding_constraint(batch, split)
        return learner.train_step(train_state, batch, net, opt, key=k_augment,
                                  ownership_weight=config.ownership_weight, score_weight=config.score_weight)

    pairs = config.eval_games // 2 // w
    net_mover = search_mover(make_search(game, evaluator, config.eval_search))
    mcts = make_search(game.game, config.baseline_evaluator, config.baseline_search)
    opponents = {"random": random_mover(game), "mcts": inner_mover(search_mover(mcts)), "best": net_mover}

    def match_program(opponent_name, opponent):
        run = on_workers(functools.partial(play_match, game, net_mover, opponent, pairs), (None, None, 0),
                         (PartitionSpec(), PartitionSpec(), split_spec))

        def program(player_variables, opponent_variables, key):
            out = run(player_variables, opponent_variables, jax.random.split(key, w))
            return jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), out)  # worker-major

        return SyncedFirstRun(f"the match against {opponent_name}", jax.jit(program, in_shardings=(rep, rep, rep)))

    return Programs(
        init=jax.jit(functools.partial(_init, config, w), out_shardings=state_sharding),
        selfplay=SyncedFirstRun(f"self-play {config.board_size}x{config.board_size}", jax.jit(
            selfplay_program, in_shardings=(rep, split, split, rep), out_shardings=(split, split, split),
            donate_argnums=(1, 2))),
        # No donation of the train state: the best network may share its arrays.
        train_step=SyncedFirstRun(f"the training step {config.board_size}x{config.board_size}", jax.jit(
            train_step, in_shardings=(rep, split, rep), out_shardings=(rep, rep))),
        matches={name: match_program(name, opponent) for name, opponent in opponents.items()},
        split=jax.jit(lambda k: tuple(jax.random.split(k, 4)), out_shardings=rep),
        mesh=mesh,
        workers=w,
        gnugo=GnuGoMatch(game, net_mover),
        extras=tuple(build(config.at_size(n), mesh) for n in config.extra_sizes),
    )


def train_iteration(programs: Programs, train_state: TrainState, buffer: replay.ReplayBuffer, key, steps: int
                    ) -> tuple[TrainState, dict]:
    """``steps`` training steps; returns the state and each metric as float32[steps] (numpy).

    A Python loop over one jitted step rather than a ``lax.scan``: XLA:CPU runs the gradient's
    convolutions about 15x slower inside a loop than at the top level of a program, and
    dispatch is asynchronous, so accelerators stay busy either way.
    """
    # Several CPU "devices" share one small thread pool: two programs with collectives in flight
    # at once can each hold threads that the other's collectives wait for.
    devices = programs.mesh.devices
    sync = devices.size > 1 and devices.flat[0].platform == "cpu"
    collected = []
    for k in jax.random.split(key, steps):
        train_state, metrics = programs.train_step(train_state, buffer, k)
        collected.append(metrics)
        if sync:
            jax.block_until_ready(train_state)
    stacked = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *collected)
    return train_state, stacked
