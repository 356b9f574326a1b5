"""AlphaGo Zero's training step: fit the dual network to self-play targets.

The network ``f_theta(s) = (p, v)`` is trained on positions ``s`` with the search probabilities
``pi`` and the game outcome ``z`` as targets, minimising (Silver et al. 2017, eq. 1)::

    l = (z - v)^2  -  pi^T log p  +  c ||theta||^2

averaged over the batch (``c``: ``OptimizerConfig.l2``, 0 with AdamW's decoupled decay). A
network with KataGo's auxiliary heads (Wu 2019; ``nets.DualOutput``) is also fit to the final
ownership of each point and the final score margin::

    ownership_weight * mean over known points of (o - ownership)^2 + score_weight * huber(s - score)

A batch is a ``replay.Examples`` of B positions. ``train_step`` runs on one device, or unchanged
on a batch split over a mesh with replicated state (``train.mesh``).
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import optax

from alphago_jax.features import symmetry
from alphago_jax.train.optimizer import (OptimizerConfig, TrainState, decay_mask, l2_penalty, make_optimizer,
                                         make_schedule)
from alphago_jax.train.replay import Examples

SCORE_HUBER_DELTA = 1.0
"""Points: the score term is quadratic in errors within it, linear beyond."""


def ownership_loss(ownership: jnp.ndarray, target: jnp.ndarray) -> jnp.ndarray:
    """float32 scalar: squared error of ``ownership`` [B, N] over the known points of ``target``
    (any real dtype; +-``replay.NO_OWNER`` where unknown)."""
    target = target.astype(jnp.float32)
    known = jnp.abs(target) <= 1
    error = jnp.where(known, target - ownership.astype(jnp.float32), 0.0)
    return jnp.sum(jnp.square(error)) / jnp.maximum(jnp.sum(known), 1)


def score_loss(score: jnp.ndarray, target: jnp.ndarray) -> jnp.ndarray:
    """float32 scalar: Huber loss (``SCORE_HUBER_DELTA``) of ``score`` [B] over the finite
    targets (NaN where unknown), so that lopsided games do not dominate."""
    target = target.astype(jnp.float32)
    known = jnp.isfinite(target)
    errors = optax.huber_loss(score.astype(jnp.float32), jnp.where(known, target, 0.0), delta=SCORE_HUBER_DELTA)
    return jnp.sum(jnp.where(known, errors, 0.0)) / jnp.maximum(jnp.sum(known), 1)


def policy_metrics(logits: jnp.ndarray, target_policy: jnp.ndarray, policy_loss: jnp.ndarray) -> dict:
    """``policy_kl`` (cross entropy minus the target's entropy), ``policy_accuracy`` (argmax of
    ``p`` equals argmax of ``pi``) and ``policy_entropy`` (of ``p``), float32 scalars."""
    log_p = jax.nn.log_softmax(logits)
    # xlogy: 0 * log 0 = 0 for actions the search never visited.
    target_entropy = -jnp.mean(jnp.sum(jax.scipy.special.xlogy(target_policy, target_policy), axis=-1))
    hits = jnp.argmax(logits, axis=-1) == jnp.argmax(target_policy, axis=-1)
    return {
        "policy_kl": policy_loss - target_entropy,
        "policy_accuracy": jnp.mean(hits.astype(jnp.float32)),
        "policy_entropy": -jnp.mean(jnp.sum(jnp.exp(log_p) * log_p, axis=-1)),
    }


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
      logits: float32[B, A] policy logits; value: float32[B] predicted values in ``[-1, 1]``.
      target_policy: float32[B, A] search probabilities ``pi``; target_value: float32[B] ``z``.
      params: parameters for the L2 term (needed when ``l2 > 0``).
      l2: coefficient ``c`` of ``c * sum(theta ** 2)``; l2_mask: pytree of bools (``decay_mask``).
      value_weight: weight of the value term.
      ownership, target_ownership: the ownership term (``ownership_loss``) with ``ownership_weight``.
      score, target_score: the score term (``score_loss``) with ``score_weight``.

    Returns:
      ``(loss, metrics)``, float32 scalars: ``loss``, ``policy_loss`` (``-pi^T log p``),
      ``value_loss`` (``(z - v)^2``, unweighted), ``l2`` (the penalty added), ``value_mean``,
      ``policy_metrics``'s, and ``ownership_loss`` and ``score_loss`` (unweighted) when given.
    """
    logits, value = logits.astype(jnp.float32), value.astype(jnp.float32)
    target_policy, target_value = target_policy.astype(jnp.float32), target_value.astype(jnp.float32)
    policy_loss = jnp.mean(optax.softmax_cross_entropy(logits, target_policy))
    value_loss = jnp.mean(jnp.square(target_value - value))
    if l2 and params is None:
        raise ValueError("zero_loss: l2 > 0 needs params")
    penalty = l2_penalty(params, l2, l2_mask) if l2 else jnp.float32(0)
    loss = policy_loss + value_weight * value_loss + penalty
    aux = {}
    if ownership is not None:
        aux["ownership_loss"] = ownership_loss(ownership, target_ownership)
        loss = loss + ownership_weight * aux["ownership_loss"]
    if score is not None:
        aux["score_loss"] = score_loss(score, target_score)
        loss = loss + score_weight * aux["score_loss"]
    return loss, {
        "loss": loss,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "l2": penalty,
        **policy_metrics(logits, target_policy, policy_loss),
        "value_mean": jnp.mean(value),
        **aux,
    }


def augment_batch(key: jax.Array, batch: Examples) -> Examples:
    """``batch`` with one random board symmetry (of the 8) per example applied to ``planes``,
    ``policy`` (the pass entry stays last) and ``ownership`` if present; other fields unchanged."""
    planes, policy, ks = symmetry.augment(key, batch.planes, batch.policy)
    ownership = None if batch.ownership is None else symmetry.apply_board(batch.ownership, ks)
    return dataclasses.replace(batch, planes=planes, policy=policy, ownership=ownership)


def _aux_terms(outputs, batch: Examples, ownership_weight: float, score_weight: float) -> dict:
    """``zero_loss``'s keyword arguments for the auxiliary heads in ``outputs`` (a ``DualOutput``
    or the plain pair): a head is fit where the batch has its targets; a weight > 0 needs both."""
    terms = {}
    for name, weight in (("ownership", ownership_weight), ("score", score_weight)):
        predicted = getattr(outputs, name, None)
        target = getattr(batch, name)
        if weight and (predicted is None or target is None):
            raise ValueError(f"{name}_weight = {weight} needs a network with the {name} head and {name} targets "
                             f"in the batch (the {'network' if predicted is None else 'batch'} has none)")
        if predicted is not None and target is not None:
            terms.update({name: predicted, f"target_{name}": target, f"{name}_weight": weight})
    return terms


def loss_fn(params, batch_stats, batch: Examples, net, config: OptimizerConfig, value_weight: float = 1.0,
            ownership_weight: float = 0.0, score_weight: float = 0.0):
    """Forward pass in training mode and ``zero_loss``: ``(loss, (metrics, new_batch_stats))``,
    the shape ``jax.value_and_grad(loss_fn, has_aux=True)`` expects."""
    outputs, updates = net.apply(
        {"params": params, "batch_stats": batch_stats}, batch.planes, train=True, mutable=["batch_stats"]
    )
    loss, metrics = zero_loss(
        outputs[0], outputs[1], batch.policy, batch.value, params=params, l2=config.l2,
        l2_mask=decay_mask(config, params), value_weight=value_weight,
        **_aux_terms(outputs, batch, ownership_weight, score_weight),
    )
    return loss, (metrics, updates["batch_stats"])


@functools.partial(jax.jit, static_argnames=("net", "config", "value_weight", "ownership_weight", "score_weight"))
def train_step(
    state: TrainState,
    batch: Examples,
    net,
    config: OptimizerConfig,
    key: jax.Array | None = None,
    value_weight: float = 1.0,
    ownership_weight: float = 0.0,
    score_weight: float = 0.0,
) -> tuple[TrainState, dict[str, jnp.ndarray]]:
    """One gradient step on ``batch`` (jitted; ``net`` and ``config`` are static).

    Args:
      state: the ``TrainState``, made with ``config``.
      batch: the examples, on one device or split along the batch axis (``mesh.shard_batch``).
      net: the ``DualResNet`` (any Flax module with the same call signature).
      key: PRNG key for random symmetries (``augment_batch``); None trains on the batch as given.
      value_weight, ownership_weight, score_weight: the weights of the loss's terms (``loss_fn``).

    Returns:
      ``(new_state, metrics)``: ``zero_loss``'s metrics before the update, ``grad_norm`` (before
      clipping) and ``learning_rate`` (of this update); float32 scalars.
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


__all__ = [
    "SCORE_HUBER_DELTA",
    "augment_batch",
    "loss_fn",
    "ownership_loss",
    "policy_metrics",
    "score_loss",
    "train_step",
    "zero_loss",
]
