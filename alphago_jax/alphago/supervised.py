"""Supervised learning from game records: AlphaGo's SL policy network and fast rollout policy.

Silver et al. (2016) train both on positions of expert games, to predict the move
played:

- SL policy (``train_sl``, ``alphago-jax sl-train``): ``PolicyNet`` on the 48 input planes,
  softmax cross-entropy ``-log p(a | s)``, SGD with momentum, learning rate 0.003 halved every
  ``decay_every`` steps, each position under one of the 8 board symmetries drawn at random;
  reports the top-1 accuracy (the most probable legal move is the move played) on held-out
  games.
- Rollout policy (``train_rollout``, ``alphago-jax rollout-train``): ``RolloutPolicy``, the
  linear softmax over local pattern features, on the same positions and loss; reports its
  top-1 accuracy and its speed in microseconds per move of a rollout (``rollout_speed``).

Both (and the value network, ``value``) run through ``fit``: batches streamed from the
dataset's shards (``positions.BatchStream``), rows mapped by a random symmetry and rebuilt into
states inside the jitted step (``positions.augment_rows``, ``positions.row_states``), the input
planes computed there too (``alphago_planes_batch``), every ``eval_every`` steps the held-out
metrics on a fixed sample of held-out positions, every ``checkpoint_every`` steps a checkpoint
of the whole state (``jobs.Job``: kind ``"sl"`` / ``"rollout"``). Batch ``k`` and the
symmetries of step ``k`` depend only on the seed and ``k``, so a run killed at any point and
resumed with ``resume=True`` ends with the parameters of the run that was not interrupted.

Data parallelism: with more than one device, ``fit`` replicates the ``TrainState`` over a 1-D
mesh of all of ``jax.devices()`` and splits each batch (and each held-out batch) over it
(``train.mesh``: ``make_mesh``, ``replicate``, ``shard_batch``); the jitted step is the same program,
XLA's partitioner inserts the all-reduce of the gradients. The loss is the mean over the whole
batch and the random symmetries are drawn for the whole batch, so the run is the one-device run
up to floating-point summation order. The batch must be a multiple of the device count
(``mesh.data_mesh`` raises ValueError otherwise).

Differences from the paper, for a 2-core CPU: smaller networks (``filters``, ``layers``), a
batch of 64 rather than 16 with momentum 0.9 (the paper's asynchronous SGD had none), and
decay every few thousand steps rather than 80 million.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from alphago_jax import checks, nets
from alphago_jax.alphago import positions
from alphago_jax.features.alphago import NUM_PLANES, alphago_planes, alphago_planes_batch
from alphago_jax.nets.rollout import RolloutPolicy
from alphago_jax.train.jobs import Job, JobConfig, latest_state
from alphago_jax.train.mesh import data_mesh, replicate, to_devices
from alphago_jax.train.optimizer import OptimizerConfig, TrainState, l2_penalty, make_optimizer, make_schedule

KIND_SL, KIND_ROLLOUT = "sl", "rollout"
POLICY_KINDS = ("sl", "rl")
"""Checkpoint kinds that hold a policy network (SL, and RL which starts from it)."""


# ----------------------------------------------------------------------------- settings

@dataclasses.dataclass(frozen=True)
class FitConfig(JobConfig):
    """Settings every supervised job shares.

    Attributes:
      board_size: the dataset's board size (checked against its manifest).
      batch: positions per step.
      steps: training steps in all (the run's length; may grow when resuming).
      learning_rate: SGD's initial rate; momentum: SGD momentum (0 for plain SGD).
      decay_every: the rate is halved every this many steps (0: constant).
      weight_decay: L2 coefficient added to the loss.
      eval_every: held-out evaluation every this many steps (and at the end).
      eval_positions: held-out positions evaluated (a fixed random sample of the split).
      checkpoint_every: a checkpoint every this many steps (and at the end).
      log_every: a metrics row (means since the last row) every this many steps.
      keep: checkpoints kept.
      seed: data order, symmetries and initialisation.
    """

    board_size: int = 9
    batch: int = 64
    steps: int = 2000
    learning_rate: float = 0.003
    momentum: float = 0.9
    decay_every: int = 1000
    weight_decay: float = 0.0
    eval_every: int = 500
    eval_positions: int = 4096
    checkpoint_every: int = 250
    log_every: int = 50
    keep: int = 2
    seed: int = 0

    def __post_init__(self):
        checks.require(self, "board_size", checks.is_int(self.board_size) and 2 <= self.board_size <= 19,
                       "must be an int from 2 to 19")
        checks.ints(self, 1, "batch", "steps", "eval_every", "eval_positions", "checkpoint_every", "log_every", "keep")
        checks.ints(self, 0, "decay_every", "seed")
        checks.number(self, "learning_rate", "> 0")
        checks.number(self, "momentum", "[0, 1)")
        checks.number(self, "weight_decay", ">= 0")

    @property
    def optimizer(self) -> OptimizerConfig:
        """SGD with momentum, the rate halved every ``decay_every`` steps up to ``steps``."""
        boundaries = tuple(range(self.decay_every, self.steps, self.decay_every)) if self.decay_every else ()
        return OptimizerConfig(kind="sgd", learning_rate=self.learning_rate, momentum=self.momentum,
                               weight_decay=self.weight_decay, schedule="piecewise" if boundaries else "constant",
                               boundaries=boundaries, decay_factor=0.5)


@dataclasses.dataclass(frozen=True)
class SLConfig(FitConfig):
    """The SL policy job: ``FitConfig`` plus the network, ``PolicyNet(filters, layers)``."""

    filters: int = 64
    layers: int = 6
    ladders: bool = True

    def __post_init__(self):
        super().__post_init__()
        checks.ints(self, 1, "filters", "layers")
        checks.flags(self, "ladders")

    @property
    def net_spec(self) -> dict:
        """What a checkpoint records of the network (``policy_net`` rebuilds it; ``ladders``
        says whether its two ladder planes were read or left at zero)."""
        return {"board_size": self.board_size, "filters": self.filters, "layers": self.layers, "ladders": self.ladders}


@dataclasses.dataclass(frozen=True)
class RolloutConfig(FitConfig):
    """The rollout policy job (``FitConfig``; the linear policy has no size settings).

    ``speed_batch``: games per jitted call when timing rollouts (1: one game, as in a search
    that runs one rollout at a time).
    """

    batch: int = 256
    learning_rate: float = 0.05
    decay_every: int = 2000
    speed_batch: int = 1

    def __post_init__(self):
        super().__post_init__()
        checks.ints(self, 1, "speed_batch")

    @property
    def net_spec(self) -> dict:
        return {"board_size": self.board_size}


def batch_planes(states, value_net: bool = False, ladders: bool = True) -> jnp.ndarray:
    """float32[B, S, S, 48] (49 with ``value_net``): AlphaGo's planes of a batch of states.

    ``ladders=False`` leaves the two ladder planes at zero, far cheaper to compute and to compile
    (the ladder reader is most of both): for small runs and tests.
    """
    if ladders:
        return alphago_planes_batch(states, value_net=value_net)
    return jax.vmap(lambda s: alphago_planes(s, value_net=value_net, ladders=False))(states)


def policy_net(spec: dict) -> nets.PolicyNet:
    """The ``PolicyNet`` of a checkpoint's ``net`` record (``SLConfig.net_spec``)."""
    return nets.PolicyNet(filters=int(spec["filters"]), trunk_layers=int(spec["layers"]))


# --------------------------------------------------------------------------- the fit loop

class Learner(NamedTuple):
    """How one supervised job learns.

    Attributes:
      init: ``key -> TrainState`` (fresh parameters and optimizer state).
      step: jitted ``(TrainState, rows, key) -> (TrainState, metrics)``; rows are numpy
        ``[batch, ...]`` arrays of ``fields``; metrics float32 scalars.
      evaluate: jitted ``(params, rows, weights bool[batch]) -> metrics``, each a sum over the
        rows with weight True (averaged by ``held_out_metrics``).
      fields: the dataset fields a batch holds.
    """

    init: Callable
    step: Callable
    evaluate: Callable
    fields: tuple[str, ...]


def make_learner(config: FitConfig, init_params: Callable, loss: Callable, measures: Callable,
                 fields: tuple[str, ...]) -> Learner:
    """A ``Learner`` from a parameter initialiser and a loss on rebuilt states.

    Args:
      init_params: ``key -> params``.
      loss: ``(params, states, rows) -> (float32[B] per-position loss, dict of float32[B]
        per-position measures)``; states are the rows' rebuilt ``HistoryState``s.
      measures: ``(params, states, rows) -> dict of float32[B]`` for held-out evaluation.
      fields: the dataset fields the loss reads.
    """
    opt_config = config.optimizer
    optimizer = make_optimizer(opt_config)
    game = positions.rules(config.board_size)

    def init(key):
        params = init_params(key)
        return TrainState(params=params, batch_stats={}, opt_state=optimizer.init(params), step=jnp.int32(0))

    def objective(params, states, rows):
        per, extra = loss(params, states, rows)
        total = jnp.mean(per) + l2_penalty(params, opt_config.l2)
        return total, {"loss": jnp.mean(per), **{k: jnp.mean(v) for k, v in extra.items()}}

    @jax.jit
    def step(state: TrainState, rows, key):
        rows = positions.augment_rows(key, rows, config.board_size)
        states = positions.row_states(game, rows)
        grads, metrics = jax.grad(objective, has_aux=True)(state.params, states, rows)
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        metrics["learning_rate"] = jnp.asarray(make_schedule(opt_config)(state.step), jnp.float32)
        return TrainState(optax.apply_updates(state.params, updates), state.batch_stats, opt_state,
                          state.step + 1), metrics

    @jax.jit
    def evaluate(params, rows, weights):
        states = positions.row_states(game, rows)
        w = weights.astype(jnp.float32)
        return {k: jnp.sum(v * w) for k, v in measures(params, states, rows).items()}

    return Learner(init, step, evaluate, fields)


def held_out_metrics(evaluate: Callable, params, rows: dict, batch: int, prefix: str = "held_out_",
                     mesh=None) -> dict:
    """Means of ``evaluate``'s measures over ``rows`` (fixed-size padded batches of ``batch``,
    each split over ``mesh`` when given: ``batch`` a multiple of its devices)."""
    total = len(rows["to_play"])
    sums: dict[str, float] = {}
    for chunk, valid in positions.padded_batches(rows, batch):
        for k, v in evaluate(params, *to_devices((chunk, valid), mesh)).items():
            sums[k] = sums.get(k, 0.0) + float(v)
    return {prefix + k: v / total for k, v in sums.items()}


def fit(job: Job, config: FitConfig, learn: Learner, data, *, on_eval: Callable[[Any, dict], None] | None = None,
        net_spec: dict | None = None) -> TrainState:
    """Train ``learn`` on the dataset ``data`` to ``config.steps`` within ``job``, resuming if it
    holds a checkpoint; returns the final ``TrainState``.

    Args:
      data: a dataset directory (``train`` and ``held_out`` splits).
      on_eval: called as ``on_eval(params, row)`` after each held-out evaluation, may add to
        the metrics row.
      net_spec: recorded in every checkpoint's metadata as ``net`` (what loaders rebuild).

    With several devices the state is replicated and each batch split over all of them (see the
    module docstring); the returned state is then replicated too.

    Raises:
      ValueError: ``config.batch`` is not a multiple of the device count.
    """
    mesh = data_mesh(config.batch)
    devices = 1 if mesh is None else mesh.devices.size
    # Several CPU "devices" share one thread pool: let each step's all-reduce finish before the next.
    sync = devices > 1 and jax.devices()[0].platform == "cpu"
    stream = positions.BatchStream(data, "train", config.batch, config.seed, fields=learn.fields)
    held = positions.sample_rows(data, "held_out", config.eval_positions, config.seed, fields=learn.fields)
    eval_batch = -(-min(256, max(config.batch, 64)) // devices) * devices
    base = jax.random.PRNGKey(config.seed)
    k_init, k_steps = jax.random.split(base)
    train = job.restore({"train": learn.init(k_init)})["train"]
    if mesh is not None:
        train = replicate(train, mesh)
    step = job.start
    pending: list[dict] = []
    t_last = time.perf_counter()
    if step < config.steps:
        for rows in stream.batches(step):
            train, metrics = learn.step(train, to_devices(rows, mesh), jax.random.fold_in(k_steps, step))
            if sync:
                jax.block_until_ready(train)
            pending.append(metrics)
            step += 1
            evaluating = step % config.eval_every == 0 or step == config.steps
            saving = step % config.checkpoint_every == 0 or step == config.steps
            if evaluating or saving or step % config.log_every == 0:
                row = {k: float(np.mean([float(m[k]) for m in pending])) for k in pending[0]}
                now = time.perf_counter()
                row["positions_per_s"] = len(pending) * config.batch / (now - t_last)
                pending, t_last = [], now
                if evaluating:
                    row.update(held_out_metrics(learn.evaluate, train.params, held, eval_batch, mesh=mesh))
                    if on_eval is not None:
                        on_eval(train.params, row)
                    job.say(f"step {step}: " + ", ".join(f"{k} {v:.4g}" for k, v in row.items()
                                                         if k.startswith("held_out") or k.startswith("rollout")))
                job.log(step, row, postfix=("loss", "accuracy"))
                if saving:  # host copies from several devices: the checkpoint loads on any devices
                    job.save(step, {"train": train if mesh is None else jax.device_get(train)}, net=net_spec or {})
                    t_last = time.perf_counter()
            job.bar.update(1)
            if step >= config.steps:
                break
    elif on_eval is not None:  # a finished run: report its held-out metrics again
        on_eval(train.params, held_out_metrics(learn.evaluate, train.params, held, eval_batch, mesh=mesh))
    return train


# ----------------------------------------------------------------------- the SL policy

def _masked_top1(logits, legal, move):
    """float32[B]: 1 where the most probable legal action is ``move``."""
    best = jnp.argmax(jnp.where(legal, logits, -jnp.inf), axis=-1)
    return (best == move).astype(jnp.float32)


def move_learner(config: FitConfig, init_params: Callable, logits_fn: Callable) -> Learner:
    """A ``Learner`` predicting the move played: cross-entropy of ``logits_fn(params, states)``
    (float32[B, A]) against the row's ``move``, and the top-1 accuracy among legal moves."""

    def outputs(params, states, rows):
        logits = logits_fn(params, states)
        move = rows["move"].astype(jnp.int32)
        ce = optax.softmax_cross_entropy_with_integer_labels(logits, move)
        return ce, {"accuracy": _masked_top1(logits, states.legal, move)}

    def measures(params, states, rows):
        ce, extra = outputs(params, states, rows)
        return {"loss": ce, **extra}

    return make_learner(config, init_params, outputs, measures, positions.STATE_FIELDS + ("move",))


def sl_learner(config: SLConfig) -> Learner:
    """Cross-entropy of the move played under ``PolicyNet`` on the 48 planes."""
    net = policy_net(config.net_spec)
    return move_learner(
        config, lambda key: nets.init_variables(net, key, size=config.board_size)["params"],
        lambda params, states: net.apply({"params": params}, batch_planes(states, ladders=config.ladders)))


class RunResult(NamedTuple):
    """Where a finished job put its results, and its last metrics row."""

    out_dir: Any
    checkpoint: Any
    metrics: Any
    plot: Any
    summary: dict


def _finish(job: Job, summary: dict, panels) -> RunResult:
    final = job.ckpt.latest_step()
    plot = job.close(panels)
    return RunResult(job.out, job.ckpt.directory / str(final), job.metrics_path, plot, summary)


def train_sl(config: SLConfig, data, out_dir, *, resume: bool = False, progress: bool = True) -> RunResult:
    """Train (or resume) the SL policy network on a dataset directory; see the module docstring.

    Returns a ``RunResult`` whose summary holds the last held-out accuracy and loss.

    Raises:
      ValueError: a missing or foreign dataset, another board size, a directory holding
        another run, a corrupted checkpoint (the message names the path).
    """
    positions.check_dataset(data, config.board_size)
    positions.check_dataset(data, config.board_size, "held_out")
    job = Job(out_dir, KIND_SL, config, config.steps, resume=resume, keep=config.keep, progress=progress,
              desc="SL policy")
    last = {}
    fit(job, config, sl_learner(config), data, on_eval=lambda params, row: last.update(row),
        net_spec=config.net_spec)
    return _finish(job, last, [("loss", "held_out_loss"), ("accuracy", "held_out_accuracy")])


# ------------------------------------------------------------------ the rollout policy

def rollout_learner(config: RolloutConfig) -> Learner:
    """Cross-entropy of the move played under the linear ``RolloutPolicy``."""
    policy = RolloutPolicy(size=config.board_size)
    return move_learner(config, policy.init,
                        lambda params, states: jax.vmap(policy.logits, in_axes=(None, 0))(params, states.inner))


def rollout_speed(policy: RolloutPolicy, params, rows: dict, batch: int = 1, moves: int = 64, repeats: int = 3,
                  game=None) -> float:
    """Measured microseconds per rollout move per game: ``policy.sample`` then the rules' step, in
    one jitted ``lax.scan`` of ``moves`` moves over ``batch`` games started from dataset rows
    (finished games restart from their row). The best of ``repeats`` timed calls after a
    compiling one.

    Args:
      rows: dataset rows (at least ``batch``) to start from.
      game: the rules (default ``positions.rules(policy.size)``).
    """
    game = game or positions.rules(policy.size)
    start = positions.row_states(game, {k: jnp.asarray(v[:batch]) for k, v in rows.items()})
    sample = jax.vmap(policy.sample, in_axes=(None, 0, 0))
    step = jax.vmap(game.step)
    done_of = jax.vmap(game.is_terminal)

    @jax.jit
    def run(states, key):
        def body(states, k):
            actions = sample(params, states.inner, jax.random.split(k, batch))
            after = step(states, actions)
            return jax.tree_util.tree_map(
                lambda s, a: jnp.where(done_of(after).reshape((-1,) + (1,) * (a.ndim - 1)), s, a), start, after), None

        return jax.lax.scan(body, states, jax.random.split(key, moves))[0]

    jax.block_until_ready(run(start, jax.random.PRNGKey(0)))
    best = float("inf")
    for r in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(run(start, jax.random.PRNGKey(r + 1)))
        best = min(best, time.perf_counter() - t0)
    return best / (moves * batch) * 1e6


def train_rollout(config: RolloutConfig, data, out_dir, *, resume: bool = False, progress: bool = True) -> RunResult:
    """Train (or resume) the rollout policy on a dataset directory; at each evaluation also time
    it (``rollout_us_per_move``). Raises ValueError as ``train_sl`` does."""
    positions.check_dataset(data, config.board_size)
    positions.check_dataset(data, config.board_size, "held_out")
    job = Job(out_dir, KIND_ROLLOUT, config, config.steps, resume=resume, keep=config.keep, progress=progress,
              desc="rollout policy")
    policy = RolloutPolicy(size=config.board_size)
    speed_rows = positions.sample_rows(data, "held_out", config.speed_batch, config.seed, positions.STATE_FIELDS)
    last = {}

    def on_eval(params, row):
        row["rollout_us_per_move"] = rollout_speed(policy, params, speed_rows, config.speed_batch)
        last.update(row)

    fit(job, config, rollout_learner(config), data, on_eval=on_eval, net_spec=config.net_spec)
    return _finish(job, last, [("loss", "held_out_loss"), ("accuracy", "held_out_accuracy")])


# --------------------------------------------------------------------- trained networks

class Trained(NamedTuple):
    """A trained network read from a run directory.

    Attributes:
      kind: the run's kind (``"sl"``, ``"rl"``, ``"rollout"``, ``"value"``).
      step: the checkpoint's step.
      net: the Flax module (``PolicyNet``, ``ValueNet``) or the ``RolloutPolicy``.
      params: its parameters (the ``"params"`` collection, or the rollout policy's dict).
      spec: the ``net`` record of the checkpoint (board size and network settings).
      path: the run directory.
    """

    kind: str
    step: int
    net: Any
    params: Any
    spec: dict
    path: Any

    @property
    def board_size(self) -> int:
        return int(self.spec["board_size"])


def load_trained(run_dir, kinds: tuple[str, ...]) -> Trained:
    """The latest network of a run of one of ``kinds`` (``"sl"``, ``"rl"``, ``"rollout"``, ``"value"``).

    Raises:
      ValueError (``CheckpointError``): no run, a run of another kind, a corrupted checkpoint;
        the message names the path.
    """
    from alphago_jax.train.checkpoint import CheckpointError

    kind, step, state, metadata = latest_state(run_dir, kinds)
    spec = metadata.get("net") or {}
    params = jax.tree_util.tree_map(jnp.asarray, state["train"]["params"])
    try:
        if kind in POLICY_KINDS:
            net = policy_net(spec)
        elif kind == "value":
            net = nets.ValueNet(filters=int(spec["filters"]), trunk_layers=int(spec["layers"]),
                                hidden=int(spec["hidden"]))
        else:
            net = RolloutPolicy(size=int(spec["board_size"]))
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{run_dir}: the checkpoint at step {step} does not describe its network ({e})") from None
    return Trained(kind, step, net, params, spec, run_dir)


__all__ = [
    "FitConfig",
    "KIND_ROLLOUT",
    "KIND_SL",
    "Learner",
    "NUM_PLANES",
    "POLICY_KINDS",
    "RolloutConfig",
    "RunResult",
    "SLConfig",
    "Trained",
    "fit",
    "held_out_metrics",
    "load_trained",
    "make_learner",
    "move_learner",
    "policy_net",
    "rollout_learner",
    "rollout_speed",
    "sl_learner",
    "train_rollout",
    "train_sl",
]
