"""AlphaGo's value network: self-play data from the RL policy, regression on the outcome, and the
comparison with rollouts (Silver et al. 2016; the ``alphago-jax value-train`` command).

``train_value(config, out_dir)`` runs three phases, each resumable:

1. Data: ``config.games`` games of the paper's sampling (``reinforce.value_games``: SL policy
   moves up to a random step U, one uniformly random move, then the RL policy to the end), in
   chunks of ``config.chunk_games`` (split over the devices: ``reinforce.on_devices``); one
   position per game, written as dataset shards in the run directory (``data/train-*.npz``,
   ``data/held_out-*.npz``: every ``held_out_every``-th chunk is held out, so held-out
   positions come from other games) with a ``manifest.json``.
   A chunk's games depend only on the seed and the chunk's index, and a shard is written
   atomically, so a killed run redoes at most the chunk it was in.
2. Training: ``ValueNet`` on the 49 planes, mean squared error ``(z - v(s))^2`` with ``z`` the
   outcome for the player to move, SGD with momentum, each position under a random board
   symmetry, through ``supervised.fit`` (checkpoints of kind ``"value"``, held-out MSE; data
   parallel over all devices).
3. Comparison: on ``compare_positions`` held-out positions, the value network's MSE against the
   MSE of the rollout policy's estimate (the mean outcome of ``rollouts`` rollouts from each
   position, by ``config.rollout_run``'s policy, to the end of the game), the paper's Figure 2b.

Layout of ``out_dir``: ``data/`` (the positions), ``checkpoints/``, ``metrics.csv``,
``metrics.png``, ``comparison.json``.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import checks, nets
from alphago_jax.alphago import positions
from alphago_jax.alphago.dataset import save_manifest, save_shard
from alphago_jax.alphago.reinforce import devices_for, on_devices, self_play_rules, value_games
from alphago_jax.alphago.supervised import (FitConfig, RunResult, _finish, batch_planes, fit, held_out_metrics,
                                            load_trained, make_learner)
from alphago_jax.games.base import BLACK
from alphago_jax.playout import play_out
from alphago_jax.train.jobs import Job
from alphago_jax.train.mesh import data_mesh, replicate

KIND = "value"
VALUE_FIELDS = positions.STATE_FIELDS + ("winner",)


@dataclasses.dataclass(frozen=True)
class ValueConfig(FitConfig):
    """The value job: ``FitConfig`` (training) plus data generation, network and comparison.

    Attributes:
      sl_run, rl_run: the SL and RL policies' run directories (the games' players).
      rollout_run: the rollout policy's run directory (the comparison); "" to skip it.
      komi: of the self-play games.
      games: self-play games, one position each; chunk_games: games per jitted call and shard.
      u_max: the random move's step U is drawn from 0 .. u_max.
      held_out_every: every this many-th chunk is held out (chunk 0, then every n-th).
      filters, layers, hidden: ``ValueNet(filters, layers, hidden)``; ladders: read the ladder
        planes (``supervised.batch_planes``).
      rollouts: rollouts per position for the rollout estimate.
      compare_positions: held-out positions compared (at most the held-out split).
    """

    sl_run: str = ""
    rl_run: str = ""
    rollout_run: str = ""
    komi: float = 7.5
    games: int = 4096
    chunk_games: int = 256
    u_max: int = 60
    held_out_every: int = 8
    filters: int = 64
    layers: int = 6
    hidden: int = 64
    ladders: bool = True
    rollouts: int = 16
    compare_positions: int = 512
    learning_rate: float = 0.003

    def __post_init__(self):
        super().__post_init__()
        checks.require(self, "sl_run", bool(self.sl_run), "must name the SL policy's run directory")
        checks.require(self, "rl_run", bool(self.rl_run), "must name the RL policy's run directory")
        checks.ints(self, 1, "games", "chunk_games", "held_out_every", "filters", "layers", "hidden", "rollouts",
                    "compare_positions")
        checks.ints(self, 0, "u_max")
        checks.flags(self, "ladders")
        checks.require(self, "held_out_every", self.held_out_every >= 2 and self.chunks >= 2,
                       f"must be at least 2, with at least 2 chunks of games (games {self.games}, "
                       f"chunk_games {self.chunk_games})")

    @property
    def chunks(self) -> int:
        return -(-self.games // self.chunk_games)

    @property
    def net_spec(self) -> dict:
        return {"board_size": self.board_size, "filters": self.filters, "layers": self.layers, "hidden": self.hidden,
                "ladders": self.ladders}

    def split_of(self, chunk: int) -> str:
        return "held_out" if chunk % self.held_out_every == 0 else "train"


# ------------------------------------------------------------------------------- phase 1

def generate(config: ValueConfig, data_dir, progress: bool = True) -> dict:
    """Write the value positions (phase 1) into ``data_dir``, skipping chunks already written;
    returns the manifest (positions and games per split)."""
    from tqdm.auto import tqdm

    sl = load_trained(config.sl_run, ("sl",))
    rl = load_trained(config.rl_run, ("rl",))
    if sl.board_size != config.board_size or rl.board_size != config.board_size:
        raise ValueError(f"the policies play {sl.board_size}x{sl.board_size} and {rl.board_size}x{rl.board_size}, "
                         f"the value job is {config.board_size}x{config.board_size}")
    if sl.spec != rl.spec:
        raise ValueError(f"{config.rl_run} and {config.sl_run}: the RL policy has another network "
                         f"({rl.spec} vs {sl.spec})")
    game = self_play_rules(config.board_size, config.komi)
    net = sl.net
    logits_fn = lambda params, planes: net.apply({"params": params}, planes)  # noqa: E731
    mesh = data_mesh(config.chunk_games, "ValueConfig.chunk_games")  # each device its share of a chunk's games
    n = devices_for(mesh)

    def chunk_of_games(sl_p, rl_p, key):
        return value_games(game, logits_fn, config.chunk_games // n, config.u_max, sl_p, rl_p, key,
                           ladders=sl.spec.get("ladders", True))

    play = jax.jit(chunk_of_games if mesh is None else on_devices(chunk_of_games, mesh))
    players = (sl.params, rl.params) if mesh is None else replicate((sl.params, rl.params), mesh)
    data = pathlib.Path(data_dir)
    data.mkdir(parents=True, exist_ok=True)
    base = jax.random.fold_in(jax.random.PRNGKey(config.seed), 1)
    counts = {"train": [0, 0], "held_out": [0, 0]}
    for chunk in tqdm(range(config.chunks), desc="value games", unit="chunk", disable=not progress):
        split = config.split_of(chunk)
        path = data / f"{split}-{chunk:05d}.npz"
        if not path.exists():
            rows = {k: np.asarray(v) for k, v in play(*players, jax.random.fold_in(base, chunk)).items()}
            keep = rows.pop("valid")
            shard = {k: rows[k][keep] for k in rows}
            shard["move"] = np.full(int(keep.sum()), -1, np.int16)  # no move label: value data
            shard["game"] = (chunk * config.chunk_games + np.flatnonzero(keep)).astype(np.int32)
            save_shard(path, shard)
        with np.load(path) as shard:
            counts[split][0] += len(shard["to_play"])
            counts[split][1] += config.chunk_games
    manifest = {"size": config.board_size, "source": "value self-play", "komi": config.komi,
                "positions": {k: v[0] for k, v in counts.items()}, "games_played": {k: v[1] for k, v in counts.items()}}
    save_manifest(data, manifest)
    return manifest


# ------------------------------------------------------------------------------- phase 2

def value_learner(config: ValueConfig):
    """Squared error of ``ValueNet`` on the 49 planes against the outcome for the player to move."""
    net = nets.ValueNet(filters=config.filters, trunk_layers=config.layers, hidden=config.hidden)

    def init_params(key):
        return nets.init_variables(net, key, size=config.board_size)["params"]

    def outputs(params, states, rows):
        v = net.apply({"params": params}, batch_planes(states, value_net=True, ladders=config.ladders))
        return jnp.square(v - positions.player_outcome(rows)), {}

    def measures(params, states, rows):
        err, _ = outputs(params, states, rows)
        return {"mse": err}

    return make_learner(config, init_params, outputs, measures, VALUE_FIELDS)


# ------------------------------------------------------------------------------- phase 3

def rollout_estimates(game, policy, params, rows: dict, rollouts: int, key, batch: int = 32) -> np.ndarray:
    """float32[P]: the mean outcome, for the player to move, of ``rollouts`` rollouts of the
    rollout policy from each row's position to the end of the game (the rules' move limit).

    Rows go ``batch`` at a time, each repeated ``rollouts`` times in one jitted play-out."""
    sample = jax.vmap(policy.sample, in_axes=(None, 0, 0))

    @jax.jit
    def estimate(chunk, key):
        states = positions.row_states(game, chunk)
        many = jax.tree_util.tree_map(lambda x: jnp.repeat(x, rollouts, axis=0), states)
        final, _ = play_out(game, many, key, None,
                            lambda s, k: sample(params, s.inner, jax.random.split(k, s.to_play.shape[0])))
        r = jax.vmap(game.returns)(final)
        mine = jnp.where(many.to_play == BLACK, r[:, 0], r[:, 1])
        return mine.reshape(-1, rollouts).mean(axis=1)

    out = []
    for i, (chunk, valid) in enumerate(positions.padded_batches(rows, batch)):
        est = np.asarray(estimate({k: jnp.asarray(v) for k, v in chunk.items()}, jax.random.fold_in(key, i)))
        out.append(est[valid])
    return np.concatenate(out).astype(np.float32)


def compare(config: ValueConfig, params, data_dir) -> dict:
    """The value network's and the rollout estimate's MSE on the same held-out positions."""
    learn = value_learner(config)
    rows = positions.sample_rows(data_dir, "held_out", config.compare_positions, config.seed + 1, VALUE_FIELDS)
    z = np.asarray(rows["winner"], np.float32) * np.asarray(rows["to_play"], np.float32)
    value = held_out_metrics(learn.evaluate, params, rows, 64, prefix="")["mse"]
    result = {"positions": int(len(z)), "value_mse": float(value), "outcome_mean": float(np.mean(z)),
              "constant_mse": float(np.mean(np.square(z - np.mean(z))))}
    if config.rollout_run:
        rollout = load_trained(config.rollout_run, ("rollout",))
        game = self_play_rules(config.board_size, config.komi)
        est = rollout_estimates(game, rollout.net, rollout.params, rows, config.rollouts,
                                jax.random.PRNGKey(config.seed + 2))
        result.update({"rollout_mse": float(np.mean(np.square(z - est))), "rollouts": config.rollouts})
    return result


def train_value(config: ValueConfig, out_dir, *, resume: bool = False, progress: bool = True) -> RunResult:
    """Generate the value data, train the value network, compare it with rollouts (see the
    module docstring). The summary holds the last held-out MSE and the comparison.

    Raises:
      ValueError: missing or foreign policy runs, another board size, a directory holding
        another run, a corrupted checkpoint (the message names the path).
    """
    out = pathlib.Path(out_dir).absolute()
    job = Job(out, KIND, config, config.steps, resume=resume, keep=config.keep, progress=progress,
              desc="value network")
    data = out / "data"
    manifest = generate(config, data, progress=progress)
    job.say(f"value data: {manifest['positions']['train']:,} training and {manifest['positions']['held_out']:,} "
            f"held-out positions, one per game")
    last: dict = {}
    train = fit(job, config, value_learner(config), data, on_eval=lambda p, row: last.update(row),
                net_spec=config.net_spec)
    comparison = compare(config, train.params, data)
    (out / "comparison.json").write_text(json.dumps(comparison, indent=1))
    job.say("held-out MSE: value network {value_mse:.4f}".format(**comparison)
            + (", rollouts {rollout_mse:.4f} ({rollouts} per position)".format(**comparison)
               if "rollout_mse" in comparison else "")
            + f" on {comparison['positions']} positions")
    return _finish(job, {**last, **comparison}, [("loss", "held_out_mse")])


__all__ = ["KIND", "VALUE_FIELDS", "ValueConfig", "compare", "generate", "rollout_estimates", "train_value",
           "value_learner"]
