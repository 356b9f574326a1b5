"""AlphaGo Zero's training step: the loss by hand, learning on a fixed batch, configuration
checks, augmentation, and data parallelism equal to the single-device step.

Everything runs a tiny ``DualResNet`` (1 block, 8 filters) on 5x5 boards; the two data-parallel
runs are child processes, because the number of CPU devices is fixed when JAX starts.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import nets
from alphago_jax.features import symmetry
from alphago_jax.train import mesh, optimizer
from alphago_jax.train.optimizer import OptimizerConfig
from alphago_jax.train.replay import Examples
from alphago_jax.zero import learner

SIZE = 5
PLANES = 17
ACTIONS = SIZE * SIZE + 1
NET = nets.DualResNet(in_planes=PLANES, blocks=1, filters=8, value_hidden=8)


def make_batch(seed: int, batch: int = 8) -> Examples:
    """Random binary planes, a random sparse visit distribution and +-1 outcomes."""
    rng = np.random.default_rng(seed)
    planes = (rng.random((batch, SIZE, SIZE, PLANES)) < 0.3).astype(np.float32)
    visits = rng.random((batch, ACTIONS)) * (rng.random((batch, ACTIONS)) < 0.3)
    visits[:, -1] += 0.05  # every row has some mass
    policy = (visits / visits.sum(axis=1, keepdims=True)).astype(np.float32)
    value = rng.choice([-1.0, 1.0], size=batch).astype(np.float32)
    return Examples(planes=planes, policy=policy, value=value)


# Jitted once: Flax's init run op by op costs seconds of dispatch and small compilations.
init_variables = jax.jit(lambda key: nets.init_variables(NET, key, size=SIZE))


def fresh_state(config: OptimizerConfig, seed: int = 0) -> optimizer.TrainState:
    return optimizer.init_train_state(init_variables(jax.random.PRNGKey(seed)), config)


def test_zero_loss_matches_hand_computation():
    # Two examples, three actions. Row 0: uniform logits, target all on action 0: CE = log 3.
    # Row 1: logits (log 1, log 2, log 1) -> p = (1/4, 1/2, 1/4), target (1/2, 1/2, 0):
    # CE = -(1/2 log 1/4 + 1/2 log 1/2) = 1.5 log 2.
    logits = jnp.array([[0.0, 0.0, 0.0], [0.0, math.log(2.0), 0.0]])
    target = jnp.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    value = jnp.array([0.5, -0.25])
    z = jnp.array([1.0, -1.0])
    params = {"dense": {"kernel": jnp.array([1.0, 2.0]), "bias": jnp.array([3.0])}}

    policy_loss = (math.log(3.0) + 1.5 * math.log(2.0)) / 2
    value_loss = (0.5**2 + 0.75**2) / 2
    l2 = 0.1 * (1 + 4 + 9)
    loss, metrics = learner.zero_loss(logits, value, target, z, params=params, l2=0.1)
    chex.assert_shape(loss, ())
    np.testing.assert_allclose(metrics["policy_loss"], policy_loss, rtol=1e-6)
    np.testing.assert_allclose(metrics["value_loss"], value_loss, rtol=1e-6)
    np.testing.assert_allclose(metrics["l2"], l2, rtol=1e-6)
    np.testing.assert_allclose(loss, policy_loss + value_loss + l2, rtol=1e-6)
    # Target entropies: 0 and log 2; the KL is the cross entropy minus their mean.
    np.testing.assert_allclose(metrics["policy_kl"], policy_loss - math.log(2.0) / 2, rtol=1e-6)
    # Row 0's argmax (first of three ties) is 0 = target; row 1 picks 1, target's first max is 0.
    np.testing.assert_allclose(metrics["policy_accuracy"], 0.5)
    np.testing.assert_allclose(metrics["policy_entropy"], (math.log(3.0) + 1.5 * math.log(2.0)) / 2, rtol=1e-6)

    # Kernels only: the bias is not decayed. Value weight scales the value term only.
    mask = optimizer.decay_mask(OptimizerConfig(decay_kernels_only=True), params)
    assert mask == {"dense": {"kernel": True, "bias": False}}
    loss2, metrics2 = learner.zero_loss(logits, value, target, z, params=params, l2=0.1, l2_mask=mask,
                                        value_weight=0.01)
    np.testing.assert_allclose(metrics2["l2"], 0.5, rtol=1e-6)
    np.testing.assert_allclose(loss2, policy_loss + 0.01 * value_loss + 0.5, rtol=1e-6)


def test_train_step_reports_the_loss_of_the_network_by_hand():
    # The metrics of a step are those of the parameters before it, with batch norm in training
    # mode; recompute them from the network's outputs with numpy.
    config = OptimizerConfig(kind="sgd", learning_rate=0.05, weight_decay=1e-3)
    state = fresh_state(config)
    batch = make_batch(1)
    (logits, v), _ = NET.apply(state.variables, batch.planes, train=True, mutable=["batch_stats"])
    logits, v = np.asarray(logits, np.float64), np.asarray(v, np.float64)
    log_p = logits - logits.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    policy_loss = -(batch.policy * log_p).sum(1).mean()
    value_loss = ((batch.value - v) ** 2).mean()
    sq = sum(float(np.sum(np.asarray(x, np.float64) ** 2)) for x in jax.tree_util.tree_leaves(state.params))

    new_state, metrics = learner.train_step(state, batch, NET, config)
    np.testing.assert_allclose(metrics["policy_loss"], policy_loss, rtol=1e-5)
    np.testing.assert_allclose(metrics["value_loss"], value_loss, rtol=1e-5)
    np.testing.assert_allclose(metrics["l2"], 1e-3 * sq, rtol=1e-5)
    np.testing.assert_allclose(metrics["loss"], policy_loss + value_loss + 1e-3 * sq, rtol=1e-5)
    np.testing.assert_allclose(metrics["learning_rate"], 0.05)
    assert int(new_state.step) == 1
    chex.assert_trees_all_equal_shapes_and_dtypes(new_state.params, state.params)
    # Running statistics moved (train=True updated them), parameters moved.
    mean_before = state.batch_stats["stem_bn"]["mean"]
    assert not np.allclose(new_state.batch_stats["stem_bn"]["mean"], mean_before)
    assert not np.allclose(new_state.params["policy_fc"]["kernel"], state.params["policy_fc"]["kernel"])


@pytest.mark.parametrize(
    "config",
    [
        OptimizerConfig(kind="sgd", learning_rate=0.05, momentum=0.9, weight_decay=1e-4),
        OptimizerConfig(kind="adamw", learning_rate=3e-3, schedule="cosine", total_steps=20, warmup_steps=2,
                        final_fraction=0.1, weight_decay=1e-4, max_grad_norm=5.0),
    ],
    ids=["sgd", "adamw"],
)
def test_loss_decreases_on_a_fixed_batch(config):
    state = fresh_state(config)
    batch = make_batch(2, batch=16)
    if config.kind == "sgd":  # also: uint8 planes
        batch = Examples(planes=batch.planes.astype(np.uint8), policy=batch.policy, value=batch.value)
    losses = []
    for _ in range(20):
        state, metrics = learner.train_step(state, batch, NET, config)
        losses.append(float(metrics["loss"]))
    assert all(np.isfinite(losses))
    assert losses[-1] < 0.7 * losses[0], losses
    assert int(state.step) == 20


def test_augmentation_maps_planes_and_policy_together():
    batch = make_batch(3)
    key = jax.random.PRNGKey(7)
    out = learner.augment_batch(key, batch)
    ks = symmetry.random_symmetries(key, 8)  # the symmetries augment draws from this key
    chex.assert_trees_all_equal_shapes_and_dtypes(out, jax.tree_util.tree_map(jnp.asarray, batch))
    assert len(set(np.asarray(ks).tolist())) > 1  # per-example maps, not one for the batch
    for i, k in enumerate(np.asarray(ks)):
        np.testing.assert_array_equal(out.planes[i], symmetry.apply(batch.planes[i], int(k)))
        np.testing.assert_array_equal(out.policy[i], symmetry.apply_policy(batch.policy[i], int(k)))
    np.testing.assert_array_equal(out.policy[:, -1], batch.policy[:, -1])  # pass stays
    np.testing.assert_array_equal(out.value, batch.value)
    # A dataclass batch comes back as the same dataclass, uint8 planes stay uint8.
    examples = Examples(planes=batch.planes.astype(np.uint8), policy=batch.policy, value=batch.value)
    out2 = learner.augment_batch(key, examples)
    assert isinstance(out2, Examples) and out2.planes.dtype == jnp.uint8
    np.testing.assert_array_equal(out2.planes, out.planes.astype(np.uint8))
    np.testing.assert_array_equal(out2.policy, out.policy)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(kind="rmsprop"), "kind"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(learning_rate=float("nan")), "learning_rate"),
        (dict(schedule="linear"), "schedule"),
        (dict(schedule="piecewise"), "boundaries"),
        (dict(schedule="piecewise", boundaries=(10, 5)), "boundaries"),
        (dict(schedule="piecewise", boundaries=(10,), decay_factor=0.0), "decay_factor"),
        (dict(boundaries=(10,)), "boundaries"),
        (dict(schedule="cosine"), "total_steps"),
        (dict(schedule="cosine", total_steps=10, warmup_steps=10), "warmup_steps"),
        (dict(schedule="cosine", total_steps=10, final_fraction=2.0), "final_fraction"),
        (dict(warmup_steps=5), "warmup_steps"),
        (dict(momentum=1.0), "momentum"),
        (dict(weight_decay=-1e-4), "weight_decay"),
        (dict(kind="adamw", b2=1.0), "b2"),
        (dict(max_grad_norm=0.0), "max_grad_norm"),
    ],
)
def test_bad_config_raises_naming_the_field(kwargs, field):
    with pytest.raises(ValueError, match=rf"OptimizerConfig\.{field}\b"):
        OptimizerConfig(**kwargs)


def test_schedules_and_weight_decay_split():
    paper = OptimizerConfig.alphago_zero()
    schedule = optimizer.make_schedule(paper)
    rates = [float(schedule(s)) for s in (0, 399_999, 400_000, 600_000)]
    np.testing.assert_allclose(rates, [1e-2, 1e-2, 1e-3, 1e-4], rtol=1e-6)
    assert paper.l2 == 1e-4 and OptimizerConfig(kind="adamw").l2 == 0.0
    cosine = optimizer.make_schedule(OptimizerConfig(schedule="cosine", total_steps=10, warmup_steps=2))
    np.testing.assert_allclose([float(cosine(s)) for s in (0, 2, 10)], [0.0, 1e-2, 0.0], atol=1e-8)
    assert hash(paper) == hash(OptimizerConfig.alphago_zero())  # usable as a static jit argument


def test_shard_batch_rejects_uneven_batches():
    one = mesh.make_mesh(jax.devices()[:1])
    with pytest.raises(ValueError, match="multiple"):
        mesh.shard_batch(make_batch(0, batch=6), mesh.make_mesh([jax.devices()[0]] * 4))
    sharded = mesh.shard_batch(make_batch(0, batch=6), one)
    chex.assert_shape(sharded.planes, (6, SIZE, SIZE, PLANES))


# The child: a few augmented SGD steps on one global batch of 8, on however many CPU devices
# XLA_FLAGS gave it, printing the losses, final parameters and the shardings it saw as JSON.
CHILD = textwrap.dedent(
    """
    import json, sys
    import jax
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2]:  # the compilation cache conftest.py set up
        jax.config.update("jax_compilation_cache_dir", sys.argv[2])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
    from test_learner import NET, fresh_state, make_batch
    from alphago_jax.train.mesh import make_mesh, replicate, shard_batch
    from alphago_jax.train.optimizer import OptimizerConfig
    from alphago_jax.zero import learner

    config = OptimizerConfig(kind="sgd", learning_rate=0.05, momentum=0.9, weight_decay=1e-3)
    mesh = make_mesh()
    state = replicate(fresh_state(config), mesh)
    batch = shard_batch(make_batch(5, batch=8), mesh)
    losses = []
    for i in range(3):
        state, metrics = learner.train_step(state, batch, NET, config, key=jax.random.PRNGKey(i))
        losses.append(float(metrics["loss"]))
    leaves = jax.tree_util.tree_leaves((state.params, state.batch_stats))
    print(json.dumps({
        "devices": len(jax.devices()),
        "batch_devices": len(batch.planes.sharding.device_set),
        "shard_rows": sorted({s.data.shape[0] for s in batch.planes.addressable_shards}),
        "params_replicated": all(x.sharding.is_fully_replicated for x in leaves),
        "losses": losses,
        "flat": np.concatenate([np.ravel(x) for x in leaves]).tolist(),
    }))
    """
)


def start_child(devices: int) -> subprocess.Popen:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    flags = [f for f in env.get("XLA_FLAGS", "").split() if "xla_force_host_platform_device_count" not in f]
    if devices > 1:
        flags.append(f"--xla_force_host_platform_device_count={devices}")
    env["XLA_FLAGS"] = " ".join(flags)  # read by XLA when the child first imports jax
    tests_dir = os.path.dirname(os.path.abspath(__file__))
    cache = jax.config.jax_compilation_cache_dir or ""
    return subprocess.Popen([sys.executable, "-c", CHILD, tests_dir, cache], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish_child(child: subprocess.Popen) -> dict:
    stdout, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr[-4000:]
    return json.loads(stdout.strip().splitlines()[-1])


def test_data_parallel_step_equals_single_device_step():
    children = start_child(1), start_child(4)  # concurrently: each is mostly compilation
    one, four = (finish_child(c) for c in children)
    assert one["devices"] == 1 and one["batch_devices"] == 1
    assert four["devices"] == 4 and four["batch_devices"] == 4
    assert four["shard_rows"] == [2]  # 8 examples, 2 per device
    assert four["params_replicated"]
    # Same math: mean over the global batch, batch norm over the global batch.
    np.testing.assert_allclose(four["losses"], one["losses"], rtol=1e-5)
    # The tolerance tells the two apart: batch norm over each device's 2 examples (what pmap
    # without a cross-device mean would do) changes the first loss by far more.
    config = OptimizerConfig(kind="sgd", learning_rate=0.05, momentum=0.9, weight_decay=1e-3)
    state = fresh_state(config)
    batch = learner.augment_batch(jax.random.PRNGKey(0), make_batch(5, batch=8))

    @jax.jit
    def global_and_per_shard(batch):
        loss = lambda b: learner.loss_fn(state.params, state.batch_stats, b, NET, config)[0]
        shards = jax.tree_util.tree_map(lambda x: x.reshape((4, 2) + x.shape[1:]), batch)
        return loss(batch), jnp.mean(jax.lax.map(loss, shards))

    global_loss, per_shard_loss = global_and_per_shard(batch)
    np.testing.assert_allclose(global_loss, one["losses"][0], rtol=1e-5)
    assert abs(per_shard_loss - global_loss) > 1e-3 * abs(global_loss)
    np.testing.assert_allclose(four["flat"], one["flat"], rtol=1e-4, atol=1e-6)
    assert one["losses"][-1] != one["losses"][0]
