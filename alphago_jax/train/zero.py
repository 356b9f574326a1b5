"""AlphaGo Zero's main job: self-play, training, evaluation and checkpoints in one loop.

One iteration of ``train(config, out_dir)``::

    self-play   config.selfplay_moves searched moves of config.selfplay_batch games, in one
                jitted call (lax.scan over moves); finished games go to the replay buffer
    training    config.train_steps steps of train_step on batches sampled from the buffer,
                8-fold random symmetry augmentation
    evaluation  at the start, every config.eval_interval iterations and at the end: the
                network's search (temperature 0, no noise) against uniform random play,
                against pure-rollout MCTS, against the best network so far and,
                with config.gnugo_level set, against GNU Go (``train.external_eval``)
    logging     one row of metrics.csv (RunLogger) per iteration
    checkpoint  the whole run state (Checkpointer, kind "zero")

The game loops are in ``train.selfplay``. Self-play draws moves from the visit counts for the
first ``temperature_moves`` moves of a game, then plays the most visited move; Dirichlet noise
is on every root. Win rates come with a 95% Wilson interval and an Elo difference
(``evaluation.MatchResult``). Self-play always uses the latest network; the "best" network is
replaced by the latest when the latest scores at least ``config.gate`` against it (AlphaGo
Zero's 55% gate), and ``best_elo`` adds up the Elo gains of those replacements (the best
network's rating over the initial one).

Checkpoints hold the network (params, batch statistics), the optimizer state, the step, the
replay buffer, the self-play games in flight with their trajectories, the best network, the PRNG
key and the iteration: a resumed run continues the same games and draws the same random numbers,
so it reproduces the run that was not interrupted. One checkpoint every ``checkpoint_interval``
iterations (default every one) and after the last; the metrics rows past the checkpoint resumed
from are dropped and logged again.

Data parallelism: the games are split into ``workers`` groups, each with its own share of the
self-play batch, its own replay shard (``replay_capacity / workers`` positions, fed by its own
games) and its own random stream, and a training batch takes ``train_batch / workers`` examples
from each shard. Workers are laid out over a 1-D mesh of all ``jax.devices()``
(``learner.make_mesh``), several per device if there are more workers than devices. Self-play
and matches run under ``jax.shard_map``: each device plays its own games with no communication
(a search is many small ``while_loop``s; over a globally sharded batch every loop test would be a
collective). Training is one ``jax.jit`` over the global batch with replicated parameters: XLA
all-reduces the gradients and batch-norm statistics. The results depend on the number of
workers, not on the number of devices (up to floating-point summation order): fix ``workers`` to
compare device counts (the ``smoke`` preset has 4); the default is one per device. For several
hosts (a TPU pod, multi-node GPUs) call ``jax.distributed.initialize()`` before anything touches
JAX: ``train(..., distributed=True)``, the CLI's ``--distributed`` or ``ALPHAGO_JAX_DISTRIBUTED=1``.

Layout of ``out_dir``: ``checkpoints/<iteration>/``, ``metrics.csv``, ``tb/`` (TensorBoard, with
tensorboardX installed), ``metrics.png``, ``sample.sgf`` (the first game of the last evaluation
against pure MCTS), ``sample_gnugo.sgf`` (the same against GNU Go, when it plays).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import pathlib
import shutil
from typing import Any, Callable, Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from alphago_jax import features, games, nets, sgf
from alphago_jax.games.history import WithHistory
from alphago_jax.search import SearchConfig, make_search, network_evaluator, rollout_evaluator
from alphago_jax.train import jobs, learner, replay
from alphago_jax.train.jobs import checkpoint_dir, parse_value
from alphago_jax.train.checkpoint import Checkpointer, CheckpointError
from alphago_jax.gtp_client import GTPError, find_gnugo
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.train.external_eval import GnuGoMatch, GnuGoOutput
from alphago_jax.train.learner import OptimizerConfig, TrainState
from alphago_jax.train.metrics import RunLogger, plot_metrics, read_metrics
from alphago_jax.train.timing import Clock, PhaseTimer, TimeBudget, WallClock, plan_end
from alphago_jax.train.selfplay import (
    STAT_NAMES,
    MatchOutput,
    calibrate_resignation,
    inner_mover,
    play_match,
    random_mover,
    search_mover,
    selfplay,
    selfplay_init,
)

KIND = "zero"
"""The ``kind`` of this job's checkpoints."""

DISTRIBUTED_ENV = "ALPHAGO_JAX_DISTRIBUTED"
"""Environment variable: set to 1 to call ``jax.distributed.initialize()`` (multi-host runs)."""

PLOT_PANELS = (
    ("loss", "policy_loss", "value_loss", "ownership_loss"),
    ("win_random", "win_mcts", "win_best", "win_gnugo"),
    ("elo_random", "elo_mcts", "best_elo", "elo_gnugo"),
)
"""The panels of ``metrics.png`` (columns of ``metrics.csv``)."""

_SYMMETRIES = ("none", "random", "all")
_SEARCHES = ("puct", "gumbel")


# ----------------------------------------------------------------------------- configuration

@dataclasses.dataclass(frozen=True)
class ZeroConfig:
    """Everything that defines a run (frozen, hashable; saved with every checkpoint).

    Game: ``board_size`` x ``board_size`` Go, ``komi``, ``max_moves`` (default Go's
    ``2 * size * size``: a game never lasts longer, which bounds the trajectories),
    ``pass_after`` (``Go.pass_after``: no pass before that move unless nothing else is legal, in
    self-play and evaluation games; 0: the plain rules). Without it a young 9x9 network can
    learn to end games early: white, seeing every move as lost, passes, and black passes to
    win on area (the 9x9 run in docs/results.md fell into that).

    Network: ``DualResNet(blocks, filters, value_hidden)`` on AlphaGo Zero's 17 planes. KataGo's
    additions (Wu 2019), all off by default: ``ownership_weight > 0`` adds the ownership head and
    its loss term with that weight (targets: each point's final Tromp-Taylor owner from the player
    to move's view; KataGo uses about 1.5), ``score_weight > 0`` the score-margin head (a Huber
    loss in points; its errors are points, not at most 2 as the value's, so keep the weight
    small, e.g. 0.02), ``global_pool`` the global pooling bias in the residual tower. The replay
    buffer stores the heads' targets only when they are on.

    Self-play: ``selfplay_batch`` games in flight, ``selfplay_moves`` moves of each per iteration,
    ``num_simulations`` simulations per move. ``search``: ``"puct"`` (AlphaGo Zero: PUCT with
    ``c_puct``, root Dirichlet noise ``dirichlet_alpha``, ``dirichlet_fraction``, moves drawn
    from the visit counts for the first ``temperature_moves`` moves of a game, the visit
    distribution as the policy target) or ``"gumbel"`` (Gumbel AlphaZero, Danihelka et al. 2022:
    Gumbel-top-k sampling of ``gumbel_considered`` root moves and sequential halving, the
    surviving move played, the improved policy from completed Q-values as the policy target; it
    improves the policy with few simulations). The network is evaluated under ``symmetries``
    (``"random"``: one random board symmetry per position, as in the paper).

    Playout cap randomization (KataGo, Wu 2019; off at ``full_search_fraction = 1``): a fraction
    ``full_search_fraction`` of the moves get the full search, the others a fast one of
    ``fast_simulations`` simulations (None: ``num_simulations // 4``) with no root noise
    (``"puct"``: no Dirichlet noise; ``"gumbel"``: no Gumbel noise, the best considered move);
    only full-search positions become training examples. One draw per move for all games
    (``selfplay.selfplay``).

    Resignation (AlphaGo Zero; off at ``resign_threshold = None``): the player to move resigns
    when its root value is below the threshold, which starts at ``resign_threshold``; a fraction
    ``no_resign_fraction`` of games never resign, and after each iteration the threshold is
    recalibrated from them so that at most ``false_resign_target`` of the games that would have
    resigned were games the resigner did not lose (``selfplay.calibrate_resignation``; None: a
    fixed threshold). The threshold lives in the run state (the ``SelfPlay`` state), so it is
    checkpointed; metrics.csv logs ``resign_rate``, ``false_resign_rate`` and ``resign_threshold``.

    Training: a replay buffer of the last ``replay_capacity`` positions; once it holds
    ``min_replay`` positions, ``train_steps`` steps per iteration on batches of ``train_batch``
    with ``optimizer``.

    Parallelism: ``workers`` groups of games, each with its own replay shard and random stream
    (see the module docstring); None: one per device. The batch sizes, the capacity and
    ``eval_games / 2`` must be multiples of it, and it a multiple of the number of devices.

    Evaluation: ``eval_games`` games (half with each colour) against each opponent at the start,
    every ``eval_interval`` iterations (0: only at the start and the end) and after the last
    iteration; the network searches with ``eval_simulations`` (``eval_search``), gathering
    ``eval_leaves`` leaves per network call with virtual loss (the largest divisor of
    ``eval_simulations`` up to ``eval_leaf_batch``; 1 for ``"gumbel"``), as the players do: a
    match searches only ``eval_games / 2`` games at a time, and more leaves per call mean wider
    network calls and fewer of them in sequence per move. The pure-MCTS baseline
    (``baseline_search``, ``baseline_evaluator``): PUCT with uniform priors and
    ``baseline_simulations`` random playouts per move, Monte Carlo Go's usual playouts (a
    player never fills its own one-point eyes, simple ko), gathered ``baseline_leaves`` at a
    time with virtual loss (the largest divisor of ``baseline_simulations`` up to
    ``baseline_leaf_batch``; ``search.tree``): each round of its search is one batch of
    playouts over all games and leaves, so a move takes ``baseline_simulations /
    baseline_leaves`` playouts in sequence rather than ``baseline_simulations``
    (docs/benchmarks.md: its speed, and its strength against one leaf per round of uniformly
    random playouts under superko).
    ``gate``: the score the latest network needs against the best one to become the best
    (None: no match against the best). ``eval_games = 0`` turns evaluation off.

    Evaluation against GNU Go (off at ``gnugo_level = None``): each evaluation also plays
    ``gnugo_games`` games (even; half with each colour) against GNU Go at ``--level gnugo_level``
    (0 the weakest and fastest to 10, its default), one GNU Go process per game, scored by area
    after GNU Go's cleanup phase (``train.external_eval``): a reference nobody here wrote, so
    its win rate and Elo (``win_gnugo``, ``elo_gnugo``) compare runs and networks. The binary is
    ``gnugo_path`` (None: ``gtp_client.find_gnugo``); where it is missing the run says so once
    and goes on without these games. These three settings, ``eval_leaf_batch`` and
    ``baseline_leaf_batch`` only affect evaluation, so a resumed run may change them.

    Run: ``iterations``, ``keep`` (checkpoints kept), ``seed``, ``checkpoint_interval``: a
    checkpoint after every this many iterations and after the last one (a kill loses at most
    that many; a resumed run repeats them exactly). A checkpoint holds the whole replay buffer:
    the ``9x9`` preset's 500,000 positions took 6.5 s to write on a 2-core CPU
    (docs/benchmarks.md). It touches nothing of the run's state, so a resumed run may change it.
    """

    board_size: int = 5
    komi: float = 0.5
    max_moves: int | None = None
    pass_after: int = 0
    blocks: int = 2
    filters: int = 32
    value_hidden: int = 32
    ownership_weight: float = 0.0
    score_weight: float = 0.0
    global_pool: bool = False
    num_simulations: int = 16
    search: str = "puct"
    gumbel_considered: int = 16
    c_puct: float = 1.25
    dirichlet_alpha: float = 0.5
    dirichlet_fraction: float = 0.25
    temperature_moves: int = 8
    symmetries: str = "random"
    selfplay_batch: int = 64
    selfplay_moves: int = 32
    full_search_fraction: float = 1.0
    fast_simulations: int | None = None
    resign_threshold: float | None = None
    no_resign_fraction: float = 0.1
    false_resign_target: float | None = 0.05
    replay_capacity: int = 16384
    min_replay: int = 1024
    train_batch: int = 128
    train_steps: int = 64
    optimizer: OptimizerConfig = OptimizerConfig(kind="adamw", learning_rate=2e-3, weight_decay=1e-4)
    workers: int | None = None
    iterations: int = 30
    eval_interval: int = 5
    eval_games: int = 64
    eval_simulations: int = 16
    eval_leaf_batch: int = 1
    baseline_simulations: int = 32
    baseline_leaf_batch: int = 8
    gate: float | None = 0.55
    gnugo_level: int | None = None
    gnugo_games: int = 20
    gnugo_path: str | None = None
    keep: int = 2
    seed: int = 0
    checkpoint_interval: int = 1

    def __post_init__(self):
        def bad(name, why):
            raise ValueError(f"ZeroConfig.{name} {why}, got {getattr(self, name)!r}")

        def integer(name, low):
            x = getattr(self, name)
            if not isinstance(x, (int, np.integer)) or isinstance(x, bool) or x < low:
                bad(name, f"must be an int >= {low}")

        self.game  # validates the game's settings
        for name in ("blocks", "temperature_moves", "min_replay", "eval_interval", "eval_games", "seed"):
            integer(name, 0)
        for name in ("filters", "value_hidden", "num_simulations", "selfplay_batch", "selfplay_moves",
                     "replay_capacity", "train_batch", "train_steps", "iterations", "eval_simulations",
                     "eval_leaf_batch", "baseline_simulations", "baseline_leaf_batch", "keep", "checkpoint_interval"):
            integer(name, 1)
        if self.search not in _SEARCHES:
            bad("search", f"must be one of {_SEARCHES}")
        integer("gumbel_considered", 1)
        if self.symmetries not in _SYMMETRIES:
            bad("symmetries", f"must be one of {_SYMMETRIES}")
        if not 0 <= self.dirichlet_fraction <= 1 or self.dirichlet_alpha <= 0:
            bad("dirichlet_fraction", "must be in [0, 1] with dirichlet_alpha > 0")
        if self.c_puct <= 0:
            bad("c_puct", "must be > 0")

        def fraction(name, low_open, allow_none=False):  # a number in (0, 1] or [0, 1]
            x = getattr(self, name)
            if x is None and allow_none:
                return
            ok = isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
            if not ok or not (0 < x <= 1 if low_open else 0 <= x <= 1):
                bad(name, f"must be a number in {'(0' if low_open else '[0'}, 1]" + (" or None" if allow_none else ""))

        for name in ("ownership_weight", "score_weight"):
            x = getattr(self, name)
            if not isinstance(x, (int, float, np.integer, np.floating)) or isinstance(x, bool) or not 0 <= x < np.inf:
                bad(name, "must be a finite number >= 0 (0: no head)")
        if not isinstance(self.global_pool, bool):
            bad("global_pool", "must be true or false")
        if self.global_pool and self.filters < 2:
            bad("filters", "must be at least 2 with global_pool (some channels pool, the others get the bias)")
        fraction("full_search_fraction", low_open=True)
        if self.fast_simulations is not None:
            integer("fast_simulations", 1)
            if self.fast_simulations > self.num_simulations:
                bad("fast_simulations", f"must be at most num_simulations ({self.num_simulations})")
        if self.resign_threshold is not None:
            x = self.resign_threshold
            if not isinstance(x, (int, float, np.integer, np.floating)) or isinstance(x, bool) or not -1 <= x <= 1:
                bad("resign_threshold", "must be None (no resignation) or a root value in [-1, 1]")
        fraction("no_resign_fraction", low_open=False)
        fraction("false_resign_target", low_open=True, allow_none=True)
        if self.eval_games % 2:
            bad("eval_games", "must be even (each opening is played with both colours)")
        if self.gate is not None and not 0 < self.gate <= 1:
            bad("gate", "must be None or in (0, 1]")
        if self.gnugo_level is not None:
            integer("gnugo_level", 0)
        integer("gnugo_games", 2)
        if self.gnugo_games % 2:
            bad("gnugo_games", "must be even (half the games with each colour)")
        if self.gnugo_path is not None and (not isinstance(self.gnugo_path, str) or not self.gnugo_path):
            bad("gnugo_path", "must be None (find GNU Go) or the path of the GNU Go binary")
        if self.workers is not None:
            integer("workers", 1)
            for name in ("selfplay_batch", "replay_capacity", "train_batch"):
                if getattr(self, name) % self.workers:
                    bad(name, f"must be a multiple of workers ({self.workers})")
            if (self.eval_games // 2) % self.workers:
                bad("eval_games", f"must be a multiple of 2 * workers ({2 * self.workers})")
        if self.min_replay > self.replay_capacity:
            bad("min_replay", f"must be at most replay_capacity ({self.replay_capacity})")
        if not isinstance(self.optimizer, OptimizerConfig):
            bad("optimizer", "must be an OptimizerConfig")

    # -- derived objects ---------------------------------------------------------------------

    @property
    def game(self) -> WithHistory:
        """Go with the last 8 boards kept in the state (what the 17 planes need)."""
        return WithHistory(games.make("go", size=self.board_size, komi=self.komi, max_moves=self.max_moves,
                                      pass_after=self.pass_after), boards=8)

    @property
    def net(self) -> nets.DualResNet:
        return nets.DualResNet(in_planes=features.zero.NUM_PLANES, blocks=self.blocks, filters=self.filters,
                               value_hidden=self.value_hidden, ownership=self.ownership_weight > 0,
                               score=self.score_weight > 0, global_pool=self.global_pool)

    @property
    def selfplay_search(self) -> SearchConfig:
        return SearchConfig(num_simulations=self.num_simulations, algorithm=self.search, c_puct=self.c_puct,
                            dirichlet_alpha=self.dirichlet_alpha, dirichlet_fraction=self.dirichlet_fraction,
                            temperature=1.0, temperature_moves=self.temperature_moves,
                            gumbel_considered=self.gumbel_considered)

    @property
    def playout_cap(self) -> bool:
        """Whether self-play randomizes its playout cap (``full_search_fraction < 1``)."""
        return self.full_search_fraction < 1

    @property
    def fast_search(self) -> SearchConfig:
        """Self-play's fast search (playout cap randomization): ``fast_simulations``, no root noise."""
        sims = self.fast_simulations if self.fast_simulations is not None else max(1, self.num_simulations // 4)
        return dataclasses.replace(self.selfplay_search, num_simulations=sims, dirichlet_fraction=0.0,
                                   gumbel_scale=0.0)

    @property
    def eval_leaves(self) -> int:
        """Leaves per network call of the network's evaluation search: the largest divisor of
        ``eval_simulations`` up to ``eval_leaf_batch`` (1 for Gumbel search, which has none)."""
        return _divisor_up_to(self.eval_simulations, self.eval_leaf_batch) if self.search == "puct" else 1

    @property
    def eval_search(self) -> SearchConfig:
        """The network's search in evaluation games: ``search`` without noise, the best move,
        ``eval_leaves`` leaves per network call."""
        return SearchConfig(num_simulations=self.eval_simulations, algorithm=self.search, c_puct=self.c_puct,
                            dirichlet_fraction=0.0, temperature=0.0, gumbel_considered=self.gumbel_considered,
                            gumbel_scale=0.0, leaf_batch=self.eval_leaves)

    @property
    def baseline_leaves(self) -> int:
        """Leaves per round of the pure-MCTS baseline: the largest divisor of
        ``baseline_simulations`` up to ``baseline_leaf_batch``."""
        return _divisor_up_to(self.baseline_simulations, self.baseline_leaf_batch)

    @property
    def baseline_evaluator(self):
        """The pure-MCTS baseline's leaf value (``search.Evaluator`` of ``game.game``, no
        parameters): one random playout that keeps the player's own eyes, under simple ko."""
        return rollout_evaluator(self.game.game, keep_eyes=True, simple_ko=True)

    @property
    def baseline_search(self) -> SearchConfig:
        """The pure-MCTS baseline's search: ``baseline_simulations`` playouts, ``baseline_leaves``
        per round, the most visited move."""
        return SearchConfig(num_simulations=self.baseline_simulations, leaf_batch=self.baseline_leaves,
                            dirichlet_fraction=0.0, temperature=0.0)

    # -- dictionaries (checkpoint metadata, command-line overrides) ---------------------------

    def to_dict(self) -> dict:
        """JSON-able: nested dicts of numbers, strings, None and lists."""
        return json.loads(json.dumps(dataclasses.asdict(self)))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ZeroConfig":
        """The inverse of ``to_dict``; unknown keys raise ValueError naming them."""
        d = dict(d)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown ZeroConfig fields {unknown}; known: {sorted(known)}")
        if isinstance(d.get("optimizer"), Mapping):
            opt = dict(d["optimizer"])
            fields = {f.name for f in dataclasses.fields(OptimizerConfig)}
            if set(opt) - fields:
                raise ValueError(f"unknown OptimizerConfig fields {sorted(set(opt) - fields)}; known: {sorted(fields)}")
            d["optimizer"] = OptimizerConfig(**opt)
        return cls(**d)


def _divisor_up_to(n: int, most: int) -> int:
    """The largest divisor of ``n`` that is at most ``most`` (at least 1)."""
    return max(k for k in range(1, min(most, n) + 1) if n % k == 0)


PRESETS: dict[str, ZeroConfig] = {
    # The default: 5x5 Go on a 2-core CPU in about 4 minutes (docs/results.md).
    "tiny": ZeroConfig(),
    # The smallest run that exercises every part (tests, CI): seconds once compiled.
    "smoke": ZeroConfig(
        board_size=5, max_moves=16, blocks=1, filters=8, value_hidden=8, num_simulations=4,
        temperature_moves=4, selfplay_batch=8, selfplay_moves=16, replay_capacity=1024, min_replay=32,
        train_batch=16, train_steps=4, workers=4, iterations=3, eval_interval=0, eval_games=8,
        eval_simulations=4, baseline_simulations=4, keep=2),
    # One H200-class GPU, hours. Sized from measurements on an H200 (issue 44, docs/benchmarks.md):
    # bench_zero at 512 games in flight gave 2,046 self-play positions/s (262k simulations/s) and
    # 43 training steps/s of 512, and the search benchmark gives 4x more simulations/s at 2,048
    # games than at 256: so 2,048 games in flight, and 16 moves of each per iteration keep the
    # iteration at 32,768 positions (4.2M simulations), at most 16 s of self-play at the 512-game
    # rate, beside 256 training steps (6 s at 43 steps/s; each position is sampled about 4 times
    # while in the buffer). Device memory: about 0.3 MB of trajectory and 0.6 MB of search tree
    # per game (under 2 GB for 2,048), the replay buffer 0.9 GB. Evaluation every 25 iterations
    # (105M simulations of self-play, about 10 minutes): 4 searching sides (against random play,
    # pure MCTS, twice against the best network) x 64 games x at most 162 plies x 128
    # simulations = 5.3M simulations, the network's search gathering 8 leaves per call (16 calls
    # in sequence a move, not 128); the pure-MCTS baseline 200 playouts x 64 games x 162 plies =
    # 2.1M playouts, each about 1.5 simulations' time on the H200 (the rules benchmark's 22.6M
    # steps/s at 4,096 games, some 130 steps a playout), in 5 rounds of 40 leaves (2,560
    # playouts side by side): about 7% of the wall time when the device is busy throughout.
    # A checkpoint every 4 iterations: the full replay buffer (855 MB) took 6.5 s to write on a
    # 2-core CPU, a quarter of an iteration's time here if written every iteration.
    "9x9": ZeroConfig(
        board_size=9, komi=7.5, pass_after=40, blocks=6, filters=64, value_hidden=64, num_simulations=128,
        dirichlet_alpha=0.3, temperature_moves=16, selfplay_batch=2048, selfplay_moves=16,
        replay_capacity=500_000, min_replay=20_000, train_batch=512, train_steps=256,
        optimizer=OptimizerConfig(kind="sgd", learning_rate=2e-2, momentum=0.9, weight_decay=1e-4,
                                  schedule="piecewise", boundaries=(100_000, 200_000)),
        iterations=1000, eval_interval=25, eval_games=128, eval_simulations=128, eval_leaf_batch=8,
        baseline_simulations=200, baseline_leaf_batch=40, checkpoint_interval=4),
    # AlphaGo Zero's network (19 residual blocks of 256 filters) and 800 simulations on one
    # H200-class GPU (days to weeks; a pod splits the games over its devices). The forward pass
    # dominates: bench_nets on an H200 in bfloat16 gave AlphaGo's 13-layer policy network 153k
    # positions/s at batch 256 and 209k at 1,024 (the 20-block rows are yet to be measured, by
    # experiments/accelerator_check.py), so 1,024 games in flight feed the network batches of
    # 1,024. Device memory: trajectories 5.5 MB per game (5.6 GB), search trees about 15 MB per
    # game (801 nodes of a 12 KB game state and its edges: 15 GB), the replay buffer 7.5 GB;
    # about 30 GB in all. Evaluation every 25 iterations (2.6G simulations of self-play): 4
    # searching sides x 128 games x at most 722 plies x 800 simulations = 296M simulations (a
    # tenth of the wall time), 8 leaves per call; the pure-MCTS baseline 400 playouts a move
    # (random 19x19 playouts run to the move limit), in 25 rounds of 16 leaves.
    "19x19": ZeroConfig(
        board_size=19, komi=7.5, blocks=19, filters=256, value_hidden=256, num_simulations=800,
        dirichlet_alpha=0.03, temperature_moves=30, selfplay_batch=1024, selfplay_moves=128,
        replay_capacity=1_000_000, min_replay=100_000, train_batch=2048, train_steps=1000,
        optimizer=OptimizerConfig.alphago_zero(scale=0.25), iterations=1000, eval_interval=25,
        eval_games=256, eval_simulations=800, eval_leaf_batch=8, baseline_simulations=400, baseline_leaf_batch=16),
}
DEFAULT_PRESET = "tiny"


def with_overrides(config: ZeroConfig, overrides: Mapping[str, str]) -> ZeroConfig:
    """``config`` with fields replaced from ``{"name": "text"}`` (``"optimizer.name"`` for the
    optimizer's fields); values are parsed as JSON, else taken as text. ValueError on unknown
    names or invalid values."""
    top, opt = {}, {}
    for name, text in overrides.items():
        if name.startswith("optimizer."):
            field = name.split(".", 1)[1]
            if field not in {f.name for f in dataclasses.fields(OptimizerConfig)}:
                raise ValueError(f"unknown optimizer setting {field!r}")
            opt[field] = parse_value(text, getattr(config.optimizer, field))
        elif name in {f.name for f in dataclasses.fields(ZeroConfig)} and name != "optimizer":
            top[name] = parse_value(text, getattr(config, name))
        else:
            raise ValueError(f"unknown setting {name!r}; known: "
                             f"{', '.join(f.name for f in dataclasses.fields(ZeroConfig) if f.name != 'optimizer')}, "
                             "optimizer.<field>")
    try:
        if opt:
            top["optimizer"] = dataclasses.replace(config.optimizer, **opt)
        return dataclasses.replace(config, **top)
    except TypeError as e:
        raise ValueError(f"bad setting: {e}") from None


# ------------------------------------------------------------------------------ the programs

class Programs(NamedTuple):
    """The jitted functions of a run, built by ``build`` for one config and one mesh. W workers.

    - ``init(key) -> state``: a fresh run state, the dict that checkpoints hold: ``train`` (the
      ``TrainState``), ``best`` (the best network's variables), ``best_elo`` (float32[]), ``key``
      (uint32[2], the run's PRNG key), ``iteration`` (int32[]), all replicated, and, split over
      the devices by worker, ``selfplay`` (``SelfPlay``, leaves [W, B / W, ...]; the resignation
      threshold and record in it [W] and [W, RESIGN_BINS], the same threshold on all) and ``replay``
      (``ReplayBuffer``, leaves [W, C / W, ...], ``insert`` and ``size`` int32[W]).
    - ``selfplay(variables, sp, buffer, key) -> (sp, buffer, stats)``: one iteration's self-play;
      ``stats``: int32[len(STAT_NAMES), W], the finished games, positions added, black wins and
      white wins of each worker, and its resignation counts (``STAT_NAMES``). The resignation
      threshold is recalibrated at the end (``selfplay.calibrate_resignation``).
    - ``train_step(train_state, buffer, key) -> (train_state, metrics)``: one training step on
      ``train_batch / W`` examples from each replay shard (``train_iteration`` runs an
      iteration's steps).
    - ``matches``: ``{"random", "mcts", "best"} -> (player_variables, opponent_variables, key)
      -> MatchOutput`` over all ``eval_games`` (leaves split over the devices; ``to_host``).
    - ``split(key) -> (key, k_selfplay, k_train, k_eval)``.
    - ``gnugo``: the network's evaluation search against GNU Go (``external_eval.GnuGoMatch``:
      ``gnugo(variables, key, games=, level=, gnugo=) -> GnuGoOutput``), compiled on first use.
    """

    init: Callable
    selfplay: Callable
    train_step: Callable
    matches: dict
    split: Callable
    mesh: Any
    workers: int
    gnugo: GnuGoMatch


def num_workers(config: ZeroConfig, devices: int) -> int:
    """W: ``config.workers``, or one per device; ValueError unless the sizes divide evenly."""
    w = config.workers or devices
    if w % devices:
        raise ValueError(f"ZeroConfig.workers = {w} must be a multiple of the {devices} devices the run is "
                         "spread over")
    for name, value in (("selfplay_batch", config.selfplay_batch), ("train_batch", config.train_batch),
                        ("replay_capacity", config.replay_capacity), ("eval_games / 2", config.eval_games // 2)):
        if value % w:
            raise ValueError(f"ZeroConfig: {name} = {value} must be a multiple of the {w} workers (one per "
                             "device unless ZeroConfig.workers says otherwise)")
    return w


def to_host(tree):
    """numpy copies of the leaves, gathered from every process in a multi-host run."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree_util.tree_map(np.asarray, tree)


def replicated(value: np.ndarray, mesh) -> jax.Array:
    """``value`` (the same on every process) as an array on every device of ``mesh``: a global
    array, which multi-host checkpoints need (a plain ``jnp`` scalar is local to one process)."""
    value = np.asarray(value)
    return jax.make_array_from_callback(value.shape, NamedSharding(mesh, PartitionSpec()), lambda _: value)


def _per_worker(tree, workers: int):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (workers,) + x.shape), tree)


def build(config: ZeroConfig, mesh=None) -> Programs:
    """The jitted programs of ``config`` on ``mesh`` (default: all devices)."""
    mesh = learner.make_mesh() if mesh is None else mesh
    w = num_workers(config, mesh.devices.size)
    game, net, opt = config.game, config.net, config.optimizer
    split_spec = PartitionSpec(learner.DATA_AXIS)
    rep = NamedSharding(mesh, PartitionSpec())
    split = NamedSharding(mesh, split_spec)

    def on_workers(f, in_axes, in_specs):
        """``f`` of one worker, vmapped over each device's workers, with no communication."""
        return jax.shard_map(jax.vmap(f, in_axes=in_axes), mesh=mesh, in_specs=in_specs, out_specs=split_spec,
                             check_vma=False)

    evaluator = network_evaluator(nets.policy_value_apply(net), features.zero_planes, symmetries=config.symmetries)
    sp_search = make_search(game, evaluator, config.selfplay_search)

    def init(key):
        k_net, k_run = jax.random.split(key)
        variables = nets.init_variables(net, k_net, size=config.board_size)
        train_state = learner.init_train_state(variables, opt)
        points = config.board_size * config.board_size
        example = replay.Examples(
            planes=jnp.zeros((config.board_size, config.board_size, features.zero.NUM_PLANES), jnp.uint8),
            policy=jnp.zeros((game.num_actions,), jnp.float32), value=jnp.float32(0),
            ownership=jnp.zeros((points,), jnp.int8) if net.ownership else None,  # the heads' targets
            score=jnp.float32(0) if net.score else None)
        return {
            "train": train_state,
            "replay": _per_worker(replay.replay_init(config.replay_capacity // w, example), w),
            "selfplay": _per_worker(selfplay_init(game, config.selfplay_batch // w, config.resign_threshold), w),
            "best": train_state.variables,
            "best_elo": jnp.float32(0),
            "key": k_run,
            "iteration": jnp.int32(0),
        }

    state_sharding = {"train": rep, "replay": split, "selfplay": split, "best": rep, "best_elo": rep, "key": rep,
                      "iteration": rep}

    fast_search = make_search(game, evaluator, config.fast_search) if config.playout_cap else None
    resigning = config.resign_threshold is not None
    one_worker = functools.partial(selfplay, game, sp_search, config.selfplay_moves, fast_search=fast_search,
                                   resign=resigning, no_resign_fraction=config.no_resign_fraction)
    if fast_search is None:
        play = on_workers(one_worker, (None, 0, 0, 0), (PartitionSpec(), split_spec, split_spec, split_spec))
    else:  # the schedule of full-search moves is one for all workers: lax.cond then runs one search
        play = on_workers(one_worker, (None, 0, 0, 0, None),
                          (PartitionSpec(), split_spec, split_spec, split_spec, PartitionSpec()))

    def selfplay_program(variables, sp, buffer, key):
        if fast_search is None:
            sp, buffer, stats = play(variables, sp, buffer, jax.random.split(key, w))
        else:
            schedule = jax.random.bernoulli(jax.random.fold_in(key, 1), config.full_search_fraction,
                                            (config.selfplay_moves,))
            sp, buffer, stats = play(variables, sp, buffer, jax.random.split(key, w), schedule)
        if resigning and config.false_resign_target is not None:
            sp = sp.replace(resign=calibrate_resignation(sp.resign, config.false_resign_target))
        return sp, buffer, jnp.stack([stats[k] for k in STAT_NAMES])

    def train_step(train_state, buffer, key):
        k_sample, k_augment = jax.random.split(key)
        per = config.train_batch // w
        batch = jax.vmap(lambda b, k: replay.replay_sample(b, k, per))(buffer, jax.random.split(k_sample, w))
        batch = jax.tree_util.tree_map(lambda x: x.reshape((w * per,) + x.shape[2:]), batch)
        batch = jax.lax.with_sharding_constraint(batch, split)
        return learner.train_step(train_state, batch, net, opt, key=k_augment,
                                  ownership_weight=config.ownership_weight, score_weight=config.score_weight)

    pairs = config.eval_games // 2 // w
    net_mover = search_mover(make_search(game, evaluator, config.eval_search))
    mcts = make_search(game.game, config.baseline_evaluator, config.baseline_search)
    opponents = {"random": random_mover(game), "mcts": inner_mover(search_mover(mcts)), "best": net_mover}

    def match_program(opponent):
        run = on_workers(functools.partial(play_match, game, net_mover, opponent, pairs), (None, None, 0),
                         (PartitionSpec(), PartitionSpec(), split_spec))

        def program(player_variables, opponent_variables, key):
            out = run(player_variables, opponent_variables, jax.random.split(key, w))
            return jax.tree_util.tree_map(lambda x: x.reshape((-1,) + x.shape[2:]), out)  # worker-major

        return jax.jit(program, in_shardings=(rep, rep, rep))

    return Programs(
        init=jax.jit(init, out_shardings=state_sharding),
        selfplay=jax.jit(selfplay_program, in_shardings=(rep, split, split, rep),
                         out_shardings=(split, split, split), donate_argnums=(1, 2)),
        # No donation of the train state: the best network may share its arrays.
        train_step=jax.jit(train_step, in_shardings=(rep, split, rep), out_shardings=(rep, rep)),
        matches={name: match_program(opponent) for name, opponent in opponents.items()},
        split=jax.jit(lambda k: tuple(jax.random.split(k, 4)), out_shardings=rep),
        mesh=mesh,
        workers=w,
        gnugo=GnuGoMatch(game, net_mover),
    )


def train_iteration(programs: Programs, train_state: TrainState, buffer: replay.ReplayBuffer, key, steps: int
                    ) -> tuple[TrainState, dict]:
    """``steps`` training steps; returns the state and each metric as float32[steps] (numpy).

    A Python loop over one jitted step rather than a ``lax.scan``: XLA:CPU runs the gradient's
    convolutions about 15x slower inside a loop than at the top level of a program, and
    dispatch is asynchronous, so accelerators stay busy either way.
    """
    # Several CPU "devices" share one small thread pool: two programs with collectives in flight
    # at once can each hold threads that the other's collectives wait for.
    devices = programs.mesh.devices
    sync = devices.size > 1 and devices.flat[0].platform == "cpu"
    collected = []
    for k in jax.random.split(key, steps):
        train_state, metrics = programs.train_step(train_state, buffer, k)
        collected.append(metrics)
        if sync:
            jax.block_until_ready(train_state)
    stacked = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *collected)
    return train_state, stacked


# ---------------------------------------------------------------------------------- the run

class RunResult(NamedTuple):
    """Where a finished run put its results, and its final counters."""

    out_dir: pathlib.Path
    checkpoint: pathlib.Path
    metrics: pathlib.Path
    plot: pathlib.Path | None
    sample_game: pathlib.Path | None
    iterations: int
    train_steps: int


def saved_config(out_dir) -> ZeroConfig | None:
    """The config of the run in ``out_dir`` (from its latest checkpoint), None if it has none.

    Raises CheckpointError (naming the path) for a corrupted or foreign checkpoint directory.
    """
    return jobs.saved_config(out_dir, KIND, ZeroConfig)


_FREE_ON_RESUME = ("iterations", "gnugo_level", "gnugo_games", "gnugo_path", "eval_leaf_batch", "baseline_leaf_batch",
                   "checkpoint_interval")
"""The settings a resumed run may change: its length, the evaluation against GNU Go, how the
evaluation's searches batch their leaves and how often it checkpoints (which touch nothing of the
run's state)."""


def _config_differences(a: ZeroConfig, b: ZeroConfig) -> list[str]:
    da, db = a.to_dict(), b.to_dict()
    return [f"{k}: {da[k]!r} vs {db[k]!r}" for k in da if k not in _FREE_ON_RESUME and da[k] != db[k]]


def _match_metrics(name: str, result: MatchResult) -> dict:
    lo, hi = result.interval()
    elo_lo, elo_hi = result.elo_interval()
    return {f"win_{name}": result.win_rate, f"win_{name}_low": lo, f"win_{name}_high": hi,
            f"elo_{name}": result.elo, f"elo_{name}_low": elo_lo, f"elo_{name}_high": elo_hi}


def _resign_metrics(config: ZeroConfig, stats: Mapping[str, int], sp) -> dict:
    """The metrics row's resignation entries (none without resignation): ``resign_rate``
    (resigned / finished games), ``false_resign_rate`` (of the no-resign games in which a player
    fell below the threshold, the share that player did not lose; NaN with none),
    ``resign_threshold`` (after the iteration's calibration: the next iteration's), and the counts."""
    if config.resign_threshold is None:
        return {}
    would = stats["would_resign"]
    return {"resign_rate": stats["resigned"] / max(stats["games"], 1),
            "false_resign_rate": stats["false_resigns"] / would if would else float("nan"),
            "resign_threshold": float(to_host(sp.resign.threshold)[0]),
            "no_resign_games": stats["no_resign_games"], "would_resign": would}


def _write_sample(path: pathlib.Path, config: ZeroConfig, out: MatchOutput | GnuGoOutput, iteration: int,
                  opponent: str, result: str | None = None) -> None:
    """Game 0 of a match (the network is black) as an SGF file; ``result`` default: by the score."""
    moves = [int(a) for a in np.asarray(out.moves[0]) if a >= 0]
    record = sgf.record_from_moves(
        config.game.game, moves, result=result or sgf.result_string(float(out.scores[0])),
        black_name=f"alphago-jax zero, iteration {iteration}", white_name=opponent)
    sgf.save(record, path)  # atomic: a run killed here keeps the previous samples whole


MATCHES = ("random", "mcts", "best", "gnugo")
"""The matches of an evaluation, in the order they are played (and kept when time is short);
``eval_<name>_s`` in metrics.csv is the wall time of each."""


def _matches(config: ZeroConfig, iteration: int, gnugo: str | None) -> tuple[str, ...]:
    """The matches of the evaluation at ``iteration`` (none with ``eval_games = 0``)."""
    if not config.eval_games:
        return ()
    wanted = {"random": True, "mcts": True, "best": config.gate is not None and iteration > 0,
              "gnugo": gnugo is not None}
    return tuple(m for m in MATCHES if wanted[m])


def _evaluate(programs: Programs, config: ZeroConfig, state: dict, key, iteration: int, out_dir: pathlib.Path,
              gnugo: str | None = None, say: Callable[[str], None] = print, *,
              play: tuple[str, ...] | None = None, timer: PhaseTimer | None = None) -> tuple[dict, dict]:
    """Matches against random play, pure MCTS, (after the start) the best network and, given
    its binary ``gnugo`` (``_gnugo_binary``), GNU Go at ``config.gnugo_level``.

    ``play``: the matches to play (default: all of ``_matches``); the others are left out of the
    row. Each match draws its own key from ``key`` whichever are played. ``timer`` times each
    as ``eval_<name>``.

    Returns ``(metrics row entries, state)``; the state's best network is replaced when the
    latest one passes the gate. ``say`` reports a failed match against GNU Go.
    """
    play = _matches(config, iteration, gnugo) if play is None else play
    timed = timer if timer is not None else (lambda name: contextlib.nullcontext())
    variables = state["train"].variables
    k_random, k_mcts, k_best, k_gnugo = programs.split(key)
    row, results = {}, {}
    for name, k in (("random", k_random), ("mcts", k_mcts)):
        if name not in play:
            continue
        with timed(f"eval_{name}"):
            out = to_host(programs.matches[name](variables, None, k))
        results[name] = MatchResult.from_outcomes("zero", name, out.outcomes)
        row.update(_match_metrics(name, results[name]))
        if name == "mcts" and jax.process_index() == 0:
            _write_sample(out_dir / "sample.sgf", config, out, iteration,
                          f"pure MCTS, {config.baseline_simulations} playouts")
    if "best" in play:
        with timed("eval_best"):
            out = to_host(programs.matches["best"](variables, state["best"], k_best))
        result = MatchResult.from_outcomes("zero", "best", out.outcomes)
        row.update({k: v for k, v in _match_metrics("best", result).items() if not k.startswith("elo_")})
        promoted = result.win_rate >= config.gate
        if promoted:
            best_elo = np.float32(float(state["best_elo"]) + result.elo)
            state = {**state, "best": variables, "best_elo": replicated(best_elo, programs.mesh)}
        row["promoted"] = int(promoted)
    if "gnugo" in play and gnugo is not None:
        with timed("eval_gnugo"):
            row.update(_gnugo_metrics(programs, config, variables, k_gnugo, gnugo, iteration, out_dir, say))
    row["best_elo"] = float(state["best_elo"])
    return row, state


def _gnugo_binary(config: ZeroConfig, say: Callable[[str], None]) -> str | None:
    """The GNU Go binary that evaluations play against; None when ``config`` asks for none, or
    (said once, here: a missing program should not end a long run) when it is missing."""
    if config.gnugo_level is None or not config.eval_games:
        return None
    if config.gnugo_path is not None:
        found = shutil.which(config.gnugo_path)
        if found is None:
            say(f"no evaluation against GNU Go: gnugo_path {config.gnugo_path!r} is not an executable file")
        return found
    found = find_gnugo()
    if found is None:
        say("no evaluation against GNU Go: it is not installed (apt-get install -y gnugo, or set gnugo_path)")
    return found


def _gnugo_metrics(programs: Programs, config: ZeroConfig, variables, key, gnugo: str, iteration: int,
                   out_dir: pathlib.Path, say: Callable[[str], None]) -> dict:
    """The metrics row's entries of a match against GNU Go (``win_gnugo``, ``elo_gnugo`` and their
    intervals) and its first game as ``sample_gnugo.sgf``. Nothing when GNU Go fails: the run says
    why and goes on (an external program's failure should not end a long run)."""
    key = to_host(key)  # on every process: a collective in multi-host runs
    if jax.process_index() != 0:
        return {}  # the first process plays GNU Go, and it alone writes the metrics
    try:
        out = programs.gnugo(variables, key, games=config.gnugo_games, level=config.gnugo_level, gnugo=gnugo)
    except GTPError as e:
        say(f"iteration {iteration}: the games against GNU Go failed and are left out: {e}")
        return {}
    how = {"resignation": "R", "illegal move": "F"}.get(out.endings[0])
    _write_sample(out_dir / "sample_gnugo.sgf", config, out, iteration, f"GNU Go, level {config.gnugo_level}",
                  result=f"B+{how}" if how else None)  # game 0: the network is black, GNU Go resigned or forfeited
    return _match_metrics("gnugo", MatchResult.from_outcomes("zero", f"gnugo-{config.gnugo_level}", out.outcomes))


def _summary(row: dict, config: ZeroConfig) -> str:
    def part(name, label):
        if f"win_{name}" not in row:
            return None
        return f"{label} {row[f'win_{name}']:.0%} [{row[f'win_{name}_low']:.0%}, {row[f'win_{name}_high']:.0%}]"

    gnugo = part("gnugo", f"vs GNU Go({config.gnugo_level})")
    if gnugo and np.isfinite(row["elo_gnugo"]):  # the external reference: its Elo too
        gnugo += f" Elo {row['elo_gnugo']:+.0f}"
    parts = [part("random", "vs random"), part("mcts", f"vs MCTS({config.baseline_simulations})"),
             part("best", "vs best"), gnugo]
    return ", ".join(p for p in parts if p) + f"; best Elo {row['best_elo']:+.0f}"


def initialize_distributed(enabled: bool | None = None) -> bool:
    """Call ``jax.distributed.initialize()`` when ``enabled`` (None: when ``ALPHAGO_JAX_DISTRIBUTED=1``).

    ``initialize()`` finds the coordinator itself on Cloud TPU pods, SLURM and Open MPI; elsewhere
    set ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and ``JAX_PROCESS_ID`` (read by JAX).
    Must run before any other JAX call. Returns whether it was called.
    """
    if enabled is None:
        enabled = os.environ.get(DISTRIBUTED_ENV, "") not in ("", "0")
    if enabled:
        kwargs = {}
        for name, arg, cast in (("JAX_COORDINATOR_ADDRESS", "coordinator_address", str),
                                ("JAX_NUM_PROCESSES", "num_processes", int), ("JAX_PROCESS_ID", "process_id", int)):
            if os.environ.get(name):
                kwargs[arg] = cast(os.environ[name])
        jax.distributed.initialize(**kwargs)
    return enabled


def train(config: ZeroConfig, out_dir, *, resume: bool = False, progress: bool = True,
          callback: Callable[[str, int], None] | None = None, distributed: bool | None = None,
          log: Callable[[str], None] | None = None, time_limit: float | None = None, init=None,
          clock: Clock | None = None) -> RunResult:
    """Run (or resume) AlphaGo Zero training of ``config`` into ``out_dir``.

    Args:
      config: the run's configuration.
      out_dir: the run's directory (see the module docstring for its layout).
      resume: continue from the latest checkpoint in ``out_dir`` (start afresh if there is
        none). Without it, a directory that holds checkpoints is refused. A resumed run keeps
        its configuration; only ``iterations`` may differ (to extend a run).
      progress: show a tqdm progress bar (on stderr), its label naming the current phase.
      callback: called as ``callback(phase, iteration)`` before each phase of each iteration
        (``"selfplay"``, ``"train"``, ``"evaluate"``, ``"checkpoint"``; iteration counting from
        1) and with ``("done", iterations)`` at the end.
      distributed: call ``jax.distributed.initialize()`` first (None: per ``ALPHAGO_JAX_DISTRIBUTED``).
      log: where the per-evaluation lines, the programs' compile times and the time-limit
        decisions go (default: through tqdm to stdout).
      time_limit: seconds of wall time for this call, a hard budget: after each iteration's
        training the run checks that another iteration, the evaluation and checkpoint of both
        still fit before the deadline (``timing.plan_end``, from the times measured so far);
        if not, this iteration is the last, and its evaluation plays only the matches that
        fit (or none), saying which it left out. The run ends within the limit plus one
        iteration; ``--resume`` continues it.
      init: start the network (and nothing else: optimizer, buffer and games are new) from a
        network file, a training run's directory or a warm-start directory (``init_network``).
        Only for a new run: a directory that holds checkpoints keeps its own network.
      clock: where the run reads wall seconds and compile seconds (``timing.Clock``; default a
        ``timing.WallClock`` opened for the call). The phase times in metrics.csv and the time
        limit use it.

    Returns:
      A ``RunResult``.

    Raises:
      ValueError: a bad configuration, a directory holding another run, or (``CheckpointError``)
        a corrupted or foreign checkpoint directory; the message names the path.
    """
    if clock is not None:
        return _run(config, out_dir, resume, progress, callback, distributed, log, time_limit, init, clock)
    with WallClock() as wall:
        return _run(config, out_dir, resume, progress, callback, distributed, log, time_limit, init, wall)


def _run(config: ZeroConfig, out_dir, resume: bool, progress: bool, callback, distributed, log, time_limit, init,
         clock: Clock) -> RunResult:
    """``train``'s body, on an open ``clock``."""
    from tqdm.auto import tqdm

    session_start = clock.now()
    budget = TimeBudget(None if time_limit is None else max(0.0, float(time_limit)), session_start)
    initialize_distributed(distributed)
    out = pathlib.Path(out_dir).absolute()
    lead = jax.process_index() == 0  # the process that writes logs, plots and the sample game
    ckpt = Checkpointer(checkpoint_dir(out), kind=KIND, keep=config.keep)
    latest = ckpt.latest_step()
    if latest is not None and not resume:
        raise ValueError(f"{ckpt.directory}: holds checkpoints of a run (up to iteration {latest}); "
                         "pass --resume to continue it, or choose another output directory")
    saved = saved_config(out) if latest is not None else None
    if config.workers is None:
        # One per device, then fixed for the run's life: it can resume on other device counts.
        workers = saved.workers if saved is not None and saved.workers else jax.device_count()
        config = dataclasses.replace(config, workers=workers)
    if saved is not None:
        differences = _config_differences(saved, config)
        if differences:
            raise ValueError(f"{ckpt.directory / str(latest)}: the run there has another configuration "
                             f"({'; '.join(differences)}); resume it with its own settings")

    if init is not None and latest is not None:
        raise ValueError(f"{ckpt.directory}: holds a run to resume; --init starts a new run (drop it, or choose "
                         "another output directory)")
    started_from = init_network(init, config) if init is not None else None
    programs = build(config)
    state = programs.init(jax.random.PRNGKey(config.seed))
    chain = []  # the provenance of the network: what it started from
    elapsed = 0.0  # wall seconds of this run over all its sessions
    metadata = {}
    if latest is not None:
        restored = ckpt.restore(latest, target=state)
        state, metadata = restored.state, restored.metadata
        chain, elapsed = list(metadata.get("chain", [])), float(metadata.get("elapsed_s", 0.0))
    elif started_from is not None:
        fresh = learner.init_train_state(started_from.variables, config.optimizer)
        fresh = jax.device_put(fresh, jax.tree_util.tree_map(lambda x: x.sharding, state["train"]))
        state = {**state, "train": fresh, "best": fresh.variables}
        chain = network_chain(started_from)
    start = int(state["iteration"])
    metrics_path = out / "metrics.csv"
    logger = RunLogger(metrics_path, tensorboard_dir=out / "tb", resume_step=start if start > 0 else -1) if lead else None
    if logger and start > 0:
        _log_saved_row(logger, metrics_path, start, metadata)
    bar = tqdm(total=config.iterations, initial=min(start, config.iterations), desc="AlphaGo Zero",
               unit="it", disable=not (progress and lead), dynamic_ncols=True)
    say = log or (lambda text: tqdm.write(text) if lead else None)
    notify = callback or (lambda phase, iteration: None)
    gnugo = _gnugo_binary(config, say)
    timer = PhaseTimer(clock, say=say)

    def enter(phase, iteration):
        notify(phase, iteration)
        bar.set_description(f"AlphaGo Zero [{phase}]")

    def evaluate(iteration, key, play):
        nonlocal state
        with timer("eval", report=False):
            row, state = _evaluate(programs, config, state, key, iteration, out, gnugo=gnugo, say=say, play=play,
                                   timer=timer)
        say(f"iteration {iteration}: {_summary(row, config)}")
        return row

    if start == 0 and config.eval_games:
        # The untrained network: the baseline the later evaluations are compared with.
        if budget.left(clock.now()) > 0:
            enter("evaluate", 0)
            row = evaluate(0, jax.random.fold_in(state["key"], 1 << 30), _matches(config, 0, gnugo))
            row.update(timer.row(EVAL_PARTS))
            if logger:
                logger.log(0, {**row, "train_step": 0})
        else:
            say("time limit: no evaluation of the untrained network")

    for iteration in range(start + 1, config.iterations + 1):
        timer.reset()
        key, k_selfplay, k_train, k_eval = programs.split(state["key"])
        enter("selfplay", iteration)
        with timer("selfplay"):
            sp, buffer, stats = programs.selfplay(state["train"].variables, state["selfplay"], state["replay"],
                                                  k_selfplay)
            stats = dict(zip(STAT_NAMES, to_host(stats).sum(axis=1).tolist()))
            sizes = to_host(buffer.size)  # [W]
        state = {**state, "selfplay": sp, "replay": buffer}
        row = {"games": stats["games"], "positions": stats["positions"], "replay_size": int(sizes.sum()),
               "black_win_rate": stats["black_wins"] / max(stats["games"], 1),
               "selfplay_positions_per_s": config.selfplay_batch * config.selfplay_moves / timer.seconds["selfplay"]}
        row.update(_resign_metrics(config, stats, sp))

        enter("train", iteration)
        if int(sizes.min()) * programs.workers >= config.min_replay:  # every shard has its share
            with timer("train"):
                train_state, metrics = train_iteration(programs, state["train"], state["replay"], k_train,
                                                       config.train_steps)
            state = {**state, "train": train_state}
            row.update({k: float(np.mean(v)) for k, v in metrics.items()})
            row["train_steps_per_s"] = config.train_steps / timer.seconds["train"]
        row["train_step"] = int(state["train"].step)

        left = budget.left(clock.now())
        plan = _plan(config, timer, left, iteration, gnugo)
        if plan.last and iteration < config.iterations:
            say(f"time limit: iteration {iteration} is the last of this session ({max(0.0, left):.0f} s left, not "
                "enough for another iteration and the final evaluation); --resume continues")
        if plan.skipped:
            say(_skipped_note(iteration, plan, _match_costs(timer, plan.skipped), left))
        if plan.play:
            enter("evaluate", iteration)
            row.update(evaluate(iteration, k_eval, plan.play))
        state = {**state, "key": key, "iteration": replicated(np.int32(iteration), programs.mesh)}

        if plan.last or iteration % config.checkpoint_interval == 0:
            enter("checkpoint", iteration)
            saved_row = {k: v for k, v in {**row, **timer.row(EVAL_PARTS)}.items() if k != "checkpoint_s"}
            with timer("checkpoint", report=False):
                ckpt.save(iteration, state, metadata={
                    "config": config.to_dict(), "iteration": iteration, "train_step": row["train_step"],
                    "devices": programs.mesh.devices.size, "workers": programs.workers, "chain": chain,
                    "elapsed_s": elapsed + clock.now() - session_start,
                    "device": f"{programs.mesh.devices.size} x {programs.mesh.devices.flat[0].device_kind}",
                    "row": _jsonable(saved_row)})
        row.update(timer.row(EVAL_PARTS))
        if logger:
            logger.log(iteration, row)
        bar.set_postfix({k: f"{row[k]:.3g}" for k in ("loss", "win_random", "win_mcts") if k in row})
        bar.update(1)
        if plan.last:
            break
    bar.set_description("AlphaGo Zero")
    bar.close()
    notify("done", int(state["iteration"]))

    final = ckpt.latest_step()
    plot = sample = None
    if logger:
        logger.close()
        try:
            plot = plot_metrics(metrics_path, out / "metrics.png", keys=_plot_keys(metrics_path))
        except ValueError:  # nothing logged yet to plot
            plot = None
        sample = out / "sample.sgf" if (out / "sample.sgf").exists() else None
    ckpt.close()
    return RunResult(out_dir=out, checkpoint=ckpt.directory / str(final), metrics=metrics_path, plot=plot,
                     sample_game=sample, iterations=final, train_steps=int(state["train"].step))


EVAL_PARTS = tuple(f"eval_{m}" for m in MATCHES)
"""The timed parts of an evaluation: ``eval_<match>_s`` columns where the match was played."""


def _match_costs(timer: PhaseTimer, matches) -> dict:
    """The estimated seconds of each match (None: unknown). The match against the best network,
    before it is first played: about twice the one against random play (the network's search
    on both sides) plus that one's first compile (a program of its size to compile)."""
    cost = {m: timer.estimate(f"eval_{m}") for m in matches}
    random_s = timer.estimate("eval_random")
    if "best" in cost and cost["best"] is None and random_s is not None:
        cost["best"] = 2 * random_s + (timer.first_compile("eval_random") or 0.0)
    return cost


def _plan(config: ZeroConfig, timer: PhaseTimer, left: float, iteration: int, gnugo: str | None):
    """``timing.plan_end`` for the iteration whose training just ended, the same on every process."""
    matches = _matches(config, iteration, gnugo)
    estimates = [timer.estimate(p) for p in ("selfplay", "train")]
    plan = plan_end(left, final=iteration >= config.iterations,
                    due=bool(config.eval_interval) and iteration % config.eval_interval == 0,
                    matches=matches, cost=_match_costs(timer, matches),
                    iteration_s=sum(e for e in estimates if e is not None), checkpoint_s=timer.estimate("checkpoint"))
    if jax.process_count() == 1:
        return plan
    from jax.experimental import multihost_utils

    # Every process must stop after the same iteration and play the same matches: the first decides.
    code = int(plan.last) + sum(2 << i for i, m in enumerate(MATCHES) if m in plan.play)
    code = int(multihost_utils.broadcast_one_to_all(np.int32(code)))
    play = tuple(m for i, m in enumerate(MATCHES) if code & (2 << i))
    last = bool(code & 1)
    return plan._replace(last=last, play=play, skipped=tuple(m for m in matches if m not in play) if last else ())


def _skipped_note(iteration: int, plan, costs: Mapping[str, float | None], left: float) -> str:
    """The log line of a final evaluation shortened or skipped for lack of time."""
    what = "no final evaluation" if not plan.play else \
        f"a shortened final evaluation, without {', '.join(plan.skipped)}"
    known = [c for c in costs.values() if c is not None]
    about = f"; the matches left out take about {sum(known):.0f} s" if known else ""
    return f"time limit: iteration {iteration} gets {what} ({max(0.0, left):.0f} s left{about})"


def _jsonable(row: Mapping[str, Any]) -> dict:
    """A metrics row as JSON values (NaN and infinities as None), for the checkpoint's metadata."""
    out = {}
    for k, v in row.items():
        v = v.item() if hasattr(v, "item") else v
        out[k] = None if isinstance(v, float) and not np.isfinite(v) else v
    return out


def _log_saved_row(logger: RunLogger, metrics_path: pathlib.Path, iteration: int, metadata: Mapping) -> None:
    """Log the metrics row saved with the checkpoint of ``iteration`` when metrics.csv lacks it
    (the run was killed between writing the checkpoint and logging its row)."""
    row = metadata.get("row")
    if row is not None and iteration not in read_metrics(metrics_path).get("step", np.zeros(0)):
        logger.log(iteration, row)


def _plot_keys(metrics_csv) -> list[list[str]]:
    columns = read_metrics(metrics_csv)
    panels = [[k for k in panel if k in columns and np.any(np.isfinite(columns[k]))] for panel in PLOT_PANELS]
    return [p for p in panels if p]


def network_of_run(out_dir, *, iteration: int | None = None, which: str = "latest"):
    """The network of a run's checkpoint as a ``nets.saved.SavedNetwork`` (numpy variables).

    Args:
      out_dir: the run's directory.
      iteration: the checkpoint (default: the latest).
      which: ``"latest"`` (the network being trained) or ``"best"`` (the gated best one).

    Raises:
      CheckpointError / ValueError: naming the path, for a directory without a readable run.
    """
    from alphago_jax.nets.saved import SavedNetwork

    if which not in ("latest", "best"):
        raise ValueError(f"which must be 'latest' or 'best', got {which!r}")
    config = saved_config(out_dir)
    if config is None:
        raise ValueError(f"{checkpoint_dir(out_dir)}: no checkpoint of a training run")
    with Checkpointer(checkpoint_dir(out_dir), kind=KIND, read_only=True) as ckpt:
        restored = ckpt.restore(iteration)
    where = checkpoint_dir(out_dir) / str(restored.step)
    meta = restored.metadata
    try:
        train_state = restored.state["train"]
        variables = restored.state["best"] if which == "best" else {k: train_state[k] for k in ("params", "batch_stats")}
        steps = int(np.asarray(train_state["step"]))
    except (KeyError, TypeError) as e:
        raise CheckpointError(f"{where}: not an AlphaGo Zero run state (missing {e})") from None
    variables = jax.tree_util.tree_map(lambda x: np.asarray(x, np.float32), variables)
    info = {"run": str(pathlib.Path(out_dir).absolute()), "iteration": restored.step, "train_steps": steps,
            "network": which, "config": config.to_dict()}
    this_run = {"step": "alphago-jax train", "run": info["run"], "iteration": restored.step, "train_steps": steps,
                "wall_s": round(float(meta.get("elapsed_s", 0.0)), 1), "device": meta.get("device")}
    info["chain"] = list(meta.get("chain", [])) + [this_run]
    return SavedNetwork(net=config.net, variables=variables, board_size=config.board_size, komi=config.komi,
                        info=info, path=where)


WARM_START_FILE = "network.msgpack"
"""The network file in a warm-start directory (``alphago-jax warm-start --out DIR``)."""


def init_network(source, config: ZeroConfig):
    """The network a new run of ``config`` starts from (``train(..., init=source)``).

    ``source``: a network file (``export_network``, ``save_network``), a training run's directory
    (its latest network), or a warm-start directory (holding ``WARM_START_FILE``). Returns a
    ``nets.saved.SavedNetwork`` of ``config.net``: auxiliary heads the run has and the source
    lacks (e.g. the shipped network, a warm start) start freshly initialised; heads the source
    has and the run lacks are dropped.

    Raises:
      ValueError: naming ``source``: nothing usable there, or a network of another shape or
        board size than ``config``'s.
    """
    from alphago_jax.nets.saved import load_network

    path = pathlib.Path(source)
    if path.is_file():
        saved = load_network(path)
    elif (path / WARM_START_FILE).is_file():
        saved = load_network(path / WARM_START_FILE)
    elif checkpoint_dir(path).is_dir():
        saved = network_of_run(path)
    else:
        raise ValueError(f"--init {source}: not a network file, a training run's directory or a warm-start "
                         "directory")
    want, got = config.net, saved.net
    shape = ("blocks", "filters", "value_hidden")
    if (any(getattr(want, k) != getattr(got, k) for k in shape + ("global_pool",))
            or saved.board_size != config.board_size):
        def described(n, size):
            sizes = ", ".join(f"{k}={getattr(n, k)}" for k in shape)
            return sizes + (", global pooling" if n.global_pool else "") + f", board {size}"

        raise ValueError(f"--init {source}: its network ({described(got, saved.board_size)}) does not fit this "
                         f"run's ({described(want, config.board_size)}); set the run's sizes to match")
    if (want.ownership, want.score) == (got.ownership, got.score):
        return saved
    fresh = jax.jit(nets.init_variables, static_argnums=(0, 2))(want, jax.random.PRNGKey(config.seed),
                                                                 config.board_size)
    fresh = jax.tree_util.tree_map(np.asarray, fresh)
    # The heads are top-level modules: every other module's arrays come from the source.
    variables = {col: {name: saved.variables[col].get(name, module) for name, module in fresh[col].items()}
                 for col in fresh}
    return dataclasses.replace(saved, net=want, variables=variables)


def network_chain(saved) -> list[dict]:
    """The provenance of a loaded network (``SavedNetwork``): every run and init behind it, oldest
    first, each a dict (``step``, and what it knows: command, run, steps, seconds, device)."""
    info = dict(saved.info)
    chain = list(info.pop("chain", []))
    if not chain:  # a file from before chains were recorded: its own description is the only step
        chain = [{"step": "network file", **{k: v for k, v in info.items() if k != "config"}}]
    return chain + [{"step": "init", "path": str(saved.path)}]


def export_network(out_dir, path, *, iteration: int | None = None, which: str = "latest",
                   info: Mapping[str, Any] | None = None) -> pathlib.Path:
    """Write the network of a run's checkpoint (``network_of_run``) to one file
    (``nets.saved.save_network``), for the players; ``info`` is added to the file's description
    (which already names the run, the iteration, the training steps and the configuration)."""
    from alphago_jax.nets.saved import network_config, save_network

    saved = network_of_run(out_dir, iteration=iteration, which=which)
    return save_network(path, saved.variables, **network_config(saved.net), board_size=saved.board_size,
                        komi=saved.komi, info={**saved.info, **dict(info or {})})


def plot_run(out_dir) -> pathlib.Path:
    """Draw ``out_dir/metrics.csv`` (losses, win rates, Elo) into ``out_dir/metrics.png``."""
    path = pathlib.Path(out_dir) / "metrics.csv"
    if not path.is_file():
        raise ValueError(f"{path}: no metrics file: is {out_dir} the output directory of a training run?")
    return plot_metrics(path, pathlib.Path(out_dir) / "metrics.png", keys=_plot_keys(path) or None)


__all__ = [
    "DEFAULT_PRESET",
    "KIND",
    "WARM_START_FILE",
    "PLOT_PANELS",
    "PRESETS",
    "Programs",
    "RunResult",
    "STAT_NAMES",
    "ZeroConfig",
    "build",
    "checkpoint_dir",
    "export_network",
    "init_network",
    "network_chain",
    "network_of_run",
    "initialize_distributed",
    "num_workers",
    "plot_run",
    "replicated",
    "saved_config",
    "to_host",
    "train",
    "train_iteration",
    "with_overrides",
]
