"""AlphaGo Zero (Silver et al. 2017): its training pipeline, from self-play to a network file.

Data flows in a loop: the network's search plays games against itself, the positions and their
visit counts and outcomes fill a replay buffer, the network is trained on samples of it, and
the next games are played by the new network. Out of a run directory come checkpoints,
``metrics.csv`` and ``metrics.png``, sample games, and on export one network file for the
players (``nets.saved``)::

    (optionally) SGF records --warm_start--> a first network (``alphago-jax warm-start``)
    network --selfplay (search, rules, network in one jitted scan)--> replay buffer
    replay buffer --learner.train_step--> network --evaluation matches--> metrics.csv
    run directory --runs.export_network--> network file (``alphago-jax export``)

- ``config``: ``ZeroConfig``, the presets (``PRESETS``: ``tiny``, ``smoke``, ``9x9``,
  ``19x19``, each sized with its reasoning) and ``--set`` overrides (``with_overrides``);
- ``programs``: the jitted programs of one config on one device mesh (``build``): self-play
  iterations, training steps and the evaluation matches;
- ``loop``: the main job (``train``): self-play, training, evaluation, checkpoints that survive a
  kill, the phase timing and the time limit; the ``alphago-jax train`` command;
- ``runs``: a run directory read back: its networks (``network_of_run``, ``export_network``,
  ``init_network``) and curves (``plot_run``);
- ``selfplay``: the game loops: batched self-play into the replay buffer and matches with
  colours alternating (``play_match``);
- ``external_eval``: matches of the network's search against GNU Go processes (``GnuGoMatch``);
- ``warm_start``: the network fit to game records before self-play (``alphago-jax train --init``).

Layer: beside the AlphaGo 2016 pipeline (``alphago_jax.alphago``), neither importing the other;
above the shared training machinery (``train``: learner, replay buffer, checkpoints, jobs,
match statistics, metrics, phase timing), ``search``, ``nets``, ``features``, ``games`` and
``sgf``. ``play`` (players of exported networks) and ``cli`` use it (``tests/test_imports.py``
checks the order). The names below are the pipeline's public ones
(``from alphago_jax import zero``; ``zero.train(zero.PRESETS["9x9"], "runs/9x9")``).
"""

from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.zero.config import DEFAULT_PRESET, KIND, PRESETS, ZeroConfig, saved_config, with_overrides
from alphago_jax.zero.loop import RunResult, initialize_distributed, train
from alphago_jax.zero.programs import Programs, build, num_workers, replicated, to_host, train_iteration
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
    "STAT_NAMES",
    "WARM_START_FILE",
    "ZeroConfig",
    "build",
    "checkpoint_dir",
    "export_network",
    "init_network",
    "initialize_distributed",
    "network_chain",
    "network_of_run",
    "num_workers",
    "plot_run",
    "replicated",
    "saved_config",
    "to_host",
    "train",
    "train_iteration",
    "with_overrides",
]
