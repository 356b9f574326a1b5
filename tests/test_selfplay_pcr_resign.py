"""Self-play's playout cap randomization and varied starts (KataGo) and resignation (AlphaGo Zero).

- Under the cap, exactly the full-search positions of finished games reach the replay buffer,
  in move order, with their game's outcome, for both searches ("puct" and "gumbel").
- A resigned game is a loss for the side that resigned; no-resign games are drawn at the set
  fraction and counted (would have resigned, falsely or not); the threshold's calibration keeps
  the measured false-resignation rate under its target.
- Varied starts: the drawn share of new games opens with 1 to ``moves`` random stones, the
  others on an empty board; games that finish in ``selfplay``'s scan restart from them.
- A tiny ``zero.train`` run with these switches on completes and logs the new columns.

Resignation tests use a stand-in search (random legal moves, a chosen root value): what they
check does not depend on the search, and it compiles in a moment.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import features, nets, zero
from alphago_jax.games.base import BLACK
from alphago_jax.playout import sample_legal
from alphago_jax.train.jobs import checkpoint_dir
from alphago_jax.search import SearchOutput, make_search, network_evaluator
from alphago_jax.train import Checkpointer, replay
from alphago_jax.zero import selfplay

SMOKE = zero.PRESETS["smoke"]
SIZE, MAX_MOVES = 5, 10
A = SIZE * SIZE + 1


def _buffer(capacity=1024):
    example = replay.Examples(jnp.zeros((SIZE, SIZE, 17), jnp.uint8), jnp.zeros(A), jnp.float32(0))
    return replay.replay_init(capacity, example)


def _returns_of(game, actions):
    """The returns (black, white) of the game that plays ``actions`` from the start."""
    step = jax.jit(game.step)
    state = game.init()
    for a in actions:
        assert not bool(game.is_terminal(state))
        state = step(state, int(a))
    assert bool(game.is_terminal(state))
    return np.asarray(game.returns(state))


# ------------------------------------------------------------------ playout cap randomization

@pytest.mark.parametrize("algorithm", ["puct", "gumbel"])
def test_only_full_search_positions_become_examples(algorithm):
    games, sims, fast_sims = 4, 8, 1
    config = dataclasses.replace(SMOKE, max_moves=MAX_MOVES, search=algorithm, num_simulations=sims,
                                 fast_simulations=fast_sims, full_search_fraction=0.5, gumbel_considered=4)
    game, net = config.game, config.net
    variables = jax.jit(lambda k: nets.init_variables(net, k, size=SIZE))(jax.random.PRNGKey(1))
    evaluator = network_evaluator(lambda v, x: net.apply(v, x), features.zero_planes)
    full_search = make_search(game, evaluator, config.selfplay_search)
    fast_search = make_search(game, evaluator, config.fast_search)
    assert config.fast_search.num_simulations == fast_sims and config.fast_search.dirichlet_fraction == 0
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, full_search, fast_search=fast_search))
    planes_of = jax.jit(jax.vmap(features.zero_planes))
    buffer, sp = _buffer(), selfplay.selfplay_init(game, games)
    chex.assert_shape(sp.full, (games, MAX_MOVES))
    chex.assert_type(sp.full, bool)

    rng = np.random.default_rng(0)
    seen = [[] for _ in range(games)]  # per game: (planes, full) before each move
    total = {k: 0 for k in selfplay.STAT_NAMES}
    finished = fast_rows = 0
    for t in range(3 * MAX_MOVES):
        full = bool(rng.random() < 0.5)
        planes, length = np.asarray(planes_of(sp.games)), np.asarray(sp.length)
        for b in range(games):
            seen[b].append((planes[b], full))
        insert = int(buffer.size)
        sp, buffer, stats = move(variables, sp, buffer, jax.random.PRNGKey(t), jnp.asarray(full))
        total = {k: total[k] + int(np.sum(stats[k])) for k in total}
        new_length = np.asarray(sp.length)
        row = insert
        for b in range(games):
            n = len(seen[b])
            # The searches leave their mark on the recorded target: one simulation visits one move.
            target = np.asarray(sp.policy[b, n - 1])
            if not seen[b][-1][1] and algorithm == "puct":
                assert target.max() == 1.0
            if new_length[b] == length[b] + 1:
                continue
            assert new_length[b] == 0
            np.testing.assert_array_equal(np.asarray(sp.full[b, :n]), [f for _, f in seen[b]])
            returns = _returns_of(game, np.asarray(sp.actions[b, :n]))
            players = np.asarray(sp.player[b, :n])
            for i, (planes_i, full_i) in enumerate(seen[b]):
                if not full_i:
                    fast_rows += 1
                    continue
                np.testing.assert_array_equal(np.asarray(buffer.planes[row]), planes_i.astype(np.uint8))
                np.testing.assert_allclose(np.asarray(buffer.policy[row]), np.asarray(sp.policy[b, i]))
                assert float(buffer.value[row]) == returns[0 if players[i] == BLACK else 1]
                row += 1
            seen[b] = []
            finished += 1
        assert int(buffer.size) == row  # only the finished games' full-search positions
    assert finished >= games and fast_rows > 0 and int(buffer.size) > 0
    assert total["games"] == finished and total["positions"] == int(buffer.size)
    assert total["resigned"] == total["no_resign_games"] == 0  # resignation is off


def test_selfplay_scan_with_a_schedule_writes_its_full_moves():
    """``selfplay`` (the scan the main job runs) with an all-fast schedule writes nothing, with an
    all-full one the same examples as without the cap (the searches are the same)."""
    config = dataclasses.replace(SMOKE, max_moves=MAX_MOVES)
    game = config.game
    stand_in = _stand_in_search(game, lambda states: jnp.zeros(states.to_play.shape))
    moves = 2 * MAX_MOVES
    run = jax.jit(functools.partial(selfplay.selfplay, game, stand_in, moves, fast_search=stand_in))
    plain = jax.jit(functools.partial(selfplay.selfplay, game, stand_in, moves))
    key = jax.random.PRNGKey(3)
    sp0 = selfplay.selfplay_init(game, 4)
    _, none, stats = run(None, sp0, _buffer(), key, jnp.zeros((moves,), bool))
    assert int(none.size) == 0 and int(stats["positions"]) == 0 and int(stats["games"]) >= 4
    _, every, stats = run(None, sp0, _buffer(), key, jnp.ones((moves,), bool))
    _, reference, _ = plain(None, sp0, _buffer(), key)
    assert int(every.size) == int(stats["positions"]) == int(reference.size) > 0
    chex.assert_trees_all_equal(every, reference)
    with pytest.raises(ValueError, match="schedule"):
        selfplay.selfplay(game, stand_in, moves, None, sp0, _buffer(), key, fast_search=stand_in)


# -------------------------------------------------------------------------------- varied starts

def test_random_starts_open_the_drawn_share_of_games_with_random_stones():
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    batch, moves, fraction = 1024, 4, 0.5
    starts = jax.jit(selfplay.random_starts, static_argnums=(0, 2, 3, 4))(game, jax.random.PRNGKey(5), batch,
                                                                        moves, fraction)
    count = np.asarray(starts.move_count)
    stones = np.sum(np.asarray(starts.board) != 0, axis=-1)
    opened = count > 0
    # 1,024 draws: the share's standard error is 0.016, the tolerance 0.06 about four of them.
    assert abs(opened.mean() - fraction) < 0.06, opened.mean()
    assert set(count[opened]) == set(range(1, moves + 1))  # every number of moves drawn
    # Stones, not passes: each move put one down (a capture in 4 moves on 5x5 is possible, rare).
    assert np.mean(stones[opened] == count[opened]) > 0.95 and np.all(stones <= count)
    np.testing.assert_array_equal(np.asarray(starts.to_play), np.where(count % 2 == 0, BLACK, -BLACK))
    assert not np.any(np.asarray(jax.vmap(game.is_terminal)(starts)))
    assert np.all(stones[~opened] == 0)
    # The history planes hold the opening's boards: the network sees a game, not a setup.
    np.testing.assert_array_equal(np.asarray(starts.boards)[:, 0], np.asarray(starts.board))
    # No share, or no moves: empty boards, as before.
    for off in ((moves, 0.0), (0, 1.0)):
        plain = selfplay.random_starts(game, jax.random.PRNGKey(5), 4, *off)
        chex.assert_trees_all_equal(plain, selfplay.selfplay_init(game, 4).games)


def test_selfplay_restarts_finished_games_from_random_starts():
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    stand_in = _stand_in_search(game, lambda states: jnp.zeros(states.to_play.shape))
    batch, moves = 16, 3
    run = jax.jit(functools.partial(selfplay.selfplay, game, stand_in, MAX_MOVES + 2, random_start=(moves, 1.0)))
    sp, buffer, stats = run(None, selfplay.selfplay_init(game, batch), _buffer(), jax.random.PRNGKey(7))
    # Every game (no passes: each lasts MAX_MOVES) ended once and has played 2 moves of the next,
    # which began after 1 to 3 random moves that are not in its trajectory.
    assert int(stats["games"]) == batch and int(buffer.size) == batch * MAX_MOVES
    np.testing.assert_array_equal(np.asarray(sp.length), 2)
    opening = np.asarray(sp.games.move_count) - 2
    assert opening.min() >= 1 and opening.max() <= moves and len(set(opening)) > 1
    # Its first recorded position is the random start: as many stones as opening moves.
    first = np.asarray(sp.planes[:, 0]).reshape(batch, -1, 17)[:, :, [0, 8]].sum(axis=(1, 2))
    np.testing.assert_array_equal(first, opening)


# ---------------------------------------------------------------------------------- resignation

def _stand_in_search(game, root_value):
    """A search stand-in: random legal moves other than pass (a game lasts ``max_moves``), the
    uniform policy over them as target, and ``root_value(states) -> float32[B]`` as the root value."""
    legal_of, step = jax.vmap(game.legal_action_mask), jax.vmap(game.step)

    def search(params, states, key):
        legal = legal_of(states).at[:, -1].set(False)
        actions = sample_legal(key, legal)
        probs = legal / jnp.sum(legal, axis=-1, keepdims=True)
        return SearchOutput(actions=actions, visit_probs=probs, root_value=root_value(states).astype(jnp.float32),
                            next_states=step(states, actions), q_values=jnp.zeros_like(probs), policy_target=probs)

    return search


def test_a_resigned_game_is_a_loss_for_the_side_that_resigned():
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    games, resign_at = 6, 3  # white resigns instead of the 4th move (move_count 3)
    search = _stand_in_search(game, lambda s: jnp.where(s.move_count == resign_at, -0.95, 0.2))
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search, resign=True, no_resign_fraction=0.0))
    sp, buffer = selfplay.selfplay_init(game, games, resign_threshold=-0.9), _buffer()
    chex.assert_trees_all_equal(sp.resign.threshold, jnp.float32(-0.9))
    for t in range(resign_at + 1):
        sp, buffer, stats = move(None, sp, buffer, jax.random.PRNGKey(t))
    # Every game resigned there (no game ends sooner without passes), with its 4 positions.
    np.testing.assert_array_equal(stats["resigned"], 1)
    np.testing.assert_array_equal(stats["games"], 1)
    np.testing.assert_array_equal(sp.length, 0)
    np.testing.assert_array_equal(stats["white_wins"], 0)
    np.testing.assert_array_equal(stats["black_wins"], 1)
    # The resigner (white, moves 2 and 4) gets -1, black +1: the values alternate +1, -1.
    assert int(buffer.size) == games * (resign_at + 1)
    values = np.asarray(buffer.value[: int(buffer.size)]).reshape(games, resign_at + 1)
    np.testing.assert_array_equal(values, np.tile([1.0, -1.0, 1.0, -1.0], (games, 1)))
    assert int(np.sum(stats["no_resign_games"])) == 0

    # The same games as no-resign games (fraction 1): nobody resigns, white would have.
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search, resign=True, no_resign_fraction=1.0))
    sp = selfplay.selfplay_init(game, games, resign_threshold=-0.9)
    total = {k: 0 for k in selfplay.STAT_NAMES}
    white_wins = 0
    for t in range(MAX_MOVES):
        sp, buffer, stats = move(None, sp, buffer, jax.random.PRNGKey(100 + t))
        would = np.asarray(stats["would_resign"], bool)
        white_wins += int(np.sum(np.asarray(stats["white_wins"])[would]))
        total = {k: total[k] + int(np.sum(stats[k])) for k in total}
        if t == resign_at:
            np.testing.assert_array_equal(sp.resign.would, -BLACK)
    assert total["resigned"] == 0 and total["no_resign_games"] == total["games"] == games
    assert total["would_resign"] == games
    assert total["false_resigns"] == white_wins  # white would have resigned; false where it won
    # Each no-resign game entered the calibration record once: white's lowest value was -0.95.
    res = sp.resign
    assert float(res.game_low.sum()) == games
    assert float(res.game_low[selfplay._resign_bin(jnp.float32(-0.95))]) == total["would_resign"]


def test_no_resign_games_are_drawn_at_the_set_fraction():
    """Every game may resign at its first move: those that do not are the no-resign draws."""
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    games, fraction = 64, 0.25
    search = _stand_in_search(game, lambda s: jnp.full(s.to_play.shape, -0.99))
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search, resign=True,
                                     no_resign_fraction=fraction))
    sp, buffer = selfplay.selfplay_init(game, games, resign_threshold=-0.9), _buffer(64)
    draws, kept, resigned, no_resign_games = 0, 0, 0, 0
    for t in range(100):
        starting = np.asarray(sp.length) == 0
        sp, buffer, stats = move(None, sp, buffer, jax.random.PRNGKey(t))
        no_resign = np.asarray(sp.resign.no_resign)
        draws += int(starting.sum())
        kept += int(no_resign[starting].sum())
        # A game that may resign does so at its first move; a no-resign game plays on.
        np.testing.assert_array_equal(np.asarray(stats["resigned"])[starting], ~no_resign[starting])
        resigned += int(np.sum(stats["resigned"]))
        no_resign_games += int(np.sum(stats["no_resign_games"]))
    # About 2,000 draws (no-resign games hold their slot for MAX_MOVES moves): the standard error
    # of the share is about 0.01, the tolerance 0.05 five of them; the seed is fixed besides.
    assert draws > 1500 and abs(kept / draws - fraction) < 0.05, (kept, draws)
    assert resigned == draws - kept
    assert no_resign_games > 0


def test_calibration_keeps_false_resignations_under_the_target():
    rng = np.random.default_rng(0)
    n = 400
    # Losers sink towards -1; a few eventual winners dip low too.
    loser = rng.uniform(-1.0, -0.6, n)
    winner = np.where(rng.random(n) < 0.1, rng.uniform(-0.95, -0.5, n), rng.uniform(-0.3, 0.5, n))
    game_low, winner_low = np.minimum(loser, winner), winner
    edges = np.linspace(-1, 1, selfplay.RESIGN_BINS + 1)
    bins = lambda v: np.asarray(selfplay._resign_bin(jnp.asarray(v, jnp.float32)))  # noqa: E731

    def record(threshold, g, w, workers=2):  # the games split over workers, as in the main job
        hist = lambda v: np.stack([np.bincount(bins(part), minlength=selfplay.RESIGN_BINS)  # noqa: E731
                                   for part in np.array_split(v, workers)]).astype(np.float32)
        sp = selfplay.selfplay_init(dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game, 1, threshold)
        res = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(x, (workers,) + x.shape), sp.resign)
        return res.replace(game_low=jnp.asarray(hist(g)), winner_low=jnp.asarray(hist(w)))

    res = selfplay.calibrate_resignation(record(-0.9, game_low, winner_low), 0.05)
    v = float(res.threshold[0])
    chex.assert_trees_all_equal(res.threshold, jnp.full((2,), v))
    assert np.min(np.abs(edges - v)) < 1e-6
    # At v, on the raw values: of the games where somebody fell below v, at most 5% had the
    # eventual winner below v; one bin higher the rate is over 5% or no games would have resigned.
    below, wrong = np.sum(game_low < v), np.sum(winner_low < v)
    assert below >= selfplay.RESIGN_MIN_GAMES and wrong <= 0.05 * below
    higher = v + 2 / selfplay.RESIGN_BINS
    for u in edges[edges >= higher - 1e-6]:
        assert np.sum(winner_low < u) > 0.05 * np.sum(game_low < u)
    assert -1.0 < v < -0.5
    np.testing.assert_allclose(res.game_low.sum(), selfplay.RESIGN_DECAY * n, rtol=1e-5)  # decayed

    # Too few games: the threshold stays. Every winner as low as its loser: no resignation (-1).
    few = selfplay.calibrate_resignation(record(-0.9, game_low[:10], winner_low[:10]), 0.05)
    assert float(few.threshold[0]) == np.float32(-0.9)
    never = selfplay.calibrate_resignation(record(-0.9, game_low, game_low), 0.05)
    assert float(never.threshold[0]) == -1.0


# --------------------------------------------------------------------------------- the main job

def test_config_validates_the_new_fields():
    on = dataclasses.replace(SMOKE, full_search_fraction=0.25, resign_threshold=-0.9, random_start_fraction=0.5,
                             random_start_moves=6)
    assert on.playout_cap and not SMOKE.playout_cap and SMOKE.resign_threshold is None
    assert on.fast_search.num_simulations == max(1, SMOKE.num_simulations // 4)
    assert on.fast_search.gumbel_scale == 0 and on.fast_search.dirichlet_fraction == 0
    assert zero.ZeroConfig.from_dict(on.to_dict()) == on
    assert zero.with_overrides(SMOKE, {"resign_threshold": "-0.8"}).resign_threshold == -0.8
    for bad, field in ((dict(full_search_fraction=0.0), "full_search_fraction"),
                       (dict(fast_simulations=SMOKE.num_simulations + 1), "fast_simulations"),
                       (dict(fast_simulations=0), "fast_simulations"),
                       (dict(resign_threshold=-1.5), "resign_threshold"),
                       (dict(no_resign_fraction=1.5), "no_resign_fraction"),
                       (dict(false_resign_target=0.0), "false_resign_target"),
                       (dict(random_start_fraction=1.5), "random_start_fraction"),
                       (dict(random_start_moves=-1), "random_start_moves"),
                       (dict(random_start_fraction=0.5), "random_start_moves")):
        with pytest.raises(ValueError, match=f"ZeroConfig.{field}"):
            dataclasses.replace(SMOKE, **bad)


def test_train_with_playout_cap_and_resignation_logs_the_new_columns(tmp_path):
    config = dataclasses.replace(SMOKE, iterations=2, eval_games=0, full_search_fraction=0.5, fast_simulations=2,
                                 resign_threshold=0.0, no_resign_fraction=0.5, random_start_fraction=0.5,
                                 random_start_moves=4)
    result = zero.train(config, tmp_path / "run", progress=False, log=lambda text: None)
    assert result.iterations == 2
    with open(result.metrics) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [1, 2]
    for r in rows:
        for column in ("resign_rate", "false_resign_rate", "resign_threshold", "no_resign_games", "would_resign"):
            assert column in r
        assert 0 <= float(r["resign_rate"]) <= 1 and -1 <= float(r["resign_threshold"]) <= 1
        rate = float(r["false_resign_rate"] or "nan")
        assert math.isnan(rate) or 0 <= rate <= 1
        assert int(r["positions"]) <= int(r["games"]) * SMOKE.max_moves
    # A threshold of 0 on an untrained network: games resign.
    assert sum(float(r["resign_rate"]) for r in rows) > 0
    # The threshold is in the checkpointed run state.
    programs = zero.build(config)
    restored = Checkpointer(checkpoint_dir(result.out_dir), kind=zero.KIND, read_only=True).restore(
        target=programs.init(jax.random.PRNGKey(0)))
    assert float(np.asarray(restored.state.selfplay.resign.threshold)[0]) == pytest.approx(
        float(rows[-1]["resign_threshold"]))


def test_resigned_games_leave_their_heads_targets_unknown():
    """A resigned game's board was never played out: its positions get ownership
    ``replay.NO_OWNER`` (+-2) and a NaN score, which the loss leaves out."""
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    games, resign_at = 4, 3
    search = _stand_in_search(game, lambda s: jnp.where(s.move_count == resign_at, -0.95, 0.2))
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search, resign=True, no_resign_fraction=0.0))
    example = replay.Examples(jnp.zeros((SIZE, SIZE, 17), jnp.uint8), jnp.zeros(A), jnp.float32(0),
                              ownership=jnp.zeros(SIZE * SIZE, jnp.int8), score=jnp.float32(0))
    sp, buffer = selfplay.selfplay_init(game, games, resign_threshold=-0.9), replay.replay_init(256, example)
    for t in range(resign_at + 1):
        sp, buffer, stats = move(None, sp, buffer, jax.random.PRNGKey(t))
    np.testing.assert_array_equal(stats["resigned"], 1)
    n = int(buffer.size)
    assert n == games * (resign_at + 1)
    np.testing.assert_array_equal(np.abs(np.asarray(buffer.ownership[:n])), replay.NO_OWNER)
    assert np.isnan(np.asarray(buffer.score[:n])).all()
    # Played-out games (no resignation) keep real targets.
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, search, resign=False))
    sp, buffer = selfplay.selfplay_init(game, games), replay.replay_init(256, example)
    for t in range(MAX_MOVES):
        sp, buffer, _ = move(None, sp, buffer, jax.random.PRNGKey(50 + t))
    n = int(buffer.size)
    assert n == games * MAX_MOVES and (np.abs(np.asarray(buffer.ownership[:n])) <= 1).all()
    assert np.isfinite(np.asarray(buffer.score[:n])).all()

    # The loss counts only the known targets: unknown rows change nothing.
    from alphago_jax.zero import learner

    pred_own, pred_score = jnp.full((3, 4), 0.5), jnp.asarray([1.0, 2.0, 3.0])
    known_own, known_score = jnp.asarray([[1, -1, 0, 1]] * 2, jnp.int8), jnp.asarray([2.0, 0.0])
    args = dict(logits=jnp.zeros((3, 5)), value=jnp.zeros(3), target_policy=jnp.full((3, 5), 0.2),
                target_value=jnp.zeros(3), ownership_weight=1.0, score_weight=1.0)
    with_unknown = learner.zero_loss(**args, ownership=pred_own, score=pred_score,
                                     target_ownership=jnp.concatenate([known_own, jnp.full((1, 4), 2, jnp.int8)]),
                                     target_score=jnp.asarray([2.0, 0.0, jnp.nan]))[1]
    own = float(jnp.mean(jnp.square(known_own - 0.5)))
    err = jnp.abs(pred_score[:2] - known_score)
    assert float(with_unknown["ownership_loss"]) == pytest.approx(own)
    assert float(with_unknown["score_loss"]) == pytest.approx(float(jnp.mean(jnp.where(err <= 1, 0.5 * err ** 2,
                                                                                       err - 0.5))))
