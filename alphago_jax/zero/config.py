"""AlphaGo Zero's settings: ``ZeroConfig``, its presets (``PRESETS``) and ``--set`` overrides.

A run's config is saved with every checkpoint; ``saved_config`` reads it back, and a resumed
run may change only the settings in ``_FREE_ON_RESUME``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from alphago_jax import checks, features, games, nets
from alphago_jax.games.history import WithHistory
from alphago_jax.search import SYMMETRIES, SearchConfig, rollout_evaluator
from alphago_jax.train import jobs
from alphago_jax.train.jobs import parse_value
from alphago_jax.train.optimizer import OptimizerConfig

KIND = "zero"
"""The ``kind`` of this job's checkpoints."""
_SEARCHES = ("puct", "gumbel")


# ----------------------------------------------------------------------------- configuration

@dataclasses.dataclass(frozen=True)
class ZeroConfig:
    """Everything that defines a run (frozen, hashable; saved with every checkpoint).

    Attributes:
      board_size: Go on a ``board_size`` x ``board_size`` board.
      komi: points added to white's score.
      max_moves: moves after which a game ends (None: Go's ``2 * size * size``).
      pass_after: no pass before this move unless nothing else is legal (0: the plain rules).
      inputs: the network's input planes (``features.zero.INPUTS``): ``"stones"``, AlphaGo Zero's 17;
        ``"liberties"``, those and 6 planes of chains with 1, 2, 3+ liberties (KataGo's inputs).
      blocks: residual blocks of the ``DualResNet``.
      filters: channels of its convolutions.
      value_hidden: hidden units of its value head.
      ownership_weight: > 0: KataGo's ownership head (Wu 2019) and its loss term, with this weight.
      score_weight: > 0: KataGo's score-margin head and its loss term (Huber, in points), with this weight.
      global_pool: KataGo's global pooling bias in the residual tower.
      size_agnostic: fully convolutional heads: one set of parameters for every board size.
      extra_sizes: board sizes played and trained on beside ``board_size`` (a curriculum; needs ``size_agnostic``).
      size_weights: share of the training steps of each size, ``board_size`` first (empty: equal shares).
      num_simulations: simulations per self-play move.
      search: ``"puct"`` (AlphaGo Zero) or ``"gumbel"`` (Gumbel AlphaZero, Danihelka et al. 2022).
      gumbel_considered: ``"gumbel"``: root moves drawn by Gumbel-top-k.
      c_puct: PUCT's exploration constant.
      dirichlet_alpha: ``"puct"``: concentration of the root's Dirichlet noise.
      dirichlet_fraction: ``"puct"``: weight of that noise in the root's priors.
      temperature_moves: ``"puct"``: moves of a game drawn from the visit counts, the most visited after.
      symmetries: board symmetries the network is evaluated under: ``"none"``, ``"random"`` or ``"all"``.
      selfplay_batch: self-play games in flight.
      selfplay_moves: moves of each game per iteration.
      full_search_fraction: moves with the full search, the others fast (KataGo's playout cap; 1: all full).
      random_start_fraction: share of self-play games that start from ``random_start_moves`` random
        stones (``selfplay.random_starts``, KataGo's varied starts; 0: all start on an empty board).
      random_start_moves: most uniformly random moves that open such a game (1 to this many, drawn per game).
      fast_simulations: simulations of a fast search, without root noise (None: ``num_simulations // 4``).
      resign_threshold: root value below which the player to move resigns (None: no resignation).
      no_resign_fraction: fraction of games that never resign, to recalibrate the threshold from.
      false_resign_target: most resigned games not lost that the threshold allows (None: a fixed threshold).
      replay_capacity: positions the replay buffer keeps, the latest.
      min_replay: positions in the buffer before training starts.
      train_batch: examples per training step.
      train_steps: training steps per iteration.
      optimizer: the training step's ``OptimizerConfig``.
      workers: groups of games, each with its replay shard and random stream (None: one per device).
      iterations: iterations of the run.
      eval_interval: an evaluation every this many iterations (0: at the start and the end only).
      eval_games: games against each opponent per evaluation, half with each colour (0: no evaluation).
      eval_simulations: the network's simulations per move in evaluation games.
      eval_leaf_batch: most leaves per network call of the evaluation search (``eval_leaves``).
      baseline_simulations: random playouts per move of the pure-MCTS baseline.
      baseline_leaf_batch: most playouts per round of the baseline's search (``baseline_leaves``).
      gate: score the latest network needs against the best to become the best (None: no such match).
      gnugo_level: GNU Go's ``--level`` (0 to 10) in evaluation games against it (None: no such games).
      gnugo_games: games against GNU Go per evaluation, half with each colour.
      gnugo_path: the GNU Go binary (None: ``gtp_client.find_gnugo``).
      katago_visits: KataGo's visits per move in evaluation games against it (None: no such
        games; a run without KataGo installed says so and plays none: ``alphago-jax katago install``).
      katago_games: games against KataGo per evaluation, half with each colour.
      keep: checkpoints kept.
      seed: the run's random stream.
      checkpoint_interval: a checkpoint after every this many iterations and after the last.
    """

    board_size: int = 5
    komi: float = 0.5
    max_moves: int | None = None
    pass_after: int = 0
    inputs: str = "stones"
    blocks: int = 2
    filters: int = 32
    value_hidden: int = 32
    ownership_weight: float = 0.0
    score_weight: float = 0.0
    global_pool: bool = False
    size_agnostic: bool = False
    extra_sizes: tuple[int, ...] = ()
    size_weights: tuple[float, ...] = ()
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
    random_start_fraction: float = 0.0
    random_start_moves: int = 0
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
    katago_visits: int | None = None
    katago_games: int = 20
    keep: int = 2
    seed: int = 0
    checkpoint_interval: int = 1

    def __post_init__(self):
        self.game  # validates the game's settings
        checks.ints(self, 0, "blocks", "temperature_moves", "min_replay", "eval_interval", "eval_games", "seed")
        checks.ints(self, 1, "filters", "value_hidden", "num_simulations", "gumbel_considered", "selfplay_batch",
                    "selfplay_moves", "replay_capacity", "train_batch", "train_steps", "iterations", "eval_simulations",
                    "eval_leaf_batch", "baseline_simulations", "baseline_leaf_batch", "keep", "checkpoint_interval")
        checks.choice(self, "search", _SEARCHES)
        checks.choice(self, "symmetries", SYMMETRIES)
        checks.number(self, "c_puct", "> 0")
        checks.number(self, "dirichlet_alpha", "> 0")
        checks.number(self, "dirichlet_fraction", "[0, 1]")
        checks.number(self, "ownership_weight", ">= 0")
        checks.number(self, "score_weight", ">= 0")
        checks.flags(self, "global_pool", "size_agnostic")
        checks.require(self, "inputs", self.inputs in features.zero.INPUTS,
                       f"must be one of {', '.join(features.zero.INPUTS)}")
        checks.require(self, "filters", self.filters >= 2 or not (self.global_pool or self.size_agnostic),
                       "must be at least 2 with global_pool or size_agnostic (some channels pool, the others "
                       "get the bias)")
        self._check_sizes()
        self._check_selfplay()
        self._check_evaluation()
        if self.workers is not None:
            self._check_workers()
        checks.require(self, "min_replay", self.min_replay <= self.replay_capacity,
                       f"must be at most replay_capacity ({self.replay_capacity})")
        checks.require(self, "optimizer", isinstance(self.optimizer, OptimizerConfig), "must be an OptimizerConfig")

    def _check_sizes(self) -> None:
        sizes = self.extra_sizes
        ok = isinstance(sizes, tuple) and all(checks.is_int(n) and 2 <= n <= 19 for n in sizes)
        checks.require(self, "extra_sizes", ok, "must be a list of board sizes from 2 to 19")
        checks.require(self, "extra_sizes", len(set(sizes + (self.board_size,))) == len(sizes) + 1,
                       f"must be distinct, and other than board_size ({self.board_size})")
        checks.require(self, "extra_sizes", not sizes or self.size_agnostic,
                       "needs size_agnostic=true (one set of parameters for every size)")
        weights = self.size_weights
        ok = isinstance(weights, tuple) and all(checks.is_number(w) and w >= 0 for w in weights)
        checks.require(self, "size_weights", ok and (not weights or (len(weights) == len(sizes) + 1 and sum(weights) > 0)),
                       f"must be empty or {len(sizes) + 1} numbers >= 0 (board_size first), not all 0")

    def _check_selfplay(self) -> None:
        checks.number(self, "full_search_fraction", "(0, 1]")
        checks.number(self, "random_start_fraction", "[0, 1]")
        checks.ints(self, 0, "random_start_moves")
        checks.require(self, "random_start_moves", self.random_start_fraction == 0 or self.random_start_moves >= 1,
                       "must be at least 1 when random_start_fraction is above 0")
        if self.fast_simulations is not None:
            checks.ints(self, 1, "fast_simulations")
            checks.require(self, "fast_simulations", self.fast_simulations <= self.num_simulations,
                           f"must be at most num_simulations ({self.num_simulations})")
        checks.number(self, "resign_threshold", "[-1, 1]", none="no resignation")
        checks.number(self, "no_resign_fraction", "[0, 1]")
        checks.number(self, "false_resign_target", "(0, 1]", none="a fixed threshold")

    def _check_evaluation(self) -> None:
        checks.require(self, "eval_games", self.eval_games % 2 == 0,
                       "must be even (each opening is played with both colours)")
        checks.number(self, "gate", "(0, 1]", none="no match against the best")
        if self.gnugo_level is not None:
            checks.ints(self, 0, "gnugo_level")
        checks.ints(self, 2, "gnugo_games")
        checks.require(self, "gnugo_games", self.gnugo_games % 2 == 0, "must be even (half the games with each colour)")
        path_ok = self.gnugo_path is None or (isinstance(self.gnugo_path, str) and bool(self.gnugo_path))
        checks.require(self, "gnugo_path", path_ok, "must be None (find GNU Go) or the path of the GNU Go binary")
        if self.katago_visits is not None:
            checks.ints(self, 1, "katago_visits")
        checks.ints(self, 2, "katago_games")
        checks.require(self, "katago_games", self.katago_games % 2 == 0, "must be even (half the games with each colour)")

    def _check_workers(self) -> None:
        checks.ints(self, 1, "workers")
        for name in ("selfplay_batch", "replay_capacity", "train_batch"):
            checks.require(self, name, getattr(self, name) % self.workers == 0,
                           f"must be a multiple of workers ({self.workers})")
        checks.require(self, "eval_games", (self.eval_games // 2) % self.workers == 0,
                       f"must be a multiple of 2 * workers ({2 * self.workers})")

    # -- derived objects ---------------------------------------------------------------------

    @property
    def sizes(self) -> tuple[int, ...]:
        """Every board size of the run, ``board_size`` first."""
        return (self.board_size,) + self.extra_sizes

    def at_size(self, size: int) -> "ZeroConfig":
        """This config on one of its sizes alone (no curriculum): the programs of that size."""
        return dataclasses.replace(self, board_size=size, extra_sizes=(), size_weights=())

    def steps_per_size(self) -> tuple[int, ...]:
        """The training steps of an iteration on each of ``sizes``, in proportion to
        ``size_weights`` (largest remainders), ``train_steps`` in all."""
        weights = self.size_weights or (1.0,) * len(self.sizes)
        shares = [self.train_steps * w / sum(weights) for w in weights]
        steps = [int(x) for x in shares]
        for i in sorted(range(len(shares)), key=lambda i: steps[i] - shares[i])[:self.train_steps - sum(steps)]:
            steps[i] += 1
        return tuple(steps)

    @property
    def game(self) -> WithHistory:
        """Go with the last 8 boards kept in the state (what the 17 planes need)."""
        return WithHistory(games.make("go", size=self.board_size, komi=self.komi, max_moves=self.max_moves,
                                      pass_after=self.pass_after), boards=8)

    @property
    def input_planes(self):
        """One state -> float32[S, S, C], the network's input planes (``inputs``)."""
        return features.zero.planes_function(self.inputs)

    @property
    def net(self) -> nets.DualResNet:
        """The dual network, with the auxiliary heads whose weights are > 0."""
        return nets.DualResNet(in_planes=features.zero.num_planes(self.inputs), blocks=self.blocks,
                               filters=self.filters, value_hidden=self.value_hidden,
                               ownership=self.ownership_weight > 0, score=self.score_weight > 0,
                               global_pool=self.global_pool, size_agnostic=self.size_agnostic)

    @property
    def selfplay_search(self) -> SearchConfig:
        """Self-play's full search: ``search`` with root noise, moves drawn early in a game."""
        return SearchConfig(num_simulations=self.num_simulations, algorithm=self.search, c_puct=self.c_puct,
                            dirichlet_alpha=self.dirichlet_alpha, dirichlet_fraction=self.dirichlet_fraction,
                            temperature=1.0, temperature_moves=self.temperature_moves,
                            gumbel_considered=self.gumbel_considered)

    @property
    def playout_cap(self) -> bool:
        """Whether self-play randomizes its playout cap (``full_search_fraction < 1``)."""
        return self.full_search_fraction < 1

    @property
    def random_start(self) -> tuple[int, float]:
        """``(random_start_moves, random_start_fraction)``, as ``selfplay.selfplay`` takes them."""
        return self.random_start_moves, self.random_start_fraction

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
        tuples = {f.name for f in dataclasses.fields(cls) if isinstance(f.default, tuple)}  # JSON gives lists
        return cls(**{k: tuple(v) if k in tuples and isinstance(v, list) else v for k, v in d.items()})


def _divisor_up_to(n: int, most: int) -> int:
    """The largest divisor of ``n`` that is at most ``most`` (at least 1)."""
    return max(k for k in range(1, min(most, n) + 1) if n % k == 0)


PRESETS: dict[str, ZeroConfig] = {
    # The default: 5x5 Go on a CPU in minutes (docs/results.md).
    "tiny": ZeroConfig(),
    # The smallest run that exercises every part (tests, CI): seconds once compiled.
    "smoke": ZeroConfig(
        board_size=5, max_moves=16, blocks=1, filters=8, value_hidden=8, num_simulations=4,
        temperature_moves=4, selfplay_batch=8, selfplay_moves=16, replay_capacity=1024, min_replay=32,
        train_batch=16, train_steps=4, workers=4, iterations=3, eval_interval=0, eval_games=8,
        eval_simulations=4, baseline_simulations=4, keep=2),
    # One accelerator, hours: 2,048 games in flight, 16 moves of each per iteration; an evaluation
    # every 25 iterations, its searches batching leaves; a checkpoint (the whole replay buffer)
    # every 4 iterations. Its throughput and the share of each phase: docs/benchmarks.md.
    "9x9": ZeroConfig(
        board_size=9, komi=7.5, pass_after=40, blocks=6, filters=64, value_hidden=64, num_simulations=128,
        dirichlet_alpha=0.3, temperature_moves=16, selfplay_batch=2048, selfplay_moves=16,
        replay_capacity=500_000, min_replay=20_000, train_batch=512, train_steps=256,
        optimizer=OptimizerConfig(kind="sgd", learning_rate=2e-2, momentum=0.9, weight_decay=1e-4,
                                  schedule="piecewise", boundaries=(100_000, 200_000)),
        iterations=1000, eval_interval=25, eval_games=128, eval_simulations=128, eval_leaf_batch=8,
        baseline_simulations=200, baseline_leaf_batch=40, checkpoint_interval=4),
    # AlphaGo Zero's network (19 residual blocks of 256 filters) and 800 simulations on one
    # accelerator, days to weeks (a pod splits the games over its devices): 1,024 games in flight
    # feed the network batches of 1,024.
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


_FREE_ON_RESUME = ("iterations", "gnugo_level", "gnugo_games", "gnugo_path", "katago_visits", "katago_games",
                   "eval_leaf_batch", "baseline_leaf_batch",
                   "checkpoint_interval")
"""The settings a resumed run may change: its length, the evaluation against GNU Go, how the
evaluation's searches batch their leaves and how often it checkpoints (which touch nothing of the
run's state)."""


def config_differences(a: ZeroConfig, b: ZeroConfig) -> list[str]:
    """``"name: a vs b"`` for each setting that differs, those in ``_FREE_ON_RESUME`` left out."""
    da, db = a.to_dict(), b.to_dict()
    return [f"{k}: {da[k]!r} vs {db[k]!r}" for k in da if k not in _FREE_ON_RESUME and da[k] != db[k]]
