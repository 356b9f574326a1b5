"""AlphaGo Zero's settings: ``ZeroConfig``, its presets (``PRESETS``) and ``--set`` overrides.

A run's config is saved with every checkpoint; ``saved_config`` reads it back, and a resumed
run may change only the settings in ``_FREE_ON_RESUME``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

import numpy as np

from alphago_jax import features, games, nets
from alphago_jax.games.history import WithHistory
from alphago_jax.search import SearchConfig, rollout_evaluator
from alphago_jax.train import jobs
from alphago_jax.train.jobs import parse_value
from alphago_jax.train.learner import OptimizerConfig

KIND = "zero"
"""The ``kind`` of this job's checkpoints."""
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
    small, e.g. 0.02), ``global_pool`` the global pooling bias in the residual tower,
    ``size_agnostic`` fully convolutional heads with global pooling (one set of parameters for
    every board size, so that ``--init`` can start from a network of another size). The replay
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
    after GNU Go's cleanup phase (``zero.external_eval``): a reference nobody here wrote, so
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
    size_agnostic: bool = False
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
        for name in ("global_pool", "size_agnostic"):
            if not isinstance(getattr(self, name), bool):
                bad(name, "must be true or false")
        if (self.global_pool or self.size_agnostic) and self.filters < 2:
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
                               score=self.score_weight > 0, global_pool=self.global_pool,
                               size_agnostic=self.size_agnostic)

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
    # Measured since on an H200 (docs/benchmarks.md, "Accelerator check"): bench_zero gives 6,162
    # self-play positions/s at 2,048 games in flight, the main job 5,483 (an iteration's
    # self-play in 6 s, training 1.4 s), and evaluation takes 13% of the wall time.
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
    # dominates: bench_nets on an H200 in bfloat16 gave this network (20 blocks of 256 with the
    # stem) 30.7k positions/s at batch 256 and 35.0k at 1,024, about 580 TFLOP/s, so 1,024 games
    # in flight feed the network batches of 1,024: a move of 800 simulations for all of them
    # takes about 23 s. Device memory: trajectories 5.5 MB per game (5.6 GB), search trees about 15 MB per
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


def config_differences(a: ZeroConfig, b: ZeroConfig) -> list[str]:
    da, db = a.to_dict(), b.to_dict()
    return [f"{k}: {da[k]!r} vs {db[k]!r}" for k in da if k not in _FREE_ON_RESUME and da[k] != db[k]]
