"""Training: the machinery both pipelines share, and AlphaGo Zero's pipeline.

The shared machinery (used by AlphaGo Zero here and by AlphaGo 2016, ``alphago_jax.alphago``):

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

AlphaGo Zero, from self-play (and optionally game records) to a network file:

- ``selfplay``: the jitted game loops: batched self-play into the replay buffer (``SelfPlay``,
  ``selfplay_move``, ``selfplay``) and matches with colours alternating (``play_match``).
- ``external_eval``: matches of the network's search against GNU Go processes, all games in
  lockstep, finished by GNU Go's cleanup phase and scored by area (``GnuGoMatch``).
- ``warm_start``: the network fit to game records (``sgf.iter_records``) before self-play, for
  ``alphago-jax train --init``.
- ``zero``: AlphaGo Zero's main job (``ZeroConfig``, ``PRESETS``, ``train``): self-play,
  training, evaluation, checkpoints that survive a kill, data parallel over all devices; the
  ``alphago-jax train`` command.

Layer: above ``search``. The shared modules import only ``features`` (the symmetries) and
``files``, never a pipeline. AlphaGo Zero's modules also use ``games``, ``nets``, ``search``,
``sgf`` and the GTP client (``alphago_jax.gtp_client``). The two pipelines never import each
other; ``play`` and ``cli`` sit above both (the order is checked by ``tests/test_imports.py``).
This package imports the shared modules' names only; import the others as modules
(``from alphago_jax.train import zero``).
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
