"""The AlphaGo pipeline: dataset rows back into states, the SL, rollout, RL and value trainings, the
resumption of each after a kill, and the AlphaGo player through the registry.

Everything runs on 5x5 with 8-filter, 2-layer networks and a few steps, on a dataset of 48
random 5x5 games built once per session. One SL run is killed for real (SIGKILL, in a child
process running the ``sl-train`` command) and resumed by the command line; the RL and value
runs are stopped at half their length and resumed in process. Each resumed run must end with
the parameters of the run that was not interrupted. The SL job also runs data parallel on four
CPU devices in a child process (``XLA_FLAGS=--xla_force_host_platform_device_count=4``), which
must give the losses of one device.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from children import child_env
from alphago_jax import cli, sgf
from alphago_jax.alphago import positions, reinforce, supervised, value
from alphago_jax.alphago.dataset import FIELDS, build_dataset, game_positions, iter_shards
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.nets.rollout import RolloutPolicy
from alphago_jax.play.registry import make_player
from alphago_jax.train import Checkpointer, CheckpointError, TrainState, make_optimizer
from alphago_jax.train.metrics import read_metrics

ROOT = pathlib.Path(__file__).resolve().parents[1]
SIZE = 5
TINY = dict(board_size=SIZE, filters=8, layers=2, ladders=False)  # ladders: 10x the compile time
SL = supervised.SLConfig(**TINY, batch=32, steps=16, eval_every=8, checkpoint_every=8, log_every=4,
                         eval_positions=64, learning_rate=0.03, decay_every=12)
ROLLOUT = supervised.RolloutConfig(board_size=SIZE, batch=32, steps=16, eval_every=16, checkpoint_every=16,
                                   log_every=4, eval_positions=64, learning_rate=0.5)


def _games(count: int, seed: int):
    """``count`` 5x5 games as records, each move drawn with probability falling with its distance
    from the last move (something for the policies to learn), until two passes or the limit."""
    rules = positions.rules(SIZE, 0.5).game
    step, legal = jax.jit(jax.vmap(rules.step)), jax.jit(jax.vmap(rules.legal_action_mask))
    rows, cols = np.divmod(np.arange(SIZE * SIZE), SIZE)
    batch = jax.vmap(lambda _: rules.init())(jnp.arange(count))
    key, moves = jax.random.PRNGKey(seed), [[] for _ in range(count)]
    while not np.asarray(batch.terminal).all():
        last = np.asarray(batch.last_move)
        near = (last >= 0) & (last < SIZE * SIZE)
        lr, lc = np.divmod(np.where(near, last, 0), SIZE)
        distance = np.abs(rows[None] - lr[:, None]) + np.abs(cols[None] - lc[:, None])
        logits = np.concatenate([np.where(near[:, None], -1.5 * distance, 0.0), np.full((count, 1), -3.0)], axis=1)
        key, k = jax.random.split(key)
        actions = np.asarray(jax.random.categorical(k, jnp.where(legal(batch), logits, -jnp.inf)))
        for g in np.flatnonzero(~np.asarray(batch.terminal)):
            moves[g].append(int(actions[g]))
        batch = step(batch, jnp.asarray(actions, jnp.int32))
    scores = np.asarray(jax.vmap(rules.score)(batch))
    return [sgf.record_from_moves(rules, m, result=sgf.result_string(float(s))) for m, s in zip(moves, scores)]


@pytest.fixture(scope="session")
def dataset(tmp_path_factory):
    base = tmp_path_factory.mktemp("alphago")
    sgfs = base / "sgf"
    sgfs.mkdir()
    for i, record in enumerate(_games(48, 0)):
        sgf.save(record, sgfs / f"game-{i:03d}.sgf")
    build_dataset([sgfs], base / "positions", size=SIZE, shard_size=300, held_out=0.2, progress=False)
    return base / "positions"


def _params(run, kinds=("sl", "rl", "rollout", "value")):
    return supervised.load_trained(run, kinds).params


# ---------------------------------------------------------------------------- dataset rows

def test_rows_rebuild_the_states_of_the_game_under_any_symmetry(dataset):
    """Rebuilt rows are the game's states: the rules' fields, the planes (but for the ladders,
    read from the same fields: tests/test_features_alphago.py) and the rollout features. Rows
    mapped by a symmetry keep their move legal."""
    record = sgf.load((dataset.parent / "sgf" / "game-000.sgf").read_bytes())
    rows = {k: jnp.asarray(v) for k, v in game_positions(record, 0).items()}
    game = positions.rules(SIZE, 0.5)
    state, states = game.init(), []
    step = jax.jit(game.step)
    for _, action in record.moves:
        states.append(state)
        state = step(state, action)
    replayed = jax.tree_util.tree_map(lambda *x: jnp.stack(x), *states)
    rebuild = jax.jit(lambda r: positions.row_states(game, r))
    rebuilt = rebuild(rows)
    for field in ("board", "to_play", "atari_lib", "legal", "ko", "move_count", "last_move", "passes", "placed_at"):
        np.testing.assert_array_equal(getattr(rebuilt, field), getattr(replayed, field), err_msg=field)
    same_chain = lambda s: np.asarray(s.chain_id)[:, :, None] == np.asarray(s.chain_id)[:, None, :]  # noqa: E731
    np.testing.assert_array_equal(same_chain(rebuilt), same_chain(replayed))  # ids name chains differently
    planes = jax.jit(lambda s: supervised.batch_planes(s, value_net=True, ladders=False))
    np.testing.assert_array_equal(planes(rebuilt), planes(replayed))
    features = jax.jit(jax.vmap(lambda s: RolloutPolicy(SIZE).features(s.inner)))
    for got, want in zip(features(rebuilt), features(replayed)):
        np.testing.assert_array_equal(got, want)

    mapped = jax.jit(lambda k, r: positions.augment_rows(k, r, SIZE))(jax.random.PRNGKey(3), rows)
    legal = rebuild(mapped).legal
    assert bool(jnp.all(legal[jnp.arange(len(legal)), mapped["move"].astype(jnp.int32)]))
    chex.assert_trees_all_equal(mapped["to_play"], rows["to_play"])
    assert not np.array_equal(mapped["board"], rows["board"])
    stones = lambda r: np.sort(np.abs(np.asarray(r["board"])).sum(axis=1))  # noqa: E731
    np.testing.assert_array_equal(stones(mapped), stones(rows))


def test_batch_stream_covers_each_row_once_and_restarts_anywhere(dataset):
    stream = positions.BatchStream(dataset, "train", 50, seed=1, fields=FIELDS)
    per_epoch = len(stream) // 50
    batches = stream.batches(0)
    first = [next(batches) for _ in range(per_epoch + 3)]
    seen = np.concatenate([b["game"] * 1000 + b["move_number"] for b in first[:per_epoch]])
    assert len(np.unique(seen)) == len(seen) == per_epoch * 50  # no row twice within an epoch
    for start in (1, per_epoch - 1, per_epoch + 2):
        again = next(stream.batches(start))
        for k in FIELDS:
            np.testing.assert_array_equal(again[k], first[start][k])


def test_clear_errors_for_bad_inputs(dataset, tmp_path):
    with pytest.raises(ValueError, match=f"{tmp_path / 'nothing'}: no such dataset"):
        supervised.train_sl(SL, tmp_path / "nothing", tmp_path / "run", progress=False)
    with pytest.raises(ValueError, match=f"{dataset}: a 5x5 dataset, the job is 9x9"):
        supervised.train_sl(supervised.SLConfig(), dataset, tmp_path / "run", progress=False)
    with pytest.raises(ValueError, match="SLConfig.batch must be an int >= 1"):
        supervised.SLConfig(batch=0)
    with pytest.raises(ValueError, match="unknown setting 'nope'"):
        supervised.SLConfig.build(overrides={"nope": "1"})
    with pytest.raises(ValueError, match=f"{tmp_path / 'none'}.*sl"):
        make_player(f"alphago-policy:run={tmp_path / 'none'}")


# ------------------------------------------------------------------------------ SL policy

@pytest.fixture(scope="session")
def sl_run(dataset, tmp_path_factory):
    out = tmp_path_factory.mktemp("sl") / "sl"
    result = supervised.train_sl(SL, dataset, out, progress=False)
    return out, result


def test_sl_training_lowers_its_loss(sl_run):
    out, result = sl_run
    rows = read_metrics(out / "metrics.csv")
    assert list(rows["step"]) == [4, 8, 12, 16]
    assert rows["loss"][-1] < rows["loss"][0]
    assert 0 <= result.summary["held_out_accuracy"] <= 1 and np.isfinite(result.summary["held_out_loss"])
    assert result.checkpoint == out / "checkpoints" / "16" and result.plot.stat().st_size > 0
    trained = supervised.load_trained(out, ("sl",))
    assert trained.step == 16 and trained.board_size == SIZE and trained.spec["filters"] == 8


# The child that gets killed: a training (sl-train through the command line, or RL or value
# training from a JSON config) SIGKILLed right after its checkpoint of step ``die_at`` is on
# disk, while it goes on training.
KILLER = textwrap.dedent(
    """
    import json, os, signal, sys
    from alphago_jax import cli
    from alphago_jax.alphago import reinforce, value
    from alphago_jax.train import jobs

    die_at, what, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    save = jobs.Job.save

    def save_then_die(self, step, state, **metadata):
        path = save(self, step, state, **metadata)
        if step == die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return path

    jobs.Job.save = save_then_die
    if what == "cli":
        sys.exit(cli.main(args))
    trainer, config = {"rl": (reinforce.train_rl, reinforce.RLConfig),
                       "value": (value.train_value, value.ValueConfig)}[what]
    trainer(config.from_dict(json.loads(args[0])), args[1], progress=False)
    """
)


def _kill_after_checkpoint(step: int, what: str, *args: str) -> None:
    """Run ``KILLER`` in a child process; it must die by SIGKILL."""
    child = subprocess.run([sys.executable, "-c", KILLER, str(step), what, *args], env=child_env(), cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert child.returncode == -9, child.stderr[-3000:]


def _sl_args(dataset, out):
    sets = [f"--set={k}={json.dumps(v)}" for k, v in SL.to_dict().items() if k != "steps"]
    return ["sl-train", "--data", str(dataset), "--out", str(out), "--steps", str(SL.steps), "--no-progress", *sets]


def test_sl_killed_and_resumed_ends_like_the_uninterrupted_run(sl_run, dataset, tmp_path, capsys):
    reference, _ = sl_run
    out = tmp_path / "sl"
    _kill_after_checkpoint(8, "cli", *_sl_args(dataset, out))
    assert Checkpointer(out / "checkpoints", kind="sl", read_only=True).all_steps() == [8]
    # Without --resume the directory is refused; with it, the run ends where the reference did.
    assert cli.main(_sl_args(dataset, out)) == 2
    assert "pass --resume" in capsys.readouterr().err
    assert cli.main(["sl-train", "--data", str(dataset), "--out", str(out), "--resume", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "(resuming)" in printed and f"checkpoint:  {out / 'checkpoints' / '16'}" in printed
    chex.assert_trees_all_close(_params(out), _params(reference), rtol=1e-5, atol=1e-6)
    assert list(read_metrics(out / "metrics.csv")["step"]) == [4, 8, 12, 16]  # each row once
    # Other settings on resume are refused, naming the checkpoint.
    assert cli.main(["sl-train", "--data", str(dataset), "--out", str(out), "--resume", "--set", "batch=8"]) == 2
    assert f"{out / 'checkpoints' / '16'}" in capsys.readouterr().err


def test_corrupted_checkpoint_is_named(sl_run, tmp_path):
    import shutil

    reference, _ = sl_run
    copy = tmp_path / "copy"
    shutil.copytree(reference, copy)
    (copy / "checkpoints" / "16" / "meta" / "metadata").write_text("{broken")
    with pytest.raises(CheckpointError, match=str(copy / "checkpoints" / "16")):
        supervised.load_trained(copy, ("sl",))


# Data parallel: the child sees four CPU devices and runs the commands it is given, each with the
# exit code expected: an SL job whose batch does not split evenly over them (refused), the SL job
# of ``sl_run`` (each batch split over the four devices), then one RL iteration from it (each
# device its own games, each gradient chunk split).
FOUR_DEVICES = textwrap.dedent(
    """
    import json, sys
    import jax
    from alphago_jax import cli

    assert jax.device_count() == 4, jax.devices()
    for args, code in json.loads(sys.argv[1]):
        assert cli.main(args) == code, args
    """
)


def test_sl_on_four_devices_gives_the_losses_of_one(sl_run, dataset, tmp_path):
    reference, _ = sl_run
    out = tmp_path / "sl"
    rl = {**RL, "pairs": 4, "eval_pairs": 4}
    commands = [
        (_sl_args(dataset, tmp_path / "bad") + ["--set", "batch=30"], 2),
        (_sl_args(dataset, out), 0),
        (["rl-train", "--sl", str(out), "--out", str(tmp_path / "rl"), "--iterations", "1", "--no-progress",
          *(f"--set={k}={v}" for k, v in rl.items() if k != "iterations")], 0),
    ]
    child = subprocess.run([sys.executable, "-c", FOUR_DEVICES, json.dumps(commands)], env=child_env(devices=4),
                           cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    assert "batch = 30 must be a multiple of the 4 devices" in child.stderr
    mine, theirs = read_metrics(out / "metrics.csv"), read_metrics(reference / "metrics.csv")
    for key in ("loss", "accuracy", "held_out_loss", "held_out_accuracy"):
        np.testing.assert_allclose(mine[key], theirs[key], rtol=1e-4, err_msg=key)
    chex.assert_trees_all_close(_params(out), _params(reference), rtol=1e-4, atol=1e-5)
    rl_rows = read_metrics(tmp_path / "rl" / "metrics.csv")
    assert rl_rows["learner_moves"][0] > 0 and 0 <= rl_rows["win_sl"][0] <= 1 and rl_rows["games_sl"][0] == 8


# ------------------------------------------------------------------------- rollout policy

def test_rollout_training_lowers_its_loss_and_is_timed(dataset, tmp_path):
    result = supervised.train_rollout(ROLLOUT, dataset, tmp_path / "rollout", progress=False)
    rows = read_metrics(tmp_path / "rollout" / "metrics.csv")
    assert rows["loss"][-1] < rows["loss"][0]
    assert 0 < result.summary["rollout_us_per_move"] < 1e6
    assert 0 <= result.summary["held_out_accuracy"] <= 1


# ------------------------------------------------------------------------------ RL policy

RL = dict(pairs=2, iterations=4, eval_every=2, eval_pairs=2, pool_every=1, pool_size=2, chunk=32, learning_rate=0.05)


def test_reinforce_step_follows_the_outcome(sl_run):
    out, _ = sl_run
    sl = supervised.load_trained(out, ("sl",))
    config = reinforce.RLConfig(sl_run=str(out), **RL)
    programs = reinforce.build_rl(config, sl.net, SIZE, ladders=False)
    games = programs.play(sl.params, sl.params, jax.random.PRNGKey(0))
    valid = np.asarray(games.valid)
    assert valid.sum() > 0 and np.all(np.asarray(games.actions)[valid] <= SIZE * SIZE)
    fresh = TrainState(sl.params, {}, make_optimizer(config.optimizer).init(sl.params), jnp.int32(0))

    def log_likelihood(params):
        planes = np.asarray(games.planes)[valid].astype(np.float32)
        logits = sl.net.apply({"params": params}, planes)
        return float(jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(planes)), np.asarray(games.actions)[valid]]))

    before = log_likelihood(sl.params)
    for z, sign in ((1.0, 1), (-1.0, -1)):
        forced = games._replace(outcomes=jnp.full_like(games.outcomes, z))
        after, info = reinforce.reinforce_step(programs, fresh, forced, config.chunk)
        assert info["learner_moves"] == valid.sum()
        assert sign * (log_likelihood(after.params) - before) > 0


def test_rl_killed_and_resumed_ends_like_the_uninterrupted_run(sl_run, tmp_path):
    out, _ = sl_run
    config = reinforce.RLConfig(sl_run=str(out), **RL)
    whole = reinforce.train_rl(config, tmp_path / "whole", progress=False)
    assert 0 <= whole.summary["win_sl"] <= 1 and whole.summary["games_sl"] == 4
    half = tmp_path / "half"
    _kill_after_checkpoint(2, "rl", json.dumps(config.to_dict()), str(half))
    assert max(Checkpointer(half / "checkpoints", kind="rl", read_only=True).all_steps()) == 2
    with pytest.raises(ValueError, match="pass --resume"):
        reinforce.train_rl(config, half, progress=False)
    reinforce.train_rl(config, half, resume=True, progress=False)
    chex.assert_trees_all_close(_params(half), _params(tmp_path / "whole"), rtol=1e-5, atol=1e-6)
    assert not jax.tree_util.tree_all(jax.tree_util.tree_map(lambda a, b: bool(jnp.all(a == b)),
                                                             _params(half), _params(out)))  # it learned
    rows = read_metrics(half / "metrics.csv")
    assert list(rows["step"]) == [1, 2, 3, 4] and np.isfinite(rows["win_sl"][1])


# -------------------------------------------------------------------------- value network

@pytest.fixture(scope="session")
def rl_run(sl_run, tmp_path_factory):
    out, _ = sl_run
    run = tmp_path_factory.mktemp("rl") / "rl"
    reinforce.train_rl(reinforce.RLConfig(sl_run=str(out), **{**RL, "iterations": 1}), run, progress=False)
    return run


VALUE = dict(board_size=SIZE, filters=8, layers=2, hidden=8, ladders=False, games=64, chunk_games=16, held_out_every=4,
             u_max=6,
             batch=16, steps=12, eval_every=6, checkpoint_every=6, log_every=3, eval_positions=32,
             compare_positions=8, rollouts=4, learning_rate=0.01)


@pytest.fixture(scope="session")
def value_runs(sl_run, rl_run, dataset, tmp_path_factory):
    """The rollout policy (a few steps) and the value network with its comparison."""
    base = tmp_path_factory.mktemp("value")
    supervised.train_rollout(ROLLOUT.build(ROLLOUT, values={"steps": 4, "eval_every": 4, "checkpoint_every": 4}),
                             dataset, base / "rollout", progress=False)
    config = value.ValueConfig(sl_run=str(sl_run[0]), rl_run=str(rl_run), rollout_run=str(base / "rollout"), **VALUE)
    result = value.train_value(config, base / "value", progress=False)
    return config, base, result


def test_value_data_follow_the_papers_sampling(value_runs):
    config, base, _ = value_runs
    data = base / "value" / "data"
    manifest = positions.check_dataset(data, SIZE, "held_out")
    assert manifest["games_played"] == {"train": 48, "held_out": 16}
    rows = [s for split in ("train", "held_out") for s in iter_shards(data, split)]
    rows = {k: np.concatenate([s[k] for s in rows]) for k in FIELDS}
    assert len(rows["game"]) == sum(manifest["positions"].values()) >= 48
    assert len(np.unique(rows["game"])) == len(rows["game"])  # one position per game
    moves = rows["move_number"]
    assert moves.min() >= 2 and moves.max() <= config.u_max + 2  # right after the random move U <= u_max
    assert np.all(np.abs(rows["board"]).sum(axis=1) <= moves - 1)
    assert set(np.unique(rows["winner"])) <= {-1, 1}


def test_value_training_lowers_its_loss_resumes_and_compares_with_rollouts(value_runs, tmp_path):
    config, base, result = value_runs
    rows = read_metrics(base / "value" / "metrics.csv")
    assert rows["loss"][-1] < rows["loss"][0]
    summary = result.summary
    assert summary["positions"] == 8 and 0 <= summary["value_mse"] <= 4 and 0 <= summary["rollout_mse"] <= 4
    assert (base / "value" / "comparison.json").is_file()
    # Killed after the checkpoint at half the steps, resumed: the same network.
    half = tmp_path / "half"
    _kill_after_checkpoint(6, "value", json.dumps(config.to_dict()), str(half))
    assert max(Checkpointer(half / "checkpoints", kind="value", read_only=True).all_steps()) == 6
    value.train_value(config, half, resume=True, progress=False)
    chex.assert_trees_all_close(_params(half), _params(base / "value"), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------- players

def test_alphago_player_plays_legal_moves_through_the_registry(sl_run, rl_run, value_runs, tmp_path):
    from alphago_jax.play.arena import run_match

    pipeline = tmp_path / "pipeline"
    pipeline.mkdir()
    (pipeline / "sl").symlink_to(sl_run[0])
    with pytest.raises(ValueError, match=f"{pipeline / 'value'}.*a value run"):  # lam 0.5 needs it
        make_player(f"alphago:dir={pipeline},sims=4")
    (pipeline / "value").symlink_to(value_runs[1] / "value")
    (pipeline / "rollout").symlink_to(value_runs[1] / "rollout")
    player = make_player(f"alphago:dir={pipeline},sims=4,leaf_batch=2")
    opponent = make_player(f"alphago-policy:run={rl_run},seed=1")
    assert player.name == "alphago4" and opponent.name == "rl-policy"
    match = run_match(player, opponent, games=2, size=SIZE, komi=0.5, max_moves=30, progress=False)
    assert match.result.games == 2 and all(g.how in ("score", "move limit") for g in match.games)
    player.new_game(SIZE, 0.5)
    player.play(BLACK, 12)
    decision = player.genmove(WHITE)
    assert 0 <= decision.action <= SIZE * SIZE and decision.action != 12 and decision.simulations == 4
    assert 0 <= decision.winrate <= 1
    with pytest.raises(ValueError, match="plays 5x5, not 9x9"):
        player.new_game(9, 7.5)
