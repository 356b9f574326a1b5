"""AlphaGo (Silver et al. 2016): its training pipeline, from game records to the player's networks.

Data comes in as SGF game records and leaves as four run directories side by side in one
pipeline directory (``sl/``, ``rollout/``, ``rl/``, ``value/``: checkpoints, ``metrics.csv``,
``metrics.png``), which ``play.alphago_player`` reads::

    SGF files, archives --dataset--> position shards (.npz, manifest.json)
    position shards --supervised--> SL policy network (sl/), fast rollout policy (rollout/)
    SL policy --reinforce (REINFORCE against an opponent pool)--> RL policy network (rl/)
    SL and RL policies --value (one self-play position per game)--> value network (value/)
    a pipeline directory --runs.load_networks--> the AlphaGo player's networks

- ``dataset``: ``build_dataset(sources, out_dir)``, SGF files and archives to sharded ``.npz``
  positions with the move played and the game's result (``alphago-jax dataset build``);
- ``positions``: dataset rows rebuilt into Go states inside jit, random board symmetries,
  shuffled batches streamed from the shards (``BatchStream``);
- ``supervised``: the SL policy (``PolicyNet``, 48 planes) and the rollout policy fit to the
  moves played (``train_sl``, ``train_rollout``; the shared loop ``fit``), and a trained run
  read back (``load_trained``);
- ``reinforce``: the RL policy by REINFORCE (``train_rl``), and the value network's self-play
  games (``value_games``);
- ``value``: the value network (``ValueNet``, 49 planes) by regression on the outcome, compared
  with the rollout policy's estimate (``train_value``);
- ``runs``: the pipeline directory's layout (``SUBDIRS``) and its networks loaded together
  (``load_networks``);
- ``pipeline_commands``: the ``sl-train``, ``rollout-train``, ``rl-train`` and ``value-train``
  subcommands.

Layer: beside AlphaGo Zero's pipeline (``zero``, ``zero.selfplay``, ``zero.warm_start``,
``zero.external_eval``), neither importing the other; above the shared training machinery
(``train``: optimizer, device mesh, jobs, checkpoints, match statistics, metrics), ``search``,
``nets``, ``features``, ``games`` and ``sgf``. ``play`` (the AlphaGo player) and ``cli`` use it
(``tests/test_imports.py`` checks the order). The modules are imported on their own
(``from alphago_jax.alphago import supervised``): this package imports nothing itself, so the
command line's parser, which adds the four training commands, stays light.
"""

__all__ = ["dataset", "pipeline_commands", "positions", "reinforce", "runs", "supervised", "value"]
