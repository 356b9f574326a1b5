"""The supervised step of AlphaGo Zero: fit the dual network to self-play targets.

The network ``f_theta(s) = (p, v)`` is trained on positions ``s`` from self-play with the search
probabilities ``pi`` and the game outcome ``z`` as targets, minimising (Silver et al. 2017, eq. 1)::

    l = (z - v)^2  -  pi^T log p  +  c ||theta||^2

averaged over the batch. ``zero_loss`` computes the three terms from the network's outputs;
``train_step`` runs the network (batch norm in training mode, running statistics updated), takes
the gradient and applies an optax update.

Weight decay, by optimizer kind (``OptimizerConfig.kind``):

- ``"sgd"``: the paper's L2 term ``c * sum(theta ** 2)`` (``c = weight_decay``) is added to the
  loss, so its gradient ``2 c theta`` goes through momentum (and clipping) with the rest.
- ``"adamw"``: decoupled weight decay (Loshchilov & Hutter), optax's ``adamw``: after the Adam
  direction, ``theta -= lr(t) * weight_decay * theta``; the loss has no L2 term.

A batch has three arrays, as a dict or as any dataclass pytree with these fields (such as
``replay.Examples``)::

    {"planes": [B, S, S, P] (float32, or uint8/bool planes), "policy": float32[B, S*S+1],
     "value": float32[B]}

``policy`` rows are probability distributions (search visit counts normalised), ``value`` is the
outcome ``z`` in ``[-1, 1]`` for the player to move in that position.

KataGo's auxiliary heads (Wu 2019; ``nets.DualOutput``): a network with an ownership or score head
is also fit to the batch's ``ownership`` (int8[B, S*S], the final owner of each point from the
player to move's view, +1 / -1 / 0; +-``replay.NO_OWNER`` where unknown, as in a resigned game) and
``score`` (float32[B], the final score margin in points; NaN where unknown) targets, adding to the
loss (unknown targets left out)::

    ownership_weight * mean over known points of (o - ownership)^2 + score_weight * huber(s - score)

(``ownership_loss``, ``score_loss`` in the metrics). The extra targets help the tower learn
which stones live and who is ahead from every position rather than from one bit per game.

Data parallelism: the step is one ``jax.jit`` program, so it runs unchanged on a batch sharded
over a 1-D device mesh with replicated parameters (``make_mesh``, ``shard_batch``,
``replicate``). XLA's SPMD partitioner then inserts the all-reduces itself: the loss is the mean
over the *global* batch and batch norm's statistics are taken over the global batch, so the
result is the single-device step's up to floating-point summation order::

    mesh = make_mesh()                                  # all of jax.devices()
    state = replicate(init_train_state(variables, config), mesh)
    for batch in batches:
        state, metrics = train_step(state, shard_batch(batch, mesh), net, config, key=k)

Any batched program runs so: ``data_mesh(batch)`` is the mesh for that batch size (None on one
device, or a ValueError when the batch does not divide), ``to_devices`` splits a batch over it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from typing import Any, Mapping

import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from alphago_jax.features import symmetry

DATA_AXIS = "data"
"""Name of the mesh axis that the batch is split along."""

SCORE_HUBER_DELTA = 1.0
"""Points: the score term is quadratic in errors within it, linear beyond."""

_KINDS = ("sgd", "adamw")
_SCHEDULES = ("constant", "piecewise", "cosine")


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
    """Optimizer, learning-rate schedule, weight decay and clipping (frozen, hashable).

    Attributes:
      kind: ``"sgd"`` (momentum SGD, the paper's choice) or ``"adamw"``.
      learning_rate: the initial (``constant``, ``piecewise``) or peak (``cosine``) rate.
      schedule: ``"constant"``; ``"piecewise"``: multiply the rate by ``decay_factor`` at each
        step in ``boundaries`` (AlphaGo Zero: 1e-2, 1e-3 from 400k, 1e-4 from 600k steps); or
        ``"cosine"``: linear warm-up over ``warmup_steps`` from 0 to ``learning_rate``, then
        cosine decay to ``learning_rate * final_fraction`` at ``total_steps``.
      boundaries: strictly increasing positive steps (``piecewise`` only).
      decay_factor: multiplier applied at each boundary, in ``(0, 1]`` (``piecewise``).
      total_steps: length of the ``cosine`` schedule, warm-up included.
      warmup_steps: warm-up steps of the ``cosine`` schedule (0 for none).
      final_fraction: final rate over peak rate, in ``[0, 1]`` (``cosine``).
      momentum: SGD momentum in ``[0, 1)`` (0.9 in the paper; 0 is plain SGD).
      nesterov: Nesterov momentum (SGD and AdamW).
      weight_decay: ``c >= 0``: L2 coefficient in the loss (``sgd``) or decoupled decay
        (``adamw``); see the module docstring. The paper uses 1e-4 with SGD.
      decay_kernels_only: decay only the ``kernel`` leaves (weights of convolutions and dense
        layers), not biases and batch-norm scales/offsets. ``False`` (the paper's ``||theta||^2``
        over all parameters) decays every parameter.
      b1, b2, eps: Adam's moment decays and epsilon (``adamw`` only).
      max_grad_norm: clip the gradient to this global norm before the update; ``None`` for no
        clipping.
    """

    kind: str = "sgd"
    learning_rate: float = 1e-2
    schedule: str = "constant"
    boundaries: tuple[int, ...] = ()
    decay_factor: float = 0.1
    total_steps: int = 0
    warmup_steps: int = 0
    final_fraction: float = 0.0
    momentum: float = 0.9
    nesterov: bool = False
    weight_decay: float = 1e-4
    decay_kernels_only: bool = False
    b1: float = 0.9
    b2: float = 0.999
    eps: float = 1e-8
    max_grad_norm: float | None = None

    def __post_init__(self):
        # Tuples keep the config hashable (jit takes it as a static argument).
        object.__setattr__(self, "boundaries", tuple(self.boundaries))

        def bad(field, why):
            raise ValueError(f"OptimizerConfig.{field} {why}, got {getattr(self, field)!r}")

        def finite(x):
            return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)

        if self.kind not in _KINDS:
            bad("kind", f"must be one of {_KINDS}")
        if self.schedule not in _SCHEDULES:
            bad("schedule", f"must be one of {_SCHEDULES}")
        if not finite(self.learning_rate) or self.learning_rate <= 0:
            bad("learning_rate", "must be a finite number > 0")
        if self.schedule == "piecewise":
            b = self.boundaries
            if not b or any(not isinstance(x, (int, np.integer)) or x <= 0 for x in b):
                bad("boundaries", "must be a non-empty tuple of positive int steps for schedule='piecewise'")
            if any(x >= y for x, y in zip(b, b[1:])):
                bad("boundaries", "must be strictly increasing")
            if not finite(self.decay_factor) or not 0 < self.decay_factor <= 1:
                bad("decay_factor", "must be in (0, 1]")
        elif self.boundaries:
            bad("boundaries", "is only used with schedule='piecewise'")
        if self.schedule == "cosine":
            if not isinstance(self.total_steps, int) or self.total_steps <= 0:
                bad("total_steps", "must be a positive int for schedule='cosine'")
            if not isinstance(self.warmup_steps, int) or not 0 <= self.warmup_steps < self.total_steps:
                bad("warmup_steps", "must be an int in [0, total_steps) for schedule='cosine'")
            if not finite(self.final_fraction) or not 0 <= self.final_fraction <= 1:
                bad("final_fraction", "must be in [0, 1]")
        elif self.warmup_steps:
            bad("warmup_steps", "is only used with schedule='cosine'")
        if not finite(self.momentum) or not 0 <= self.momentum < 1:
            bad("momentum", "must be in [0, 1)")
        if not finite(self.weight_decay) or self.weight_decay < 0:
            bad("weight_decay", "must be a finite number >= 0")
        for field in ("b1", "b2"):
            if not finite(getattr(self, field)) or not 0 <= getattr(self, field) < 1:
                bad(field, "must be in [0, 1)")
        if not finite(self.eps) or self.eps <= 0:
            bad("eps", "must be > 0")
        if self.max_grad_norm is not None and (not finite(self.max_grad_norm) or self.max_grad_norm <= 0):
            bad("max_grad_norm", "must be None or a finite number > 0")

    @property
    def l2(self) -> float:
        """Coefficient ``c`` of the L2 term in the loss: ``weight_decay`` for SGD, 0 for AdamW."""
        return self.weight_decay if self.kind == "sgd" else 0.0

    @classmethod
    def alphago_zero(cls, scale: float = 1.0) -> "OptimizerConfig":
        """The paper's optimizer: SGD, momentum 0.9, ``c = 1e-4``, rate 1e-2 -> 1e-3 at 400k
        steps -> 1e-4 at 600k steps. ``scale`` shrinks the step boundaries for short runs."""
        boundaries = tuple(max(1, int(round(b * scale))) for b in (400_000, 600_000))
        return cls(kind="sgd", learning_rate=1e-2, schedule="piecewise", boundaries=boundaries,
                   decay_factor=0.1, momentum=0.9, weight_decay=1e-4)


def make_schedule(config: OptimizerConfig) -> optax.Schedule:
    """The learning rate as a function of the update count (an optax schedule)."""
    if config.schedule == "constant":
        return optax.constant_schedule(config.learning_rate)
    if config.schedule == "piecewise":
        return optax.piecewise_constant_schedule(
            config.learning_rate, {b: config.decay_factor for b in config.boundaries}
        )
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0 if config.warmup_steps else config.learning_rate,
        peak_value=config.learning_rate,
        warmup_steps=config.warmup_steps,
        decay_steps=config.total_steps,
        end_value=config.learning_rate * config.final_fraction,
    )


def decay_mask(config: OptimizerConfig, params) -> Any:
    """Pytree of bools like ``params``: which leaves weight decay applies to."""
    if not config.decay_kernels_only:
        return jax.tree_util.tree_map(lambda _: True, params)
    return jax.tree_util.tree_map_with_path(
        lambda path, _: getattr(path[-1], "key", None) == "kernel", params
    )


def make_optimizer(config: OptimizerConfig) -> optax.GradientTransformation:
    """The optax transformation for ``config`` (clipping first, when configured).

    For ``sgd`` the transformation does no weight decay: the L2 term is in the loss
    (``config.l2``). For ``adamw`` it applies the decoupled decay itself.
    """
    schedule = make_schedule(config)
    if config.kind == "sgd":
        base = optax.sgd(schedule, momentum=config.momentum or None, nesterov=config.nesterov)
    else:
        base = optax.adamw(
            schedule, b1=config.b1, b2=config.b2, eps=config.eps, weight_decay=config.weight_decay,
            mask=functools.partial(decay_mask, config), nesterov=config.nesterov,
        )
    if config.max_grad_norm is None:
        return base
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), base)


@flax.struct.dataclass
class TrainState:
    """Everything a training step reads and writes.

    Attributes:
      params: the network's ``"params"`` collection (float32 leaves).
      batch_stats: its ``"batch_stats"`` collection (batch norm's running statistics).
      opt_state: the optax state of ``make_optimizer(config)``.
      step: int32 scalar, updates applied so far.
    """

    params: Any
    batch_stats: Any
    opt_state: Any
    step: jnp.ndarray

    @property
    def variables(self) -> dict:
        """``{"params", "batch_stats"}``, ready for ``net.apply`` (e.g. in search)."""
        return {"params": self.params, "batch_stats": self.batch_stats}


def init_train_state(variables: Mapping[str, Any], config: OptimizerConfig) -> TrainState:
    """A ``TrainState`` at step 0 from a network's variables (``nets.init_variables``)."""
    params = variables["params"]
    return TrainState(
        params=params,
        batch_stats=variables.get("batch_stats", {}),
        opt_state=make_optimizer(config).init(params),
        step=jnp.zeros((), jnp.int32),
    )


def l2_penalty(params, coefficient: float, mask=None) -> jnp.ndarray:
    """float32 scalar ``coefficient * sum(theta ** 2)`` over the leaves where ``mask`` is True."""
    leaves = jax.tree_util.tree_leaves(params)
    keep = [True] * len(leaves) if mask is None else jax.tree_util.tree_leaves(mask)
    total = sum((jnp.sum(jnp.square(x.astype(jnp.float32))) for x, k in zip(leaves, keep) if k), jnp.float32(0))
    return jnp.float32(coefficient) * total


def zero_loss(
    logits: jnp.ndarray,
    value: jnp.ndarray,
    target_policy: jnp.ndarray,
    target_value: jnp.ndarray,
    *,
    params=None,
    l2: float = 0.0,
    l2_mask=None,
    value_weight: float = 1.0,
    ownership: jnp.ndarray | None = None,
    target_ownership: jnp.ndarray | None = None,
    ownership_weight: float = 0.0,
    score: jnp.ndarray | None = None,
    target_score: jnp.ndarray | None = None,
    score_weight: float = 0.0,
) -> tuple[jnp.ndarray, dict[str, jnp.ndarray]]:
    """AlphaGo Zero's loss from the network's outputs, averaged over the batch.

    Args:
      logits: float32[B, A] policy logits.
      value: float32[B] predicted values in ``[-1, 1]``.
      target_policy: float32[B, A] search probabilities ``pi`` (rows sum to 1).
      target_value: float32[B] outcomes ``z`` in ``[-1, 1]``.
      params: parameters for the L2 term (needed when ``l2 > 0``).
      l2: coefficient ``c`` of ``c * sum(theta ** 2)``.
      l2_mask: optional pytree of bools like ``params`` (``decay_mask``).
      value_weight: weight of the value term (1 in AlphaGo Zero's self-play training; its
        supervised comparison used 0.01).
      ownership, target_ownership: float32[B, N] predicted ownership in ``[-1, 1]`` and the
        target (any real dtype, e.g. int8 in {-1, 0, 1}; +-2, ``replay.NO_OWNER``, where unknown),
        or None: the ownership term, the squared error averaged over the known points of the
        batch, weighted by ``ownership_weight``.
      score, target_score: float32[B] predicted and final score margins in points (NaN where
        unknown), or None: the score term, a Huber loss (quadratic within ``SCORE_HUBER_DELTA``
        points, linear beyond, so that lopsided games do not dominate) averaged over the known
        targets, weighted by ``score_weight``.

    Returns:
      ``(loss, metrics)``: float32 scalars. ``metrics``: ``loss``, ``policy_loss`` (cross
      entropy ``-pi^T log p``), ``value_loss`` (``(z - v)^2``, unweighted), ``l2`` (the
      penalty added), ``policy_kl`` (cross entropy minus the target's entropy: 0 at a perfect
      fit), ``policy_accuracy`` (argmax of ``p`` equals argmax of ``pi``), ``policy_entropy``
      (of ``p``), ``value_mean``; ``ownership_loss`` and ``score_loss`` (unweighted) when
      those terms are given.
    """
    logits = logits.astype(jnp.float32)
    value = value.astype(jnp.float32)
    target_policy = target_policy.astype(jnp.float32)
    target_value = target_value.astype(jnp.float32)

    policy_loss = jnp.mean(optax.softmax_cross_entropy(logits, target_policy))
    value_loss = jnp.mean(jnp.square(target_value - value))
    if l2:
        if params is None:
            raise ValueError("zero_loss: l2 > 0 needs params")
        penalty = l2_penalty(params, l2, l2_mask)
    else:
        penalty = jnp.float32(0)
    loss = policy_loss + value_weight * value_loss + penalty
    aux = {}
    if ownership is not None:  # targets of +-replay.NO_OWNER are unknown: left out
        target = target_ownership.astype(jnp.float32)
        known = jnp.abs(target) <= 1
        error = jnp.where(known, target - ownership.astype(jnp.float32), 0.0)
        aux["ownership_loss"] = jnp.sum(jnp.square(error)) / jnp.maximum(jnp.sum(known), 1)
        loss = loss + ownership_weight * aux["ownership_loss"]
    if score is not None:  # NaN targets are unknown: left out
        target = target_score.astype(jnp.float32)
        known = jnp.isfinite(target)
        errors = optax.huber_loss(score.astype(jnp.float32), jnp.where(known, target, 0.0), delta=SCORE_HUBER_DELTA)
        aux["score_loss"] = jnp.sum(jnp.where(known, errors, 0.0)) / jnp.maximum(jnp.sum(known), 1)
        loss = loss + score_weight * aux["score_loss"]

    log_p = jax.nn.log_softmax(logits)
    # xlogy: 0 * log 0 = 0 for actions the search never visited.
    target_entropy = -jnp.mean(jnp.sum(jax.scipy.special.xlogy(target_policy, target_policy), axis=-1))
    metrics = {
        "loss": loss,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "l2": penalty,
        "policy_kl": policy_loss - target_entropy,
        "policy_accuracy": jnp.mean(
            (jnp.argmax(logits, axis=-1) == jnp.argmax(target_policy, axis=-1)).astype(jnp.float32)
        ),
        "policy_entropy": -jnp.mean(jnp.sum(jnp.exp(log_p) * log_p, axis=-1)),
        "value_mean": jnp.mean(value),
        **aux,
    }
    return loss, metrics


def _field(batch, name: str) -> jnp.ndarray:
    return batch[name] if isinstance(batch, Mapping) else getattr(batch, name)


def _optional(batch, name: str) -> jnp.ndarray | None:
    return batch.get(name) if isinstance(batch, Mapping) else getattr(batch, name, None)


def _replace(batch, **fields):
    return {**batch, **fields} if isinstance(batch, Mapping) else dataclasses.replace(batch, **fields)


def augment_batch(key: jax.Array, batch):
    """One independent random board symmetry per example (of the 8 dihedral maps).

    ``planes`` [B, S, S, P], ``policy`` [B, S*S+1] and, where the batch has it, ``ownership``
    [B, S*S] are mapped by the same symmetry; the pass entry of ``policy`` stays last; ``value``
    (and any other entry) is unchanged. Returns a batch of the same kind (dict or dataclass),
    shapes and dtypes.
    """
    planes, policy, ks = symmetry.augment(key, _field(batch, "planes"), _field(batch, "policy"))
    mapped = {"planes": planes, "policy": policy}
    ownership = _optional(batch, "ownership")
    if ownership is not None:
        mapped["ownership"] = symmetry.apply_board(ownership, ks)
    return _replace(batch, **mapped)


def _aux_terms(outputs, batch, ownership_weight: float, score_weight: float) -> dict:
    """``zero_loss``'s keyword arguments for the auxiliary heads in ``outputs`` (a ``DualOutput``
    or the plain pair). A head is fit where the batch has its target; a weight > 0 needs both."""
    terms = {}
    for name, weight in (("ownership", ownership_weight), ("score", score_weight)):
        predicted = getattr(outputs, name, None)
        target = _optional(batch, name)
        if weight and (predicted is None or target is None):
            raise ValueError(f"{name}_weight = {weight} needs a network with the {name} head and {name} targets "
                             f"in the batch (the {'network' if predicted is None else 'batch'} has none)")
        if predicted is not None and target is not None:
            terms.update({name: predicted, f"target_{name}": target, f"{name}_weight": weight})
    return terms


def loss_fn(params, batch_stats, batch, net, config: OptimizerConfig, value_weight: float = 1.0,
            ownership_weight: float = 0.0, score_weight: float = 0.0):
    """Forward pass in training mode and ``zero_loss``: ``(loss, (metrics, new_batch_stats))``.

    The shape ``jax.value_and_grad(loss_fn, has_aux=True)`` expects. The auxiliary heads
    (``_aux_terms``) are fit with weights ``ownership_weight`` and ``score_weight``: a head whose
    targets the batch lacks (e.g. a warm start from game records) is left out at weight 0.
    """
    outputs, updates = net.apply(
        {"params": params, "batch_stats": batch_stats}, _field(batch, "planes"), train=True, mutable=["batch_stats"]
    )
    logits, value = outputs[0], outputs[1]
    loss, metrics = zero_loss(
        logits, value, _field(batch, "policy"), _field(batch, "value"), params=params, l2=config.l2,
        l2_mask=decay_mask(config, params), value_weight=value_weight,
        **_aux_terms(outputs, batch, ownership_weight, score_weight),
    )
    return loss, (metrics, updates["batch_stats"])


@functools.partial(jax.jit, static_argnames=("net", "config", "value_weight", "ownership_weight", "score_weight"))
def train_step(
    state: TrainState,
    batch,
    net,
    config: OptimizerConfig,
    key: jax.Array | None = None,
    value_weight: float = 1.0,
    ownership_weight: float = 0.0,
    score_weight: float = 0.0,
) -> tuple[TrainState, dict[str, jnp.ndarray]]:
    """One gradient step on ``batch`` (jitted; ``net`` and ``config`` are static).

    Args:
      state: the current ``TrainState``.
      batch: planes [B, S, S, P], policy float32[B, S*S+1], value float32[B] (a dict or a
        dataclass such as ``replay.Examples``; see the module docstring), on one device or
        sharded along the batch axis (``shard_batch``).
      net: the ``DualResNet`` (any Flax module with the same call signature).
      config: the ``OptimizerConfig`` that ``state.opt_state`` was made with.
      key: PRNG key for random symmetry augmentation (``augment_batch``); ``None`` trains on
        the batch as given.
      value_weight: weight of the value term of the loss.
      ownership_weight, score_weight: weights of the auxiliary heads' terms (``loss_fn``); the
        batch then also has ``ownership`` and ``score`` (see the module docstring).

    Returns:
      ``(new_state, metrics)``: the metrics of ``zero_loss`` for the parameters *before* the
      update, plus ``grad_norm`` (global norm of the loss gradient, before clipping) and
      ``learning_rate`` (the rate this update used); float32 scalars.
    """
    if key is not None:
        batch = augment_batch(key, batch)
    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
    (_, (metrics, batch_stats)), grads = grad_fn(state.params, state.batch_stats, batch, net, config, value_weight,
                                                 ownership_weight, score_weight)
    updates, opt_state = make_optimizer(config).update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    metrics = {
        **metrics,
        "grad_norm": jnp.sqrt(l2_penalty(grads, 1.0)),
        "learning_rate": jnp.asarray(make_schedule(config)(state.step), jnp.float32),
    }
    new_state = TrainState(params=params, batch_stats=batch_stats, opt_state=opt_state, step=state.step + 1)
    return new_state, metrics


def make_mesh(devices=None) -> Mesh:
    """A 1-D mesh with axis ``DATA_AXIS`` over ``devices`` (default: all of ``jax.devices()``)."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), (DATA_AXIS,))


def replicate(tree, mesh: Mesh):
    """Put every leaf of ``tree`` (a ``TrainState``, variables) whole on every device of ``mesh``."""
    return jax.device_put(tree, NamedSharding(mesh, PartitionSpec()))


def shard_batch(batch, mesh: Mesh):
    """Split every leaf of ``batch`` along axis 0 over the devices of ``mesh``.

    Raises ValueError unless the batch size is a multiple of the number of devices.
    """
    n = mesh.devices.size
    for leaf in jax.tree_util.tree_leaves(batch):
        if np.shape(leaf)[0] % n:
            raise ValueError(f"shard_batch: batch size {np.shape(leaf)[0]} is not a multiple of {n} devices")
    return jax.device_put(batch, NamedSharding(mesh, PartitionSpec(DATA_AXIS)))


def data_mesh(batch: int, name: str = "batch") -> Mesh | None:
    """The 1-D mesh of all of ``jax.devices()`` that batches of ``batch`` rows are split over,
    or None on one device (nothing to split).

    Raises:
      ValueError: ``batch`` is not a multiple of the device count (the message names ``name``).
    """
    n = jax.device_count()
    if n == 1:
        return None
    if batch % n:
        raise ValueError(f"{name} = {batch} must be a multiple of the {n} devices each batch is split over "
                         f"(data parallel), e.g. {max(n, batch // n * n)}")
    return make_mesh()


def to_devices(tree, mesh: Mesh | None):
    """``tree`` (numpy or jax leaves with leading axis B) split along B over ``mesh``
    (``shard_batch``); unchanged when ``mesh`` is None."""
    return tree if mesh is None else shard_batch(tree, mesh)


__all__ = [
    "DATA_AXIS",
    "SCORE_HUBER_DELTA",
    "OptimizerConfig",
    "TrainState",
    "augment_batch",
    "data_mesh",
    "decay_mask",
    "init_train_state",
    "l2_penalty",
    "loss_fn",
    "make_mesh",
    "make_optimizer",
    "make_schedule",
    "replicate",
    "shard_batch",
    "to_devices",
    "train_step",
    "zero_loss",
]
