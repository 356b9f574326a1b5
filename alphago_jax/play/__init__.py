"""Playing Go: players, a GTP engine and client, an arena, play in the terminal.

- ``position``: a game at the Python edge (either colour may move, play after two passes,
  undo, Tromp-Taylor score, SGF record) on the JAX rules;
- ``players``: the ``Player`` protocol and the simplest players on this project's rules:
  random, a network's raw policy;
- ``search_player``: PUCT search with tree reuse (pure-rollout MCTS, or a network), with live
  analysis;
- ``amaf_players``: GRAVE and MCPS searches as players;
- ``gtp_player``: an external GTP engine (GNU Go) as a ``Player`` (over ``alphago_jax.gtp_client``);
- ``registry``: players by name (``mcts:sims=200``, ``gtp:/usr/games/gnugo --mode gtp``);
  ``options``: the ``name=value`` options of a spec;
- ``alphago_player``: the AlphaGo player on the networks of ``alphago_jax.alphago``
  (``alphago:dir=DIR``), and its policies alone (``alphago-policy:run=DIR``);
- ``analysis``: search statistics per move, in Leela Zero's ``lz-analyze`` and KataGo's
  ``kata-analyze`` forms;
- ``gtp``: the GTP v2 engine (``alphago-jax gtp``);
- ``arena``: matches between two players with a results table (``alphago-jax arena``);
- ``terminal``: a human against a player (``alphago-jax play``);
- ``notebook``: a human against a player in a notebook, one call per move (``NotebookGame``);
- ``commands``: those three subcommands for the command line.

Layer: above ``train`` and both training pipelines (``alphago_jax.alphago`` and AlphaGo
Zero's ``zero``), below ``cli`` only; it composes games, search, networks and SGF.
"""
