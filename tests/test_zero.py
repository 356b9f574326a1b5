"""AlphaGo Zero's main job (``zero``): self-play examples, matches, kill and resume, devices.

- Self-play is driven one move at a time on 5x5 with a 1-block, 8-filter network and 4
  simulations; every example that reaches the replay buffer is checked against what the test
  saw before the move (legal moves, input planes, player to move) and against a replay of the
  finished game's moves through the rules.
- Matches are checked with two scripted movers, so that who played which colour is visible.
- The whole job runs as child processes on the ``smoke`` preset (3 iterations): once on one
  CPU device and once on four (``XLA_FLAGS=--xla_force_host_platform_device_count=4``), which
  must give the same losses; then a run killed with SIGKILL while its self-play program is
  executing, resumed, killed again while a checkpoint is being written, and resumed with the
  command line, which must end where the uninterrupted run ended.
- Every metrics row has the wall seconds of its phases, each program's first run (its compile)
  is said once, and no program compiles again in a later iteration.

The children share the tests' persistent compilation cache (``conftest.py``): with a warm cache
each takes about ten seconds, most of it start-up and checkpoint writes.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from children import child_env
from alphago_jax import cli, features, nets, sgf, zero
from alphago_jax.games.base import BLACK
from alphago_jax.nets.saved import load_network
from alphago_jax.play import registry
from alphago_jax.search import make_search, network_evaluator
from alphago_jax.train import Checkpointer, CheckpointError, replay
from alphago_jax.zero import selfplay

ROOT = pathlib.Path(__file__).resolve().parents[1]
TMP_MARK = ".orbax-checkpoint-tmp"
SMOKE = zero.PRESETS["smoke"]
LOSSES = ("loss", "policy_loss", "value_loss")
PHASE_COLUMNS = ("selfplay_s", "train_s", "eval_s", "checkpoint_s", "compile_s")


# ------------------------------------------------------------------------- configuration

def test_presets_and_overrides():
    assert zero.DEFAULT_PRESET == "tiny" and {"tiny", "9x9", "19x19"} <= set(zero.PRESETS)
    for config in zero.PRESETS.values():
        hash(config)  # frozen: a static argument
        assert zero.ZeroConfig.from_dict(config.to_dict()) == config
        assert config.game.max_moves >= 1 and config.net.in_planes == 17
    config = zero.with_overrides(SMOKE, {"num_simulations": "8", "komi": "7", "gate": "null",
                                         "optimizer.learning_rate": "0.01", "optimizer.kind": "sgd"})
    assert config.num_simulations == 8 and config.komi == 7.0 and config.gate is None
    assert config.optimizer.learning_rate == 0.01 and config.optimizer.kind == "sgd"
    # "none" is None for a number, and stays text for a text field (symmetries="none").
    config = zero.with_overrides(SMOKE, {"gate": "None", "symmetries": "none"})
    assert config.gate is None and config.symmetries == "none"
    with pytest.raises(ValueError, match="unknown setting 'simulations'"):
        zero.with_overrides(SMOKE, {"simulations": "8"})
    with pytest.raises(ValueError, match="eval_games"):
        zero.with_overrides(SMOKE, {"eval_games": "7"})
    with pytest.raises(ValueError, match="board size"):
        zero.ZeroConfig(board_size=1)
    with pytest.raises(ValueError, match="multiple of the 3 devices"):
        zero.num_workers(SMOKE, 3)  # the smoke preset's 4 workers
    with pytest.raises(ValueError, match="multiple of the 3 workers"):
        zero.num_workers(dataclasses.replace(SMOKE, workers=None), 3)
    assert zero.num_workers(SMOKE, 2) == 4 and zero.num_workers(zero.PRESETS["tiny"], 1) == 1
    # The evaluation's searches batch their leaves: the largest divisor of the simulations up to the limit.
    config = zero.with_overrides(SMOKE, {"baseline_simulations": "200", "baseline_leaf_batch": "40",
                                         "eval_simulations": "30", "eval_leaf_batch": "8"})
    assert (config.baseline_leaves, config.baseline_search.leaf_batch, config.eval_search.leaf_batch) == (40, 40, 6)
    assert zero.with_overrides(config, {"baseline_simulations": "202"}).baseline_leaves == 2
    assert zero.with_overrides(config, {"baseline_simulations": "3"}).baseline_leaves == 3
    assert zero.with_overrides(config, {"search": "gumbel"}).eval_search.leaf_batch == 1


# ------------------------------------------------------------------------------ self-play

SIZE, GAMES, MAX_MOVES = 5, 4, 12


@pytest.fixture(scope="module")
def tiny():
    config = dataclasses.replace(SMOKE, max_moves=MAX_MOVES)
    game, net = config.game, config.net
    variables = jax.jit(lambda k: nets.init_variables(net, k, size=SIZE))(jax.random.PRNGKey(1))
    evaluator = network_evaluator(lambda v, x: net.apply(v, x), features.zero_planes)
    search = make_search(game, evaluator, config.selfplay_search)
    return config, game, variables, search


def test_selfplay_examples_are_consistent(tiny):
    config, game, variables, search = tiny
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search))
    planes_of = jax.jit(jax.vmap(features.zero_planes))
    legal_of = jax.jit(jax.vmap(game.legal_action_mask))
    step = jax.jit(game.step)
    example = replay.Examples(jnp.zeros((SIZE, SIZE, 17), jnp.uint8), jnp.zeros(SIZE * SIZE + 1), jnp.float32(0))
    buffer = replay.replay_init(1024, example)
    sp = selfplay.selfplay_init(game, GAMES)
    chex.assert_shape(sp.planes, (GAMES, MAX_MOVES, SIZE, SIZE, 17))
    chex.assert_type([sp.planes, sp.policy, sp.player, sp.length], [jnp.uint8, jnp.float32, jnp.int8, jnp.int32])

    seen = [[] for _ in range(GAMES)]  # per game: (planes, legal, to_play) before each move
    finished, total = 0, {"games": 0, "positions": 0}
    for t in range(2 * MAX_MOVES):  # every game ends within MAX_MOVES moves
        planes, legal = np.asarray(planes_of(sp.games)), np.asarray(legal_of(sp.games))
        to_play, length = np.asarray(sp.games.to_play), np.asarray(sp.length)
        for b in range(GAMES):
            assert length[b] == len(seen[b])
            seen[b].append((planes[b], legal[b], to_play[b]))
        insert = int(buffer.size)
        sp, buffer, stats = move(variables, sp, buffer, jax.random.PRNGKey(t))
        for k in total:
            total[k] += int(np.sum(stats[k]))
        new_length = np.asarray(sp.length)
        row = insert
        for b in range(GAMES):  # finished games' positions arrive game by game, in move order
            if new_length[b] == length[b] + 1:
                continue
            assert new_length[b] == 0
            n = len(seen[b])
            actions = np.asarray(sp.actions[b, :n])  # the trajectory is kept until overwritten
            state = game.init()
            for a in actions:
                assert not game.is_terminal(state)
                state = step(state, int(a))
            assert bool(game.is_terminal(state))
            returns = np.asarray(game.returns(state))
            assert set(np.abs(returns).tolist()) <= {0.0, 1.0} and returns[0] == -returns[1]
            for i, (planes_i, legal_i, player_i) in enumerate(seen[b]):
                assert player_i == (BLACK if i % 2 == 0 else -BLACK)  # every move alternates, passes too
                np.testing.assert_array_equal(np.asarray(buffer.planes[row]), planes_i.astype(np.uint8))
                policy = np.asarray(buffer.policy[row])
                np.testing.assert_allclose(policy.sum(), 1.0, atol=1e-5)
                assert np.all(policy[~legal_i] == 0.0) and legal_i[actions[i]]
                assert float(buffer.value[row]) == returns[0 if player_i == BLACK else 1]
                row += 1
            seen[b] = []
            finished += 1
        assert int(buffer.size) == row  # nothing but the finished games' positions
    assert finished >= GAMES and total["games"] == finished and total["positions"] == int(buffer.size)
    # Positions of one game all carry its outcome: signs alternate with the player to move.
    assert set(np.unique(np.asarray(buffer.value[: int(buffer.size)])).tolist()) <= {-1.0, 0.0, 1.0}


def test_outcomes_for_players():
    player = jnp.asarray([[1, -1, 1], [1, -1, 1]], jnp.int8)
    returns = jnp.asarray([[1.0, -1.0], [0.0, 0.0]])
    np.testing.assert_array_equal(selfplay.outcomes_for_players(player, returns), [[1, -1, 1], [0, 0, 0]])


# -------------------------------------------------------------------------------- matches

@pytest.mark.parametrize("openings", [None, [[0, 6], [12, 18], [24, 7]]], ids=["empty", "starts"])
def test_match_alternates_colours_and_scores_from_the_players_view(tiny, openings):
    """Both games of a pair from the same start (the empty board, or the pair's opening), the
    scripted player black in the first and white in the second, outcomes from its side."""
    config, game, _, _ = tiny
    passer = lambda params, states, key: jnp.full(states.to_play.shape, game.num_actions - 1, jnp.int32)
    lowest = lambda params, states, key: jnp.argmax(jax.vmap(game.legal_action_mask)(states), axis=-1)
    pairs = 3
    step = jax.jit(game.step)

    def replay(actions):
        state = game.init()
        for a in actions:
            state = step(state, a)
        return state

    starts = None if openings is None else jax.tree_util.tree_map(lambda *x: jnp.stack(x), *map(replay, openings))
    play = jax.jit(functools.partial(selfplay.play_match, game, passer, lowest, pairs, starts=starts))
    out = play(None, None, jax.random.PRNGKey(0))
    chex.assert_shape([out.outcomes, out.moves, out.scores], [(2 * pairs,), (2 * pairs, MAX_MOVES), (2 * pairs,)])
    for g in range(2 * pairs):
        moves = [int(a) for a in np.asarray(out.moves[g])]
        played = moves[: moves.index(-1)] if -1 in moves else moves
        assert all(a == -1 for a in moves[len(played):])
        mine = played[g % 2::2]  # the scripted player is black in even games, white in odd ones
        assert mine and all(a == game.num_actions - 1 for a in mine)
        opening = openings[g // 2] if openings else []
        assert played[1 - g % 2] == min(set(range(SIZE * SIZE)) - set(opening))  # the lowest empty point
        state = replay(opening + played)
        assert bool(game.is_terminal(state))
        returns = np.asarray(game.returns(state))
        assert float(out.outcomes[g]) == returns[g % 2]
        np.testing.assert_allclose(float(out.scores[g]), float(game.score(state)))
    if openings is None:  # passing every move as black loses: no stone against white's stones or komi
        np.testing.assert_array_equal(np.asarray(out.outcomes[0::2]), -1.0)


# ---------------------------------------------------------------------- the job, children


def start_cli(*args, devices: int = 1) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "alphago_jax.cli", "train", "--no-progress", *args],
                            env=child_env(devices), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(child: subprocess.Popen, timeout: float = 600) -> str:
    stdout, stderr = child.communicate(timeout=timeout)
    assert child.returncode == 0, stderr[-4000:]
    assert "Traceback" not in stderr, stderr[-4000:]
    return stdout


def read_rows(run: pathlib.Path) -> list[dict]:
    with open(run / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def losses(run: pathlib.Path) -> np.ndarray:
    """float64[iterations, 3]: the mean losses of each iteration."""
    return np.array([[float(r[k]) for k in LOSSES] for r in read_rows(run) if r["loss"]])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The smoke preset run uninterrupted, on one CPU device and on four, concurrently."""
    base = tmp_path_factory.mktemp("zero")
    one, four = base / "one", base / "four"
    children = start_cli("--preset", "smoke", "--out", str(one)), start_cli("--preset", "smoke", "--out", str(four),
                                                                           devices=4)
    outputs = [finish(c) for c in children]
    return one, four, outputs


def test_run_reports_where_its_results_are(runs):
    one, _, (stdout, _) = runs
    assert f"checkpoint:  {one / 'checkpoints' / '3'}" in stdout
    assert f"plots:       {one / 'metrics.png'}" in stdout and (one / "metrics.png").stat().st_size > 0
    assert f"sample game: {one / 'sample.sgf'}" in stdout
    record = sgf.load(one / "sample.sgf")
    sgf.replay(record)  # legal moves all through
    assert record.size == SMOKE.board_size and record.komi == SMOKE.komi
    rows = read_rows(one)
    assert [int(r["step"]) for r in rows] == [0, 1, 2, 3]
    assert rows[0]["win_random"] and rows[0]["win_mcts"] and rows[-1]["win_best"] and not rows[1]["win_random"]
    assert [int(r["train_step"]) for r in rows] == [0, 4, 8, 12]
    # Where the time went: every row has the phases' wall seconds.
    seconds = [{k: float(r[k]) for k in PHASE_COLUMNS} for r in rows]
    assert seconds[0]["eval_s"] > 0 and seconds[0]["selfplay_s"] == seconds[0]["checkpoint_s"] == 0
    assert float(rows[0]["eval_random_s"]) > 0 and float(rows[0]["eval_mcts_s"]) > 0
    for s in seconds[1:]:
        assert s["selfplay_s"] > 0 and s["train_s"] > 0 and s["checkpoint_s"] > 0
    assert seconds[1]["eval_s"] == seconds[2]["eval_s"] == 0 and seconds[3]["eval_s"] > 0  # eval_interval 0
    assert float(rows[3]["eval_best_s"]) > 0 and not rows[2]["eval_random_s"]
    assert sum(float(rows[0][k]) for k in ("eval_random_s", "eval_mcts_s")) <= seconds[0]["eval_s"]
    # Each program is compiled on its first run, and only then.
    assert seconds[1]["compile_s"] > 0 and seconds[2]["compile_s"] < 0.5
    for program in ("selfplay", "train", "eval_random", "eval_mcts", "eval_best"):
        assert stdout.count(f"{program}: first run ") == 1, program
    assert "compiled again" not in stdout
    ckpt = Checkpointer(one / "checkpoints", kind="zero", read_only=True)
    assert ckpt.all_steps() == [2, 3]  # keep = 2
    assert ckpt.metadata()["train_step"] == 12 and ckpt.metadata()["devices"] == 1
    # The plot command redraws the curves.
    os.remove(one / "metrics.png")
    assert cli.main(["plot", str(one)]) == 0 and (one / "metrics.png").stat().st_size > 0


def test_four_devices_give_the_losses_of_one(runs):
    one, four, _ = runs
    assert Checkpointer(four / "checkpoints", kind="zero", read_only=True).metadata()["devices"] == 4
    assert len(losses(one)) == SMOKE.iterations
    np.testing.assert_allclose(losses(four), losses(one), rtol=1e-4)
    rows_one, rows_four = read_rows(one), read_rows(four)
    for key in ("train_step", "games", "positions", "replay_size", "win_random", "win_mcts", "win_best"):
        assert [r[key] for r in rows_one] == [r[key] for r in rows_four], key


# The child that gets killed: the job through zero.train, with a self-inflicted SIGKILL either
# right after the self-play program of iteration K has been dispatched (it is still executing),
# or as soon as the checkpoint of iteration K has started to be written.
KILLER = textwrap.dedent(
    """
    import os, signal, sys, threading, time
    from alphago_jax import zero

    out, phase, kill_at, resume = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "resume"
    marker = os.path.join(out, "killed")
    at = {"iteration": 0}

    def die(note):
        with open(marker, "w") as f:
            f.write(note)
        os.kill(os.getpid(), signal.SIGKILL)

    build = zero.loop.build

    def build_with_kill(config, mesh=None):
        programs = build(config, mesh)

        def selfplay(*args):
            result = programs.selfplay(*args)
            if phase == "selfplay" and at["iteration"] == kill_at:
                die("selfplay " + str(result[1].size.is_ready()))
            return result

        return programs._replace(selfplay=selfplay)

    def watch_checkpoint():
        directory = os.path.join(out, "checkpoints")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(".orbax-checkpoint-tmp" in name for name in os.listdir(directory)):
                die("checkpoint")
            time.sleep(0.0002)

    def callback(name, iteration):
        at["iteration"] = iteration
        if phase == "checkpoint" and name == "checkpoint" and iteration == kill_at:
            threading.Thread(target=watch_checkpoint, daemon=True).start()

    zero.loop.build = build_with_kill
    zero.train(zero.PRESETS["smoke"], out, resume=resume, progress=False, callback=callback)
    print("not killed")
    """
)


def run_killed(out: pathlib.Path, phase: str, iteration: int, resume: bool) -> str:
    child = subprocess.run([sys.executable, "-c", KILLER, str(out), phase, str(iteration),
                            "resume" if resume else "fresh"], env=child_env(), cwd=ROOT, capture_output=True,
                           text=True, timeout=600)
    assert child.returncode == -9, f"exit {child.returncode}: {child.stdout[-2000:]} {child.stderr[-4000:]}"
    note = (out / "killed").read_text()
    os.remove(out / "killed")
    return note


def test_killed_twice_and_resumed_ends_like_the_uninterrupted_run(runs, tmp_path, capsys):
    one, _, _ = runs
    out = tmp_path / "run"
    out.mkdir()
    # 1. Killed while the self-play program of iteration 2 runs: only iteration 1 is saved.
    assert run_killed(out, "selfplay", 2, resume=False) == "selfplay False"
    assert Checkpointer(out / "checkpoints", kind="zero", read_only=True).all_steps() == [1]
    # 2. Resumed, and killed while the checkpoint of iteration 3 is being written.
    assert run_killed(out, "checkpoint", 3, resume=True) == "checkpoint"
    names = os.listdir(out / "checkpoints")
    assert sorted(n for n in names if n.isdigit()) == ["1", "2"]
    assert any(TMP_MARK in n for n in names), names  # the kill landed inside the write
    # 3. Resumed with the command line, with the run's own settings: it ends as the
    #    uninterrupted run did, with its checkpoints, losses and evaluations.
    stdout = finish(start_cli("--resume", "--out", str(out)))
    assert "(resuming)" in stdout and f"checkpoint:  {out / 'checkpoints' / '3'}" in stdout
    assert sorted(os.listdir(out / "checkpoints")) == ["2", "3"]
    ours, theirs = Checkpointer(out / "checkpoints", kind="zero", read_only=True), \
        Checkpointer(one / "checkpoints", kind="zero", read_only=True)
    assert ours.metadata()["train_step"] == theirs.metadata()["train_step"] == 12
    rows, reference = read_rows(out), read_rows(one)
    assert [r["step"] for r in rows] == ["0", "1", "2", "3"]  # each iteration logged once
    np.testing.assert_allclose(losses(out), losses(one), rtol=1e-6)
    for key in ("games", "positions", "replay_size", "win_random", "win_mcts", "win_best", "best_elo"):
        assert [r[key] for r in rows] == [r[key] for r in reference], key
    assert (out / "sample.sgf").read_bytes() == (one / "sample.sgf").read_bytes()
    # Running the finished run again does nothing and reports the same places.
    assert cli.main(["train", "--no-progress", "--resume", "--out", str(out)]) == 0
    assert f"checkpoint:  {out / 'checkpoints' / '3'}" in capsys.readouterr().out
    assert sorted(os.listdir(out / "checkpoints")) == ["2", "3"] and len(read_rows(out)) == 4


# ---------------------------------------------------------------------- clear refusals

def train_cli(capsys, *args) -> tuple[int, str]:
    code = cli.main(["train", "--no-progress", *args])
    return code, capsys.readouterr().err


def test_refuses_foreign_and_corrupted_directories(runs, tmp_path, capsys):
    one, _, _ = runs
    # Files that are not checkpoints.
    foreign = tmp_path / "foreign"
    (foreign / "checkpoints").mkdir(parents=True)
    (foreign / "checkpoints" / "notes.txt").write_text("mine")
    code, err = train_cli(capsys, "--resume", "--out", str(foreign))
    assert code == 2 and str(foreign / "checkpoints") in err and "not a checkpoint directory" in err
    # Checkpoints of another kind of run.
    other = tmp_path / "other"
    Checkpointer(other / "checkpoints", kind="sl").save(1, {"w": jnp.ones(2)})
    code, err = train_cli(capsys, "--resume", "--out", str(other))
    assert code == 2 and str(other / "checkpoints" / "1") in err and "'sl' run" in err
    # A finished run, without --resume, or with other settings.
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    code, err = train_cli(capsys, "--out", str(copy))
    assert code == 2 and "--resume" in err and str(copy / "checkpoints") in err
    code, err = train_cli(capsys, "--resume", "--preset", "smoke", "--set", "num_simulations=8", "--out", str(copy))
    assert code == 2 and "num_simulations: 4 vs 8" in err and str(copy / "checkpoints" / "3") in err
    # Damaged array data in the latest checkpoint.
    data = max((p for p in (copy / "checkpoints" / "3" / "state").rglob("*") if p.is_file() and "/d/" in str(p)),
               key=lambda p: p.stat().st_size)
    raw = bytearray(data.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    data.write_bytes(bytes(raw))
    code, err = train_cli(capsys, "--resume", "--iterations", "4", "--out", str(copy))
    assert code == 2 and str(copy / "checkpoints" / "3") in err and "corrupted" in err, err
    with pytest.raises(CheckpointError):
        Checkpointer(copy / "checkpoints", kind="zero").restore(3)
    # The plot command on a directory without a run.
    assert cli.main(["plot", str(tmp_path / "nothing")]) == 2
    assert "no metrics file" in capsys.readouterr().err


# ------------------------------------------------------------------ the network as one file

def test_export_plays_and_refuses_damaged_files(runs, tmp_path, capsys):
    one, _, _ = runs
    path = tmp_path / "net.msgpack"
    assert cli.main(["export", str(one), str(path), "--note", "the smoke run"]) == 0
    assert f"{path}: 5x5 network, iteration 3, 12 training steps" in capsys.readouterr().out
    saved = load_network(path)
    from_run = zero.network_of_run(one)
    chex.assert_trees_all_close(saved.variables, from_run.variables)
    assert saved.info["command"] == "the smoke run" and saved.info["config"]["blocks"] == SMOKE.blocks
    assert (saved.board_size, saved.komi, saved.net) == (SMOKE.board_size, SMOKE.komi, SMOKE.net)
    # The exported network and the run's directory as players: legal moves, the same choice.
    moves = []
    for spec in (f"checkpoint:{path},sims=4", f"net:net=checkpoint:{one},sims=4"):
        player = registry.make_player(spec)
        player.new_game(5, SMOKE.komi)
        moves.append(player.genmove(BLACK).action)
        with pytest.raises(ValueError, match=r"plays 5x5, not 9x9"):
            player.new_game(9, 7.5)
    assert moves[0] == moves[1] and 0 <= moves[0] <= 25
    # Damaged and foreign files are refused with the path named.
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "flipped.msgpack").write_bytes(bytes(raw))
    (tmp_path / "cut.msgpack").write_bytes(bytes(raw[: len(raw) // 3]))
    (tmp_path / "other.msgpack").write_bytes(b"\x81\xa1a\x01")
    for name, why in (("flipped", "checksum|decode"), ("cut", "decode"), ("other", "does not say"), ("none", "no such")):
        with pytest.raises(ValueError, match=rf"{tmp_path / name}.msgpack: .*({why})"):
            load_network(tmp_path / f"{name}.msgpack")
    assert cli.main(["export", str(tmp_path / "nothing"), str(tmp_path / "x.msgpack")]) == 2
    assert "no checkpoint" in capsys.readouterr().err and not (tmp_path / "x.msgpack").exists()


def test_no_time_left_gives_one_iteration_without_an_evaluation(runs, tmp_path, capsys):
    one, _, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    # Resumed to 10 iterations with no time at all: one more iteration, checkpointed, and the
    # final evaluation skipped with a word in the log (tests/test_timing.py drives the cases
    # between with a clock).
    assert cli.main(["train", "--no-progress", "--resume", "--iterations", "10", "--time-limit", "0",
                     "--out", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "finished 4 iterations" in out and "time limit: iteration 4 gets no final evaluation" in out
    rows = read_rows(copy)
    assert [int(r["step"]) for r in rows] == [0, 1, 2, 3, 4] and not rows[-1]["win_random"]
    assert float(rows[-1]["selfplay_s"]) > 0 and float(rows[-1]["eval_s"]) == 0
    assert Checkpointer(copy / "checkpoints", kind="zero", read_only=True).all_steps() == [3, 4]


def test_a_row_lost_after_its_checkpoint_is_logged_from_it(runs, tmp_path):
    one, _, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    rows = read_rows(copy)
    with open(copy / "metrics.csv", "w", newline="") as f:  # as if killed between checkpoint 3 and its row
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows[:-1])
    assert cli.main(["train", "--no-progress", "--resume", "--out", str(copy)]) == 0  # nothing left to run
    again = read_rows(copy)
    assert [r["step"] for r in again] == ["0", "1", "2", "3"]
    for key in ("games", "positions", "replay_size", "loss", "win_random", "win_best", "selfplay_s", "eval_s"):
        assert again[3][key] == rows[3][key], key


def test_init_from_each_source_loads_and_trains(runs, tmp_path, capsys):
    one, _, _ = runs
    file = zero.export_network(one, tmp_path / "net.msgpack")
    warm = tmp_path / "warm"
    warm.mkdir()
    shutil.copy(file, warm / zero.WARM_START_FILE)
    expected = zero.network_of_run(one).variables
    for source in (file, one, warm):  # a network file, a training run, a warm-start directory
        chex.assert_trees_all_close(zero.init_network(source, SMOKE).variables, expected)
    # A new run from the file: at a vanishing learning rate its trained parameters stay the init's.
    new = tmp_path / "new"
    assert cli.main(["train", "--preset", "smoke", "--no-progress", "--iterations", "1", "--init", str(file),
                     "--set", "optimizer.learning_rate=1e-9", "--out", str(new)]) == 0
    trained = zero.network_of_run(new)
    assert trained.info["train_steps"] == SMOKE.train_steps
    chex.assert_trees_all_close(trained.variables["params"], expected["params"], atol=1e-6)
    # The provenance: the run behind the file, the init, then this run.
    chain = trained.info["chain"]
    assert [c["step"] for c in chain] == ["alphago-jax train", "init", "alphago-jax train"]
    assert chain[0]["run"] == str(one) and chain[1]["path"] == str(file) and chain[2]["run"] == str(new)
    assert chain[2]["wall_s"] > 0
    # A run that already has checkpoints keeps its own network.
    assert cli.main(["train", "--no-progress", "--resume", "--init", str(file), "--out", str(new)]) == 2
    assert "--init starts a new run" in capsys.readouterr().err


@pytest.mark.parametrize("source, why", [
    ("missing", "not a network file, a training run's directory or a warm-start directory"),
    ("other-size", r"blocks=1, filters=8, value_hidden=8, inputs=stones, board 5\) does not fit this run's \(blocks=2"),
])
def test_bad_init_is_named(runs, tmp_path, capsys, source, why):
    one, _, _ = runs
    path = tmp_path / source
    if source == "other-size":
        zero.export_network(one, path)
    assert cli.main(["train", "--preset", "smoke", "--no-progress", "--set", "blocks=2", "--init", str(path),
                     "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and pytest.importorskip("re").search(why, err), err
    assert not (tmp_path / "run" / "checkpoints").exists() or not any((tmp_path / "run" / "checkpoints").iterdir())
