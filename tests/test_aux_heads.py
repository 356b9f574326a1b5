"""KataGo's auxiliary heads and global pooling (Wu 2019) on AlphaGo Zero's network and pipeline.

- ``Go.ownership`` is the Tromp-Taylor owner of every point, checked against a flood fill in
  numpy on random finished 5x5 games; self-play gives every recorded position of a finished game
  that ownership and the final score margin from its player's view (with a stand-in search:
  random legal moves, which compiles in a moment).
- Augmentation maps the ownership target by the symmetry that maps the planes.
- ``DualResNet``'s heads: shapes, dtypes, ranges; the plain ``(logits, value)`` when they are off.
- The loss adds the heads' terms and metrics when the net has them.
- Network files record the switches; a file without them (the older format) still loads.
- A ``zero.train`` run on the ``smoke`` preset with everything on completes and logs
  ``ownership_loss`` and ``score_loss``; its export loads with its heads, and ``init_network``
  adds or drops heads.

Networks are 5x5, one block, 8 filters.
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
from flax import serialization

from alphago_jax import nets, zero
from alphago_jax.games.base import BLACK, WHITE
from alphago_jax.nets.saved import SWITCHES, load_network, network_config, save_network
from alphago_jax.playout import sample_legal
from alphago_jax.play import registry
from alphago_jax.search import SearchOutput, score_utility_apply
from alphago_jax.train import optimizer, replay
from alphago_jax.zero import learner, selfplay

SMOKE = zero.PRESETS["smoke"]
SIZE, N, A = 5, 25, 26
MAX_MOVES = 30


def _flood_ownership(board: np.ndarray, size: int) -> np.ndarray:
    """Tromp-Taylor owner of each point of a flat board, by a breadth-first flood fill of each
    empty region (the reference, independent of the JAX rules)."""
    grid = board.reshape(size, size)
    owner = np.sign(grid).astype(np.int8)
    seen = np.zeros_like(grid, bool)
    for r0 in range(size):
        for c0 in range(size):
            if grid[r0, c0] != 0 or seen[r0, c0]:
                continue
            region, borders, queue = [], set(), [(r0, c0)]
            seen[r0, c0] = True
            while queue:
                r, c = queue.pop()
                region.append((r, c))
                for rr, cc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
                    if 0 <= rr < size and 0 <= cc < size:
                        if grid[rr, cc] != 0:
                            borders.add(int(grid[rr, cc]))
                        elif not seen[rr, cc]:
                            seen[rr, cc] = True
                            queue.append((rr, cc))
            value = borders.pop() if len(borders) == 1 else 0
            for r, c in region:
                owner[r, c] = value
    return owner.reshape(-1)


def _stand_in_search(game):
    """Random legal moves (pass included, so that games end in all ways), uniform targets."""
    legal_of, step = jax.vmap(game.legal_action_mask), jax.vmap(game.step)

    def search(params, states, key):
        legal = legal_of(states)
        actions = sample_legal(key, legal)
        probs = legal / jnp.sum(legal, axis=-1, keepdims=True)
        return SearchOutput(actions=actions, visit_probs=probs, root_value=jnp.zeros(actions.shape, jnp.float32),
                            next_states=step(states, actions), q_values=jnp.zeros_like(probs), policy_target=probs)

    return search


def _aux_buffer(capacity=2048):
    example = replay.Examples(jnp.zeros((SIZE, SIZE, 17), jnp.uint8), jnp.zeros(A), jnp.float32(0),
                              ownership=jnp.zeros((N,), jnp.int8), score=jnp.float32(0))
    return replay.replay_init(capacity, example)


# ---------------------------------------------------------------------------------- targets

def test_ownership_is_the_tromp_taylor_area_of_random_finished_games():
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game.game
    states = jax.jit(lambda k: jax.vmap(lambda kk: _play_random(game, kk))(jax.random.split(k, 12)))(
        jax.random.PRNGKey(3))
    owners = np.asarray(jax.jit(jax.vmap(game.ownership))(states))
    areas = np.asarray(jax.jit(jax.vmap(game.area))(states))
    chex.assert_type(owners, jnp.int8)
    assert bool(np.all(np.asarray(states.terminal)))
    mixed = 0
    for board, owner, area in zip(np.asarray(states.board), owners, areas):
        np.testing.assert_array_equal(owner, _flood_ownership(board, SIZE))
        np.testing.assert_array_equal(area, [np.sum(owner == BLACK), np.sum(owner == WHITE)])
        mixed += bool(np.any(owner == BLACK) and np.any(owner == WHITE))
    assert mixed >= 3  # the games are not all trivial (one colour owning everything)


def _play_random(game, key):
    def body(carry):
        state, key = carry
        key, k = jax.random.split(key)
        return game.step(state, sample_legal(k, game.legal_action_mask(state)[None])[0]), key

    state, _ = jax.lax.while_loop(lambda c: ~game.is_terminal(c[0]), body, (game.init(), key))
    return state


def test_selfplay_records_final_ownership_and_score_from_each_players_view():
    game = dataclasses.replace(SMOKE, max_moves=MAX_MOVES).game
    games = 4
    move = jax.jit(functools.partial(selfplay.selfplay_move, game, _stand_in_search(game)))
    step = jax.jit(game.step)
    buffer, sp = _aux_buffer(), selfplay.selfplay_init(game, games)
    chex.assert_type([buffer.ownership, buffer.score], [jnp.int8, jnp.float32])
    finished = 0
    for t in range(2 * MAX_MOVES):
        length, row = np.asarray(sp.length), int(buffer.size)
        sp, buffer, _ = move(None, sp, buffer, jax.random.PRNGKey(t))
        new_length = np.asarray(sp.length)
        for b in range(games):
            if new_length[b] == length[b] + 1:
                continue
            n = int(length[b]) + 1
            state = game.init()
            for a in np.asarray(sp.actions[b, :n]):
                state = step(state, int(a))
            assert bool(game.is_terminal(state))
            owner = _flood_ownership(np.asarray(state.board), SIZE)
            margin = float(np.sum(owner) - game.komi)  # black area - white area - komi
            for i in range(n):
                player = BLACK if i % 2 == 0 else WHITE
                np.testing.assert_array_equal(np.asarray(buffer.ownership[row]), owner * player)
                assert float(buffer.score[row]) == pytest.approx(margin * player)
                assert float(buffer.value[row]) == pytest.approx(np.sign(margin) * player)
                row += 1
            finished += 1
        assert int(buffer.size) == row
    assert finished >= games


def test_augmentation_maps_ownership_by_the_planes_symmetry():
    rng = np.random.default_rng(0)
    batch = 16
    board = rng.integers(-1, 2, (batch, N)).astype(np.int8)
    # Plane 0 is the board itself, so a consistent map keeps ownership == plane 0 (flattened),
    # and the policy target is one-hot on the first black point.
    planes = np.zeros((batch, SIZE, SIZE, 17), np.uint8)
    planes[..., 0] = (board == BLACK).reshape(batch, SIZE, SIZE)
    planes[..., 1] = (board == WHITE).reshape(batch, SIZE, SIZE)
    policy = np.zeros((batch, A), np.float32)
    policy[np.arange(batch), np.argmax(board == BLACK, axis=1)] = 1.0
    examples = replay.Examples(jnp.asarray(planes), jnp.asarray(policy), jnp.zeros(batch), ownership=jnp.asarray(board),
                               score=jnp.arange(batch, dtype=jnp.float32))
    out = jax.jit(learner.augment_batch)(jax.random.PRNGKey(5), examples)
    chex.assert_type(out.ownership, jnp.int8)
    mapped_planes = np.asarray(out.planes)
    from_planes = (mapped_planes[..., 0].astype(np.int8) - mapped_planes[..., 1]).reshape(batch, N)
    np.testing.assert_array_equal(np.asarray(out.ownership), from_planes)
    assert not np.array_equal(np.asarray(out.ownership), board)  # some symmetry moved something
    # The policy's one-hot point moved with the board: it still sits on the same owner.
    before = board[np.arange(batch), np.argmax(policy, axis=1)]
    after = np.asarray(out.ownership)[np.arange(batch), np.argmax(np.asarray(out.policy), axis=1)]
    np.testing.assert_array_equal(after, before)
    np.testing.assert_array_equal(np.asarray(out.score), np.arange(batch))  # scalars stay


# ---------------------------------------------------------------------------------- network

@pytest.mark.parametrize("switches", [{}, {"ownership": True}, {"score": True},
                                      {"ownership": True, "score": True, "global_pool": True}])
def test_head_shapes(switches):
    net = nets.DualResNet(blocks=1, filters=8, value_hidden=8, **switches)
    variables = nets.init_variables(net, jax.random.PRNGKey(0), SIZE)
    x = jax.random.uniform(jax.random.PRNGKey(1), (3, SIZE, SIZE, 17))
    out = jax.jit(net.apply)(variables, x)
    logits, value = nets.policy_value(out)
    chex.assert_shape([logits, value], [(3, A), (3,)])
    chex.assert_trees_all_close(jax.jit(nets.policy_value_apply(net))(variables, x), (logits, value))
    if not net.has_aux:
        assert isinstance(out, tuple) and len(out) == 2
        return
    assert isinstance(out, nets.DualOutput)
    if switches.get("ownership"):
        chex.assert_shape(out.ownership, (3, N))
        chex.assert_type(out.ownership, jnp.float32)
        assert bool(jnp.all(jnp.abs(out.ownership) <= 1))
    else:
        assert out.ownership is None
    if switches.get("score"):
        chex.assert_shape(out.score, (3,))
        chex.assert_type(out.score, jnp.float32)
    else:
        assert out.score is None
    if switches.get("global_pool"):
        assert "pool_fc" in variables["params"]["block0"] and net.pools(0)
        # The pooled bias sees the whole board: a stone far away changes every point's output.
        far = x.at[:, 0, 0, :].set(0.0)
        assert not np.allclose(np.asarray(net.apply(variables, far).ownership)[:, -1],
                               np.asarray(out.ownership)[:, -1])


def test_global_pool_blocks():
    assert [nets.DualResNet(blocks=6, global_pool=True).pools(i) for i in range(6)] == [0, 0, 1, 0, 0, 1]
    assert sum(nets.DualResNet(blocks=19, global_pool=True).pools(i) for i in range(19)) == 7
    assert not any(nets.DualResNet(blocks=6).pools(i) for i in range(6))


# ------------------------------------------------------------------------------------- loss

def test_loss_adds_the_heads_terms():
    net = nets.DualResNet(blocks=1, filters=8, value_hidden=8, ownership=True, score=True)
    variables = nets.init_variables(net, jax.random.PRNGKey(0), SIZE)
    opt = optimizer.OptimizerConfig(kind="adamw", learning_rate=1e-3)
    state = optimizer.init_train_state(variables, opt)
    rng = np.random.default_rng(1)
    batch = replay.Examples(planes=jnp.asarray(rng.integers(0, 2, (4, SIZE, SIZE, 17)), jnp.uint8),
                            policy=jnp.full((4, A), 1.0 / A), value=jnp.asarray([1.0, -1.0, 0.0, 1.0]),
                            ownership=jnp.asarray(rng.integers(-1, 2, (4, N)), jnp.int8),
                            score=jnp.asarray([3.5, -2.5, 0.5, 9.5]))
    step = functools.partial(learner.train_step, net=net, config=opt)
    _, metrics = step(state, batch, ownership_weight=1.5, score_weight=0.5)
    out = net.apply(variables, batch.planes.astype(jnp.float32), train=True, mutable=["batch_stats"])[0]
    own = float(jnp.mean(jnp.square(batch.ownership - out.ownership)))
    err = jnp.abs(out.score - batch.score)
    sc = float(jnp.mean(jnp.where(err <= 1, 0.5 * err ** 2, err - 0.5)))
    assert float(metrics["ownership_loss"]) == pytest.approx(own, rel=1e-5)
    assert float(metrics["score_loss"]) == pytest.approx(sc, rel=1e-5)
    base = float(metrics["policy_loss"] + metrics["value_loss"] + metrics["l2"])
    assert float(metrics["loss"]) == pytest.approx(base + 1.5 * own + 0.5 * sc, rel=1e-5)
    # Without targets (records for a warm start) a head is left out at weight 0, refused above.
    plain = dataclasses.replace(batch, ownership=None, score=None)
    assert "ownership_loss" not in step(state, plain)[1]
    with pytest.raises(ValueError, match="ownership_weight"):
        step(state, plain, ownership_weight=1.0)


# ---------------------------------------------------------------------------- score utility

def test_score_utility_adds_the_score_heads_margin_to_the_value():
    net = nets.DualResNet(blocks=1, filters=8, value_hidden=8, ownership=True, score=True)
    variables = nets.init_variables(net, jax.random.PRNGKey(3), SIZE)
    planes = jnp.asarray(np.random.default_rng(3).integers(0, 2, (4, SIZE, SIZE, 17)), jnp.float32)
    out = net.apply(variables, planes)
    for factor in (0.0, 0.3):
        logits, utility = score_utility_apply(net.apply, factor)(variables, planes)
        expected = (1 - factor) * out.value + factor * (2 / math.pi) * np.arctan(np.asarray(out.score) / SIZE)
        np.testing.assert_allclose(np.asarray(utility), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(logits), np.asarray(out.logits))
        assert np.all(np.abs(np.asarray(utility)) < 1)
    with pytest.raises(ValueError, match="factor must be in"):
        score_utility_apply(net.apply, 1.0)
    owner_only = nets.DualResNet(blocks=1, filters=8, value_hidden=8, ownership=True)
    with pytest.raises(ValueError, match="score head"):
        score_utility_apply(owner_only.apply, 0.2)(nets.init_variables(owner_only, jax.random.PRNGKey(3), SIZE), planes)


def test_a_search_player_with_a_score_utility_plays_and_says_so(tmp_path):
    net = nets.DualResNet(in_planes=17, blocks=1, filters=8, value_hidden=8, ownership=True, score=True)
    variables = nets.init_variables(net, jax.random.PRNGKey(4), SIZE)
    path = save_network(tmp_path / "heads.msgpack", variables, **network_config(net), board_size=SIZE, komi=0.5)
    plain, scored = (registry.make_player(f"checkpoint:{path},sims=8,nodes=40{extra}") for extra in ("", ",score=0.5"))
    assert scored.name.endswith("-score0.5") and not plain.name.endswith("-score0.5")
    decisions = []
    for player in (plain, scored):
        player.new_game(SIZE, 0.5)
        decisions.append(player.genmove(BLACK))
        assert player.pos.legal_mask(WHITE)[player.genmove(WHITE).action]
    # The root's value is the utility's: the score term moves it.
    assert decisions[0].winrate != decisions[1].winrate
    with pytest.raises(ValueError, match="has no score head"):
        registry.make_player("net:net=untrained,sims=8,score=0.2")


# ------------------------------------------------------------------------------------ files

def test_network_file_records_the_switches(tmp_path):
    net = nets.DualResNet(in_planes=17, blocks=1, filters=8, value_hidden=8, ownership=True, score=True,
                          global_pool=True)
    variables = nets.init_variables(net, jax.random.PRNGKey(2), SIZE)
    path = save_network(tmp_path / "aux.msgpack", variables, **network_config(net), board_size=SIZE, komi=0.5)
    saved = load_network(path)
    assert saved.net == net
    chex.assert_trees_all_close(saved.variables, jax.tree_util.tree_map(np.asarray, variables))
    # A file that hides its heads' switches is refused rather than loaded without them.
    hidden = save_network(tmp_path / "hidden.msgpack", variables, blocks=1, filters=8, value_hidden=8,
                          board_size=SIZE, komi=0.5, global_pool=True)
    with pytest.raises(ValueError, match="does not have"):
        load_network(hidden)


def test_old_network_file_without_switches_loads(tmp_path):
    net = nets.DualResNet(in_planes=17, blocks=1, filters=8, value_hidden=8)
    variables = nets.init_variables(net, jax.random.PRNGKey(2), SIZE)
    path = save_network(tmp_path / "new.msgpack", variables, **network_config(net), board_size=SIZE, komi=0.5)
    record = serialization.msgpack_restore(path.read_bytes())
    for k in SWITCHES:
        del record["config"][k]  # as written before the switches existed
    old = tmp_path / "old.msgpack"
    old.write_bytes(serialization.msgpack_serialize(record))
    saved = load_network(old)
    assert saved.net == net and not saved.net.has_aux


# ------------------------------------------------------------------------------------- train

def test_train_with_heads_logs_their_losses_and_exports_them(tmp_path):
    config = dataclasses.replace(SMOKE, iterations=1, eval_games=0, ownership_weight=1.5, score_weight=0.02,
                                 global_pool=True)
    assert zero.ZeroConfig.from_dict(config.to_dict()) == config
    result = zero.train(config, tmp_path / "run", progress=False, log=lambda text: None)
    with open(result.metrics) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == [1]
    for column in ("loss", "grad_norm", "ownership_loss", "score_loss"):  # global pooling's max: no NaN gradient
        assert math.isfinite(float(rows[0][column]))
    assert 0 <= float(rows[0]["ownership_loss"]) <= 4

    path = zero.export_network(result.out_dir, tmp_path / "aux.msgpack")
    saved = load_network(path)
    assert saved.net == config.net and saved.net.ownership and saved.net.score and saved.net.global_pool

    # init_network drops the heads a run lacks and starts those it adds afresh.
    no_heads = dataclasses.replace(config, ownership_weight=0.0, score_weight=0.0)
    dropped = zero.init_network(path, no_heads)
    assert dropped.net == no_heads.net and "ownership_conv" not in dropped.variables["params"]
    plain = save_network(tmp_path / "plain.msgpack", dropped.variables, **network_config(dropped.net),
                         board_size=SIZE, komi=config.komi)
    added = zero.init_network(plain, config)
    assert added.net == config.net
    chex.assert_trees_all_equal_structs(
        added.variables, jax.eval_shape(lambda: nets.init_variables(config.net, jax.random.PRNGKey(0), SIZE)))
    chex.assert_trees_all_equal(added.variables["params"]["block0"], saved.variables["params"]["block0"])
    with pytest.raises(ValueError, match="does not fit"):
        zero.init_network(path, dataclasses.replace(config, global_pool=False))
