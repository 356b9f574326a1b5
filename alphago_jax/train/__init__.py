"""Training: the machinery both pipelines share.

Used by AlphaGo Zero (``alphago_jax.zero``) and by AlphaGo 2016 (``alphago_jax.alphago``):

- ``learner``: ``OptimizerConfig`` (SGD with momentum or AdamW, schedules, weight decay),
  ``TrainState``, ``zero_loss`` (policy cross-entropy + value MSE + L2), the jitted
  ``train_step`` with optional symmetry augmentation, and data parallelism over all devices
  (``make_mesh``, ``replicate``, ``shard_batch``; ``data_mesh`` and ``to_devices`` for any
  batched program).
- ``replay``: ``ReplayBuffer``, a fixed-capacity circular buffer of ``Examples`` (planes,
  visit policy, outcome; ``AuxReplayBuffer``: also the final ownership and score margin, the
  targets of KataGo's auxiliary heads) as a pytree, with pure, jit-able ``replay_init``,
  ``replay_add`` and ``replay_sample``.
- ``checkpoint``: ``Checkpointer``, atomic orbax checkpoints of a run's whole state (params,
  optax state, replay buffer, RNG key, step) plus JSON metadata; keeps the last K and raises
  ``CheckpointError`` on corrupted or foreign directories.
- ``jobs``: resumable jobs in a run directory (``Job``: checkpoints, ``metrics.csv``, curves;
  ``JobConfig``: settings saved with every checkpoint, ``--set NAME=VALUE`` overrides).
- ``evaluation``: win rates with Wilson intervals and Elo differences (``MatchResult``,
  ``format_table``).
- ``metrics``: ``RunLogger`` (CSV, optionally TensorBoard) and ``plot_metrics`` (PNG curves).
- ``timing``: where a job's wall time goes (``PhaseTimer``: phases and first-run compile
  times) and a hard time budget on a clock that tests can drive (``TimeBudget``, ``Clock``).

Layer: above ``search``; below the two pipelines, which import it and never the other way
round. These modules import only ``features`` (the symmetries) and ``files`` of the package (the
order is checked by ``tests/test_imports.py``).
"""

from alphago_jax.train.checkpoint import Checkpointer, CheckpointError, Restored
from alphago_jax.train.evaluation import MatchResult, elo_difference, format_table, wilson_interval, win_rate
from alphago_jax.train.learner import (
    OptimizerConfig,
    TrainState,
    init_train_state,
    make_mesh,
    make_optimizer,
    replicate,
    shard_batch,
    train_step,
    zero_loss,
)
from alphago_jax.train.metrics import RunLogger, plot_metrics, read_metrics
from alphago_jax.train.replay import AuxReplayBuffer, Examples, ReplayBuffer, replay_add, replay_init, replay_sample

__all__ = [
    "AuxReplayBuffer",
    "CheckpointError",
    "Checkpointer",
    "Examples",
    "MatchResult",
    "OptimizerConfig",
    "ReplayBuffer",
    "Restored",
    "RunLogger",
    "TrainState",
    "elo_difference",
    "format_table",
    "init_train_state",
    "make_mesh",
    "make_optimizer",
    "plot_metrics",
    "read_metrics",
    "replicate",
    "shard_batch",
    "train_step",
    "wilson_interval",
    "win_rate",
    "zero_loss",
    "replay_add",
    "replay_init",
    "replay_sample",
]
