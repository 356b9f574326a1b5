"""AlphaGo's RL policy by REINFORCE against an opponent pool, and the value network's self-play data.

RL policy (Silver et al. 2016, "Reinforcement learning of policy networks"; ``train_rl``, the
``alphago-jax rl-train`` command): the policy network starts as the SL policy and plays games
against an opponent drawn at random from a pool of its own earlier parameters (the SL policy
first; the current parameters join every ``pool_every`` iterations). Both sides sample their
moves from their policy. At the end of the games the outcome ``z = +1 / -1`` of each game for
the learner weights the log-likelihood of every move the learner played::

    Δρ ∝ (1 / M) Σ_games Σ_t z ∂log p_ρ(a_t | s_t) / ∂ρ      (M: the learner's moves)

(no baseline, as in the paper's first pass). Every ``eval_every`` iterations the current policy
plays ``eval_games`` games against the SL policy (both sampling): the win rate with its 95%
Wilson interval (the paper: 80% for the RL policy).

Games are played in lockstep, all of a batch in one jitted ``lax.while_loop``
(``play_policies``): ``pairs`` pairs of games with colours swapped, so that at every ply one
game of each pair has the learner to move and the other the opponent, and each side's network
runs once per ply on half the games. The learner's input planes (uint8) and moves are recorded
in fixed-length arrays; the gradient runs over the moves actually played, gathered on the host
into fixed-size chunks (one compiled shape).

Value data (``value_games``; the ``alphago-jax value-train`` command in ``value``), the
paper's sampling: each game draws a step ``U`` uniformly from ``0 .. u_max``; moves before it
come from the SL policy, move ``U`` is uniformly random among the legal points, the moves after
it from the RL policy, to the end. One position per game, the one right after the random move,
is kept with the game's outcome: consecutive positions of one game are too alike (the paper's
value network overfitted on whole games).

The rules: Go with simple ko (what dataset rows are rebuilt under, ``positions.rules``),
``komi``, and a move limit of ``2 * size * size``; a game that reaches it is scored as it
stands (Tromp-Taylor).

Checkpoints (kind ``"rl"``) hold the learner's ``TrainState``, the pool (stacked parameters of
fixed capacity, the oldest entry replaced when full) and the iteration; the random draws of
iteration ``i`` depend only on the seed and ``i``, so a resumed run repeats the uninterrupted one.

Data parallelism: with n > 1 devices (a 1-D mesh of all of ``jax.devices()``,
``mesh.data_mesh``) the parameters and the pool are replicated, each device plays
``pairs / n`` pairs of the games with its own random stream (``on_devices``: no communication
inside the games' ``while_loop``), and each gradient chunk is split over the devices (XLA
all-reduces the gradient). ``pairs``, ``eval_pairs`` and ``chunk`` (and the value data's
``chunk_games``) must be multiples of n; the games, and so the run, differ from a one-device run.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import PartitionSpec

from alphago_jax import checks
from alphago_jax.alphago import positions
from alphago_jax.alphago.supervised import POLICY_KINDS, RunResult, _finish, batch_planes, load_trained
from alphago_jax.features.alphago import NUM_PLANES
from alphago_jax.playout import sample_legal
from alphago_jax.train.evaluation import MatchResult
from alphago_jax.train.jobs import Job, JobConfig
from alphago_jax.train.mesh import DATA_AXIS, data_mesh, replicate, to_devices
from alphago_jax.train.optimizer import OptimizerConfig, TrainState, make_optimizer

KIND = "rl"


def self_play_rules(size: int, komi: float):
    """The rules of the RL and value games: ``positions.rules`` with ``komi`` (simple ko,
    ``2 * size * size`` moves at most, ``placed_at`` kept for the planes)."""
    return positions.rules(size, komi)


def sample_moves(key, logits, legal, temperature: float = 1.0) -> jnp.ndarray:
    """int32[B]: moves drawn from ``softmax(logits / temperature)`` over the legal actions
    (bool[B, A]); the most probable legal move at temperature 0."""
    masked = jnp.where(legal, logits, -jnp.inf)
    if temperature == 0:
        return jnp.argmax(masked, axis=-1).astype(jnp.int32)
    return jax.random.categorical(key, masked / temperature, axis=-1).astype(jnp.int32)


# ----------------------------------------------------------------------------- the games

class PolicyGames(NamedTuple):
    """What ``play_policies`` returns for P pairs of games (G = 2P), T = ceil(max_moves / 2).

    Game ``c * P + p`` has the learner as black if ``c == 0``, as white if ``c == 1`` (played on n
    devices, ``on_devices``: each device's 2P / n games in that layout, one device after another).

    Attributes:
      outcomes: float32[G], the learner's result (+1, 0, -1).
      planes: uint8[G, T, S, S, 48], the input planes of each position where the learner moved
        (the learner's ``t``-th move at ``[:, t]``); zeros when not recording.
      actions: int32[G, T], the learner's moves.
      valid: bool[G, T], entries that are real moves.
      plies: int32[], plies the longest game took.
    """

    outcomes: jax.Array
    planes: jax.Array
    actions: jax.Array
    valid: jax.Array
    plies: jax.Array


def _fresh(game, batch: int):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), game.init())


def on_devices(play: Callable, mesh) -> Callable:
    """``play(*args, key)`` on every device of ``mesh`` at once, each device with its own games.

    ``play`` returns a pytree of arrays ``[G, ...]`` (the G games of one device); every argument
    goes whole to every device, and each device folds its index on the mesh into ``key``. The
    returned function gives the ``n * G`` games of the n devices, device-major, split over the
    mesh. There is no communication: each device runs its own ``while_loop`` (over one sharded
    batch, every test of the loop's condition would be an all-reduce).
    """

    def local(*args):
        *rest, key = args
        return play(*rest, jax.random.fold_in(key, jax.lax.axis_index(DATA_AXIS)))

    return jax.shard_map(local, mesh=mesh, in_specs=PartitionSpec(), out_specs=PartitionSpec(DATA_AXIS),
                         check_vma=False)


def devices_for(mesh, **sizes: int) -> int:
    """The device count of ``mesh`` (1 for None); ValueError unless each of ``sizes`` (name ->
    number of games or pairs) is a multiple of it."""
    n = 1 if mesh is None else mesh.devices.size
    for name, value in sizes.items():
        if value % n:
            raise ValueError(f"{name} = {value} must be a multiple of the {n} devices the games are split over")
    return n


def play_policies(game, logits_fn: Callable, pairs: int, record: bool, learner_params, opponent_params, key,
                  temperature: float = 1.0, ladders: bool = True) -> PolicyGames:
    """``2 * pairs`` games of the learner against the opponent, both sampling from their policy.

    Args:
      game: the rules (``self_play_rules``), states with ``placed_at``.
      logits_fn: ``(params, planes float32[B, S, S, 48]) -> float32[B, A]``, a policy network.
      pairs: P; the learner is black in games ``0 .. P-1`` and white in ``P .. 2P-1``.
      record: keep the learner's planes and moves (for the REINFORCE gradient).
      temperature: of both sides' sampling (0: the most probable legal move).
      ladders: compute the ladder planes (as the policy was trained: ``supervised.batch_planes``).

    Every unfinished game has played the same number of plies, so at ply ``t`` the learner moves
    in half ``t % 2`` (black moves at even plies) and the opponent in the other half.
    """
    n_games = 2 * pairs
    limit = game.max_moves
    horizon = (limit + 1) // 2
    size = game.size
    step, terminal = jax.vmap(game.step), jax.vmap(game.is_terminal)
    legal_of = jax.vmap(game.legal_action_mask)
    planes_shape = (n_games, horizon, size, size, NUM_PLANES) if record else (n_games, 1, 1, 1, 1)

    def body(carry):
        states, planes_store, actions_store, valid_store, t, key = carry
        key, k_learner, k_opponent = jax.random.split(key, 3)
        c = t % 2
        planes = batch_planes(states, ladders=ladders).reshape((2, pairs, size, size, NUM_PLANES))
        mine, theirs = planes[c], planes[1 - c]
        legal = legal_of(states).reshape(2, pairs, -1)
        a_mine = sample_moves(k_learner, logits_fn(learner_params, mine), legal[c], temperature)
        a_theirs = sample_moves(k_opponent, logits_fn(opponent_params, theirs), legal[1 - c], temperature)
        actions = jnp.where(c == 0, jnp.concatenate([a_mine, a_theirs]), jnp.concatenate([a_theirs, a_mine]))
        over = terminal(states)
        if record:
            column = jnp.arange(n_games) // pairs == c  # the games where the learner moved
            write = column & ~over
            idx = t // 2
            planes_store = jax.lax.dynamic_update_index_in_dim(
                planes_store, jnp.where(write[:, None, None, None], jnp.concatenate([mine, mine]),
                                        planes_store[:, idx]).astype(jnp.uint8), idx, 1)
            actions_store = jax.lax.dynamic_update_index_in_dim(
                actions_store, jnp.where(write, actions, actions_store[:, idx]), idx, 1)
            valid_store = jax.lax.dynamic_update_index_in_dim(valid_store, write | valid_store[:, idx], idx, 1)
        return step(states, actions), planes_store, actions_store, valid_store, t + 1, key

    def going(carry):
        return (carry[4] < limit) & ~jnp.all(terminal(carry[0]))

    init = (_fresh(game, n_games), jnp.zeros(planes_shape, jnp.uint8), jnp.zeros((n_games, horizon), jnp.int32),
            jnp.zeros((n_games, horizon), bool), jnp.int32(0), key)
    states, planes, actions, valid, plies, _ = jax.lax.while_loop(going, body, init)
    returns = jax.vmap(game.returns)(states)  # [G, 2] (black, white)
    learner_black = jnp.arange(n_games) < pairs
    outcomes = jnp.where(learner_black, returns[:, 0], returns[:, 1])
    return PolicyGames(outcomes, planes, actions, valid, plies)


def value_games(game, logits_fn: Callable, batch: int, u_max: int, sl_params, rl_params, key,
                ladders: bool = True) -> dict:
    """``batch`` games of the paper's value-data sampling; one position of each, as dataset rows.

    Returns a dict of numpy-convertible arrays ``[batch]`` in the dataset's fields
    (``board``, ``placed_at``, ``ko``, ``to_play``, ``move_number``, ``winner``) plus ``valid``
    bool[batch]: False where the game ended before the position after the random move.
    """
    limit = game.max_moves
    n = game.num_points
    k_u, key = jax.random.split(key)
    u = jax.random.randint(k_u, (batch,), 0, u_max + 1)
    step, terminal = jax.vmap(game.step), jax.vmap(game.is_terminal)
    legal_of = jax.vmap(game.legal_action_mask)
    fresh = _fresh(game, batch)
    empty_rows = {
        "board": jnp.zeros((batch, n), jnp.int8), "placed_at": jnp.zeros((batch, n), jnp.int16),
        "ko": jnp.full((batch,), -1, jnp.int16), "to_play": jnp.zeros((batch,), jnp.int8),
        "move_number": jnp.zeros((batch,), jnp.int16), "valid": jnp.zeros((batch,), bool),
    }

    def body(carry):
        states, rows, t, key = carry
        key, k_sl, k_rl, k_random = jax.random.split(key, 4)
        over = terminal(states)
        keep = (t == u + 1) & ~over
        rows = {
            "board": jnp.where(keep[:, None], states.board, rows["board"]),
            "placed_at": jnp.where(keep[:, None], states.placed_at.astype(jnp.int16), rows["placed_at"]),
            "ko": jnp.where(keep, states.ko, rows["ko"]),
            "to_play": jnp.where(keep, states.to_play, rows["to_play"]),
            "move_number": jnp.where(keep, (states.move_count + 1).astype(jnp.int16), rows["move_number"]),
            "valid": rows["valid"] | keep,
        }
        planes = batch_planes(states, ladders=ladders)
        legal = legal_of(states)
        zeros = jnp.zeros(legal.shape, jnp.float32)
        sl = jax.lax.cond(jnp.any(t < u), lambda: logits_fn(sl_params, planes), lambda: zeros)
        rl = jax.lax.cond(jnp.any(t > u), lambda: logits_fn(rl_params, planes), lambda: zeros)
        points = legal.at[:, n].set(False)
        random = jnp.where(jnp.any(points, axis=-1), sample_legal(k_random, points), n)
        actions = jnp.where(t < u, sample_moves(k_sl, sl, legal),
                            jnp.where(t == u, random, sample_moves(k_rl, rl, legal)))
        return step(states, actions), rows, t + 1, key

    def going(carry):
        return (carry[2] < limit) & ~jnp.all(terminal(carry[0]))

    states, rows, _, _ = jax.lax.while_loop(going, body, (fresh, empty_rows, jnp.int32(0), key))
    returns = jax.vmap(game.returns)(states)
    rows["winner"] = jnp.sign(returns[:, 0]).astype(jnp.int8)
    return rows


# ------------------------------------------------------------------------------ settings

@dataclasses.dataclass(frozen=True)
class RLConfig(JobConfig):
    """The RL policy job.

    Attributes:
      sl_run: the SL policy's run directory (the starting point and the evaluation opponent).
      komi: of the self-play games.
      pairs: pairs of games per iteration (2 * pairs games, the learner black in half).
      iterations: REINFORCE updates in all (the run's length).
      learning_rate: SGD's rate; momentum: SGD momentum.
      pool_every: the current parameters join the opponent pool every this many iterations.
      pool_size: the pool's capacity (the oldest entry goes when it is full).
      eval_every: the match against the SL policy every this many iterations (and at the end).
      eval_pairs: its pairs of games.
      chunk: positions per gradient call.
      keep: checkpoints kept; seed: the games' randomness.
    """

    LENGTH = "iterations"

    sl_run: str = ""
    komi: float = 7.5
    pairs: int = 32
    iterations: int = 100
    learning_rate: float = 0.01
    momentum: float = 0.0
    pool_every: int = 10
    pool_size: int = 16
    eval_every: int = 25
    eval_pairs: int = 64
    chunk: int = 256
    keep: int = 2
    seed: int = 0

    def __post_init__(self):
        checks.require(self, "sl_run", bool(self.sl_run), "must name the SL policy's run directory")
        checks.ints(self, 1, "pairs", "iterations", "pool_every", "pool_size", "eval_every", "eval_pairs", "chunk",
                    "keep")
        checks.ints(self, 0, "seed")
        checks.number(self, "learning_rate", "> 0")
        checks.number(self, "momentum", "[0, 1)")

    @property
    def optimizer(self) -> OptimizerConfig:
        return OptimizerConfig(kind="sgd", learning_rate=self.learning_rate, momentum=self.momentum, weight_decay=0.0)


# ------------------------------------------------------------------------------ the job

def _stack(tree, capacity: int):
    return jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (capacity,) + x.shape), tree)


def _at(pool, i):
    return jax.tree_util.tree_map(lambda x: x[i], pool)


def _set(pool, i, tree):
    return jax.tree_util.tree_map(lambda p, x: p.at[i].set(x), pool, tree)


class RLPrograms(NamedTuple):
    """The jitted pieces of the RL job (``build_rl``)."""

    play: Callable      # (learner params, opponent params, key) -> PolicyGames, recorded
    match: Callable     # (learner params, opponent params, key) -> PolicyGames, not recorded
    grad: Callable      # (params, planes, actions, weights) -> summed gradient of -Σ w log p(a)
    update: Callable    # (TrainState, grads) -> TrainState
    add: Callable       # (pool, i, params) -> pool
    at: Callable        # (pool, i) -> params
    mesh: object = None  # the devices' mesh (None: one device)


def build_rl(config: RLConfig, net, size: int, ladders: bool = True) -> RLPrograms:
    """The jitted programs of an RL run for ``net`` on ``size`` x ``size`` (its planes with
    ``ladders`` or not, as it was trained), on every device (the module docstring).

    Raises:
      ValueError: ``pairs``, ``eval_pairs`` or ``chunk`` is not a multiple of the device count.
    """
    mesh = data_mesh(config.chunk, "RLConfig.chunk")
    n = devices_for(mesh, **{"RLConfig.pairs": config.pairs, "RLConfig.eval_pairs": config.eval_pairs})
    game = self_play_rules(size, config.komi)
    optimizer = make_optimizer(config.optimizer)
    planes_logits = lambda params, planes: net.apply({"params": params}, planes)  # noqa: E731

    def grad(params, planes, actions, weights):
        def loss(p):
            logp = jax.nn.log_softmax(planes_logits(p, planes.astype(jnp.float32)))
            return -jnp.sum(weights * jnp.take_along_axis(logp, actions[:, None], axis=-1)[:, 0])

        return jax.grad(loss)(params)

    def update(state: TrainState, grads):
        updates, opt_state = optimizer.update(grads, state.opt_state, state.params)
        return TrainState(optax.apply_updates(state.params, updates), state.batch_stats, opt_state, state.step + 1)

    def games(record, pairs):
        def run(learner_params, opponent_params, key):
            return play_policies(game, planes_logits, pairs // n, record, learner_params, opponent_params, key,
                                 ladders=ladders)

        if mesh is None:
            return jax.jit(run)

        def per_device(*args):  # plies int32[] -> int32[1], to be joined over the devices
            out = run(*args)
            return out._replace(plies=out.plies[None])

        spread = on_devices(per_device, mesh)

        def program(*args):
            out = spread(*args)
            return out._replace(plies=jnp.max(out.plies))

        return jax.jit(program)

    return RLPrograms(games(True, config.pairs), games(False, config.eval_pairs), jax.jit(grad), jax.jit(update),
                      jax.jit(_set), jax.jit(_at), mesh)


def reinforce_step(programs: RLPrograms, train: TrainState, games: PolicyGames, chunk: int) -> tuple[TrainState, dict]:
    """One REINFORCE update from recorded games: the moves gathered on the host into chunks of
    ``chunk`` positions (the last padded with weight 0), gradients summed, divided by the
    number of moves, one optimizer step. With several devices (``programs.mesh``) each chunk is
    split over them (``chunk`` a multiple of their number)."""
    # Several CPU "devices" share one thread pool: let each all-reduce finish before the next.
    sync = programs.mesh is not None and jax.devices()[0].platform == "cpu"
    valid = np.asarray(games.valid)
    g_idx, t_idx = np.nonzero(valid)
    m = len(g_idx)
    z = np.asarray(games.outcomes, np.float32)[g_idx]
    planes = np.asarray(games.planes)
    actions = np.asarray(games.actions)
    total = None
    for start in range(0, m, chunk):
        idx = np.arange(start, start + chunk)
        live = idx < m
        idx = np.where(live, idx, start)
        rows = (planes[g_idx[idx], t_idx[idx]], actions[g_idx[idx], t_idx[idx]],
                np.where(live, z[idx], 0.0).astype(np.float32) / max(m, 1))
        g = programs.grad(train.params, *to_devices(rows, programs.mesh))
        if sync:
            jax.block_until_ready(g)
        total = g if total is None else jax.tree_util.tree_map(jnp.add, total, g)
    train = programs.update(train, total)
    return train, {"learner_moves": m}


def match_metrics(name: str, games: PolicyGames) -> dict:
    """Win rate, its 95% Wilson interval and the Elo difference of a ``PolicyGames`` match."""
    result = MatchResult.from_outcomes("rl", name, np.asarray(games.outcomes))
    lo, hi = result.interval()
    return {f"win_{name}": result.win_rate, f"win_{name}_low": lo, f"win_{name}_high": hi,
            f"elo_{name}": result.elo, f"games_{name}": result.games}


def train_rl(config: RLConfig, out_dir, *, resume: bool = False, progress: bool = True) -> RunResult:
    """Train (or resume) the RL policy from the SL policy of ``config.sl_run``.

    Returns a ``RunResult`` whose summary holds the last match against the SL policy
    (``win_sl``, ``win_sl_low``, ``win_sl_high``, ``elo_sl``).

    Raises:
      ValueError: no SL run there, a directory holding another run, a corrupted checkpoint.
    """
    sl = load_trained(config.sl_run, ("sl",))
    size = sl.board_size
    programs = build_rl(config, sl.net, size, sl.spec.get("ladders", True))
    job = Job(out_dir, KIND, config, config.iterations, resume=resume, keep=config.keep, progress=progress,
              desc="RL policy")
    optimizer = make_optimizer(config.optimizer)
    fresh = TrainState(sl.params, {}, optimizer.init(sl.params), jnp.int32(0))
    state = {"train": fresh, "pool": _stack(sl.params, config.pool_size), "pool_count": jnp.int32(1)}
    state = job.restore(state)
    sl_params = sl.params
    if programs.mesh is not None:
        state, sl_params = replicate((state, sl_params), programs.mesh)
    base = jax.random.PRNGKey(config.seed)
    last = {}
    for iteration in range(job.start + 1, config.iterations + 1):
        k_pick, k_play, k_eval = jax.random.split(jax.random.fold_in(base, iteration), 3)
        count = int(state["pool_count"])
        pick = int(jax.random.randint(k_pick, (), 0, min(count, config.pool_size)))
        games = programs.play(state["train"].params, programs.at(state["pool"], pick), k_play)
        train, info = reinforce_step(programs, state["train"], games, config.chunk)
        outcomes = np.asarray(games.outcomes)
        row = {"win_pool": float(np.mean(outcomes > 0) + 0.5 * np.mean(outcomes == 0)), "opponent": pick,
               "plies": int(games.plies), **info}
        state = {**state, "train": train}
        if iteration % config.pool_every == 0:
            slot = count % config.pool_size  # the oldest entry once the pool is full
            state = {**state, "pool": programs.add(state["pool"], slot, train.params),
                     "pool_count": jnp.int32(count + 1)}
        if iteration % config.eval_every == 0 or iteration == config.iterations:
            row.update(match_metrics("sl", programs.match(train.params, sl_params, k_eval)))
            last = dict(row)
            job.say(f"iteration {iteration}: against the SL policy {row['win_sl']:.1%} "
                    f"[{row['win_sl_low']:.1%}, {row['win_sl_high']:.1%}] in {row['games_sl']} games")
        job.log(iteration, row, postfix=("win_pool", "win_sl"))
        # Host copies from several devices: the checkpoint loads on any devices.
        job.save(iteration, state if programs.mesh is None else jax.device_get(state), net=sl.spec,
                 iteration=iteration)
        job.bar.update(1)
    return _finish(job, last, [("win_pool", "win_sl"), ("learner_moves",)])


__all__ = [
    "KIND",
    "POLICY_KINDS",
    "PolicyGames",
    "RLConfig",
    "RLPrograms",
    "build_rl",
    "devices_for",
    "match_metrics",
    "on_devices",
    "play_policies",
    "reinforce_step",
    "sample_moves",
    "self_play_rules",
    "train_rl",
    "value_games",
]
