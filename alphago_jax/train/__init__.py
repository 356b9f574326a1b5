"""Training machinery both pipelines share (``alphago`` and ``zero``, above this layer).

- ``optimizer``: ``OptimizerConfig`` (schedules, weight decay, clipping) and ``TrainState``;
- ``mesh``: data parallelism, a batch split over a 1-D mesh of devices;
- ``replay``: the replay buffer of ``Examples``, a pytree with jit-able add and sample;
- ``checkpoint``: atomic orbax checkpoints of a run's whole state (``Checkpointer``);
- ``jobs``: resumable jobs in a run directory (``Job``, ``JobConfig``);
- ``evaluation``: win rates, Wilson intervals and Elo differences (``MatchResult``);
- ``metrics``: the metrics log (``RunLogger``) and its curves (``plot_metrics``);
- ``timing``: where a job's wall time goes (``PhaseTimer``) and time budgets (``TimeBudget``).
"""

from alphago_jax.train.checkpoint import Checkpointer, CheckpointError, Restored
from alphago_jax.train.evaluation import MatchResult, elo_difference, format_table, wilson_interval, win_rate
from alphago_jax.train.mesh import DATA_AXIS, data_mesh, make_mesh, replicate, shard_batch, to_devices
from alphago_jax.train.metrics import RunLogger, plot_metrics, read_metrics
from alphago_jax.train.optimizer import OptimizerConfig, TrainState, init_train_state, make_optimizer
from alphago_jax.train.replay import AuxReplayBuffer, Examples, ReplayBuffer, replay_add, replay_init, replay_sample

__all__ = [
    "DATA_AXIS",
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
    "data_mesh",
    "elo_difference",
    "format_table",
    "init_train_state",
    "make_mesh",
    "make_optimizer",
    "plot_metrics",
    "read_metrics",
    "replay_add",
    "replay_init",
    "replay_sample",
    "replicate",
    "shard_batch",
    "to_devices",
    "wilson_interval",
    "win_rate",
]
