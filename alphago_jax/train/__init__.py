"""AlphaGo Zero training: the learner step, the replay buffer, checkpoints, match statistics, logs.

- ``learner``: ``OptimizerConfig`` (SGD with momentum or AdamW, schedules, weight decay),
  ``TrainState``, ``zero_loss`` (policy cross-entropy + value MSE + L2), the jitted
  ``train_step`` with optional symmetry augmentation, and data parallelism over all devices
  (``make_mesh``, ``replicate``, ``shard_batch``).

- ``replay``: ``ReplayBuffer``, a fixed-capacity circular buffer of ``Examples`` (planes,
  visit policy, outcome; ``AuxReplayBuffer``: also the final ownership and score margin, the
  targets of KataGo's auxiliary heads) as a pytree, with pure, jit-able ``replay_init``,
  ``replay_add`` and ``replay_sample``.
- ``checkpoint``: ``Checkpointer``, atomic orbax checkpoints of a run's whole state (params,
  optax state, replay buffer, RNG key, step) plus JSON metadata; keeps the last K and raises
  ``CheckpointError`` on corrupted or foreign directories.
- ``evaluation``: win rates with Wilson intervals and Elo differences (``MatchResult``,
  ``format_table``).
- ``metrics``: ``RunLogger`` (CSV, optionally TensorBoard) and ``plot_metrics`` (PNG curves).
- ``selfplay``: the jitted game loops: batched self-play into the replay buffer (``SelfPlay``,
  ``selfplay_move``, ``selfplay``) and matches with colours alternating (``play_match``).
- ``external_eval``: matches of the network's search against GNU Go processes, all games in
  lockstep, finished by GNU Go's cleanup phase and scored by area (``GnuGoMatch``).
- ``zero``: AlphaGo Zero's main job (``ZeroConfig``, ``PRESETS``, ``train``): self-play,
  training, evaluation, checkpoints that survive a kill, data parallel over all devices; the
  ``alphago-jax train`` command. Import it as ``from alphago_jax.train import zero``.

Layer: training sits at the end of the data flow (games -> features -> nets -> search ->
train); ``selfplay`` and ``zero`` also use ``games``, ``search`` and ``sgf``, ``external_eval``
the GTP client below ``play`` (``alphago_jax.gtp_client``), the other modules only ``features``
and ``nets``.
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
