"""The optimizer of a training step: settings, learning-rate schedules, weight decay, the state.

Weight decay, by optimizer kind (``OptimizerConfig.kind``):

- ``"sgd"``: an L2 term ``c * sum(theta ** 2)`` (``c = weight_decay``, ``OptimizerConfig.l2``)
  belongs in the loss, so its gradient ``2 c theta`` goes through momentum (and clipping) with
  the rest (AlphaGo Zero, Silver et al. 2017).
- ``"adamw"``: decoupled weight decay (Loshchilov & Hutter 2019), optax's ``adamw``: after the
  Adam direction, ``theta -= lr(t) * weight_decay * theta``; the loss has no L2 term.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping

import flax.struct
import jax
import jax.numpy as jnp
import optax

from alphago_jax import checks

KINDS = ("sgd", "adamw")
SCHEDULES = ("constant", "piecewise", "cosine")


@dataclasses.dataclass(frozen=True)
class OptimizerConfig:
    """Optimizer, learning-rate schedule, weight decay and clipping (frozen, hashable).

    Attributes:
      kind: ``"sgd"`` (momentum SGD) or ``"adamw"``.
      learning_rate: the initial (``constant``, ``piecewise``) or peak (``cosine``) rate.
      schedule: ``"constant"``; ``"piecewise"`` (times ``decay_factor`` at each of ``boundaries``);
        ``"cosine"`` (linear warm-up to ``learning_rate``, cosine decay to ``final_fraction`` of it).
      boundaries: ``piecewise``: strictly increasing positive steps.
      decay_factor: ``piecewise``: multiplier at each boundary, in ``(0, 1]``.
      total_steps: ``cosine``: the schedule's length, warm-up included.
      warmup_steps: ``cosine``: warm-up steps (0 for none).
      final_fraction: ``cosine``: final rate over peak rate, in ``[0, 1]``.
      momentum: SGD momentum in ``[0, 1)`` (0: plain SGD).
      nesterov: Nesterov momentum (SGD and AdamW).
      weight_decay: ``c >= 0``: L2 coefficient in the loss (``sgd``) or decoupled decay (``adamw``).
      decay_kernels_only: decay only the ``kernel`` leaves, not biases and batch-norm parameters.
      b1, b2, eps: ``adamw``: Adam's moment decays and epsilon.
      max_grad_norm: clip the gradient to this global norm before the update (None: no clipping).
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
        checks.choice(self, "kind", KINDS)
        checks.choice(self, "schedule", SCHEDULES)
        checks.number(self, "learning_rate", "> 0")
        if self.schedule == "piecewise":
            self._check_piecewise()
        else:
            checks.require(self, "boundaries", not self.boundaries, "is only used with schedule='piecewise'")
        if self.schedule == "cosine":
            self._check_cosine()
        else:
            checks.require(self, "warmup_steps", not self.warmup_steps, "is only used with schedule='cosine'")
        checks.number(self, "momentum", "[0, 1)")
        checks.number(self, "weight_decay", ">= 0")
        checks.number(self, "b1", "[0, 1)")
        checks.number(self, "b2", "[0, 1)")
        checks.number(self, "eps", "> 0")
        checks.number(self, "max_grad_norm", "> 0", none="no clipping")

    def _check_piecewise(self) -> None:
        b = self.boundaries
        checks.require(self, "boundaries", b and all(checks.is_int(x) and x > 0 for x in b),
                       "must be a non-empty tuple of positive int steps for schedule='piecewise'")
        checks.require(self, "boundaries", all(x < y for x, y in zip(b, b[1:])), "must be strictly increasing")
        checks.number(self, "decay_factor", "(0, 1]")

    def _check_cosine(self) -> None:
        checks.require(self, "total_steps", checks.is_int(self.total_steps) and self.total_steps > 0,
                       "must be a positive int for schedule='cosine'")
        checks.require(self, "warmup_steps", checks.is_int(self.warmup_steps)
                       and 0 <= self.warmup_steps < self.total_steps,
                       "must be an int in [0, total_steps) for schedule='cosine'")
        checks.number(self, "final_fraction", "[0, 1]")

    @property
    def l2(self) -> float:
        """Coefficient ``c`` of the L2 term in the loss: ``weight_decay`` for SGD, 0 for AdamW."""
        return self.weight_decay if self.kind == "sgd" else 0.0

    @classmethod
    def alphago_zero(cls, scale: float = 1.0) -> "OptimizerConfig":
        """AlphaGo Zero's optimizer: SGD, momentum 0.9, ``c = 1e-4``, rate 1e-2, 1e-3 from 400k
        steps, 1e-4 from 600k; ``scale`` shrinks the boundaries for short runs."""
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
    """The optax transformation for ``config``, clipping first when configured; for ``sgd`` it
    has no weight decay (the L2 term, ``config.l2``, is the loss's), for ``adamw`` it decays."""
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


def l2_penalty(params, coefficient: float, mask=None) -> jnp.ndarray:
    """float32 scalar ``coefficient * sum(theta ** 2)`` over the leaves where ``mask`` is True."""
    leaves = jax.tree_util.tree_leaves(params)
    keep = [True] * len(leaves) if mask is None else jax.tree_util.tree_leaves(mask)
    total = sum((jnp.sum(jnp.square(x.astype(jnp.float32))) for x, k in zip(leaves, keep) if k), jnp.float32(0))
    return jnp.float32(coefficient) * total


@flax.struct.dataclass
class TrainState:
    """Everything a training step reads and writes.

    Attributes:
      params: the network's ``"params"`` collection.
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
        """``{"params", "batch_stats"}``, ready for ``net.apply``."""
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


__all__ = [
    "KINDS",
    "SCHEDULES",
    "OptimizerConfig",
    "TrainState",
    "decay_mask",
    "init_train_state",
    "l2_penalty",
    "make_optimizer",
    "make_schedule",
]
