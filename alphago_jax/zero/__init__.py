"""AlphaGo Zero (Silver et al. 2017): its training pipeline, from self-play to a network file.

One iteration: self-play (search, rules and network in one jitted scan) fills the replay buffer,
the learner trains on samples of it, the evaluation plays matches and a checkpoint saves the
whole ``RunState``; ``alphago-jax export`` turns a run into one network file for the players.

- ``config``: ``ZeroConfig``, the presets (``PRESETS``: ``tiny``, ``smoke``, ``9x9``,
  ``19x19``; their sizing: docs/benchmarks.md) and ``--set`` overrides (``with_overrides``);
- ``programs``: the run state (``RunState``) and the jitted programs of one config on one device
  mesh (``build``): self-play iterations, training steps and the evaluation matches;
- ``evaluate``: the evaluation phase: matches against random play, pure MCTS, the best network
  and GNU Go;
- ``learner``: the Zero loss and the training step (symmetry augmentation, optax update);
- ``loop``: the main job (``train``): self-play, training, evaluation, checkpoints that survive a
  kill, the phase timing and the time limit; the ``alphago-jax train`` command;
- ``runs``: a run directory read back: its networks (``network_of_run``, ``export_network``,
  ``init_network``) and curves (``plot_run``);
- ``selfplay``: the game loops: batched self-play into the replay buffer and matches with
  colours alternating (``play_match``);
- ``external_eval``: matches of the network's search against GNU Go processes (``GnuGoMatch``);
- ``warm_start``: the network fit to game records before self-play (``alphago-jax train --init``).

Layer: beside the AlphaGo 2016 pipeline (``alphago_jax.alphago``), neither importing the other;
above ``train``; below ``play`` and ``cli``. Use: ``zero.train(zero.PRESETS["9x9"], "runs/9x9")``.
"""

from alphago_jax.zero.config import DEFAULT_PRESET, KIND, PRESETS, ZeroConfig, saved_config, with_overrides
from alphago_jax.zero.loop import RunResult, initialize_distributed, restore_state, train
from alphago_jax.zero.programs import Programs, RunState, build, num_workers, replicated, to_host, train_iteration
from alphago_jax.zero.runs import (
    PLOT_PANELS,
    WARM_START_FILE,
    export_network,
    init_network,
    network_chain,
    network_of_run,
    plot_run,
)
from alphago_jax.zero.selfplay import STAT_NAMES

__all__ = [
    "DEFAULT_PRESET",
    "KIND",
    "PLOT_PANELS",
    "PRESETS",
    "Programs",
    "RunResult",
    "RunState",
    "STAT_NAMES",
    "WARM_START_FILE",
    "ZeroConfig",
    "build",
    "export_network",
    "init_network",
    "initialize_distributed",
    "network_chain",
    "network_of_run",
    "num_workers",
    "plot_run",
    "replicated",
    "restore_state",
    "saved_config",
    "to_host",
    "train",
    "train_iteration",
    "with_overrides",
]
