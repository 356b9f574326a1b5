"""The Flax networks: the papers' parameter counts, shapes and dtypes, batch norm, jit.

Default-size (19x19) networks are only traced with ``jax.eval_shape``: their counts cost no
memory or compute. Everything that runs uses tiny configurations on 5x5 and 9x9.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alphago_jax import nets
from alphago_jax.nets import DualResNet, PolicyNet, ValueNet

# The policy network of Silver et al. 2016, its parameters counted layer by layer.
SEED_FIRST_CONV = 230_592  # 5*5*48*192 + 192
SEED_MIDDLE_PRINTED = 3_633_792  # as printed for the 11 middle layers...
SEED_MIDDLE_FORMULA = (3 * 3 * 192 * 192 + 192) * 11  # ...but its own formula gives 3,651,648
SEED_OUTPUT_CONV = 193  # 1*1*192*1 + 1 (one shared bias)
# The value network of Silver et al. 2016: the convolutions as in the policy network, then:
SEED_VALUE_FC1 = 92_672  # 361*256 + 256
SEED_VALUE_FC2 = 257  # 256*1 + 1

# Parameters beyond the seeds' tables, each stated in the networks' docstrings.
EXTRA_POSITION_BIAS = 361 - 1  # per-point output biases (paper) replace the one shared bias
EXTRA_PASS_LOGIT = 1  # the pass action's learned logit
EXTRA_VALUE_49TH_PLANE = 5 * 5 * 1 * 192  # the seed counts the value net's first layer at 48 planes


def abstract_params(net, size=19):
    return jax.eval_shape(lambda k: nets.init_variables(net, k, size), jax.random.PRNGKey(0))


def count(tree) -> int:
    return nets.param_count(tree)


def test_seed_middle_layer_erratum():
    # Recorded so that nobody "fixes" the network to match a typo: no count of 3x3 192->192
    # layers gives the 3,633,792 printed in a secondary account of the paper; its formula gives 3,651,648.
    assert SEED_MIDDLE_FORMULA == 3_651_648
    assert SEED_MIDDLE_PRINTED % (3 * 3 * 192 * 192 + 192) != 0
    assert SEED_MIDDLE_FORMULA - SEED_MIDDLE_PRINTED == 17_856


def test_policy_net_parameter_count_matches_seed_001():
    params = abstract_params(PolicyNet())["params"]
    trunk = params["trunk"]
    assert sorted(trunk) == sorted(f"conv{i}" for i in range(12))
    chex.assert_shape(trunk["conv0"]["kernel"], (5, 5, 48, 192))
    assert count(trunk["conv0"]) == SEED_FIRST_CONV
    for i in range(1, 12):
        chex.assert_shape(trunk[f"conv{i}"]["kernel"], (3, 3, 192, 192))
    assert sum(count(trunk[f"conv{i}"]) for i in range(1, 12)) == SEED_MIDDLE_FORMULA
    # Output layer: 192 weights, no shared bias, 361 position biases; then the pass logit.
    chex.assert_shape(params["head"]["kernel"], (1, 1, 192, 1))
    assert "bias" not in params["head"]
    chex.assert_shape(params["position_bias"], (361,))
    chex.assert_shape(params["pass_logit"], ())
    assert count(params["head"]) + count(params["position_bias"]) == SEED_OUTPUT_CONV + EXTRA_POSITION_BIAS
    total = SEED_FIRST_CONV + SEED_MIDDLE_FORMULA + SEED_OUTPUT_CONV + EXTRA_POSITION_BIAS + EXTRA_PASS_LOGIT
    assert count(params) == total == 3_882_794

    # With one shared output bias (the seed's table), only the pass logit is extra.
    params = abstract_params(PolicyNet(position_bias=False))["params"]
    assert count(params["head"]) == SEED_OUTPUT_CONV
    assert count(params) == SEED_FIRST_CONV + SEED_MIDDLE_FORMULA + SEED_OUTPUT_CONV + EXTRA_PASS_LOGIT


def test_value_net_parameter_count_matches_seed_004():
    params = abstract_params(ValueNet())["params"]
    trunk = params["trunk"]
    chex.assert_shape(trunk["conv0"]["kernel"], (5, 5, 49, 192))
    assert count(trunk["conv0"]) == SEED_FIRST_CONV + EXTRA_VALUE_49TH_PLANE
    assert sum(count(trunk[f"conv{i}"]) for i in range(1, 12)) == SEED_MIDDLE_FORMULA
    assert count(params["head"]) == SEED_OUTPUT_CONV
    chex.assert_shape(params["fc"]["kernel"], (361, 256))
    assert count(params["fc"]) == SEED_VALUE_FC1
    assert count(params["out"]) == SEED_VALUE_FC2
    assert "position_bias" not in params and "pass_logit" not in params
    total = (SEED_FIRST_CONV + EXTRA_VALUE_49TH_PLANE + SEED_MIDDLE_FORMULA + SEED_OUTPUT_CONV
             + SEED_VALUE_FC1 + SEED_VALUE_FC2)
    assert count(params) == total == 3_980_162


def test_dual_resnet_parameter_count():
    variables = abstract_params(DualResNet())
    params, stats = variables["params"], variables["batch_stats"]
    f, planes, n = 256, 17, 361
    stem = 3 * 3 * planes * f + 2 * f
    block = 2 * (3 * 3 * f * f) + 2 * (2 * f)
    policy = f * 2 + 2 * 2 + (2 * n) * (n + 1) + (n + 1)
    value = f * 1 + 2 * 1 + n * 256 + 256 + 256 + 1
    assert sum(k.startswith("block") for k in params) == 19
    assert count(params) == stem + 19 * block + policy + value == 22_827_877
    assert count(stats) == 2 * f + 19 * 2 * (2 * f) + 2 * 2 + 2 * 1 == 19_974
    for conv in ("stem_conv", "policy_conv", "value_conv"):
        assert "bias" not in params[conv], "convolutions before batch norm have no bias"
    assert count(abstract_params(DualResNet(blocks=2, filters=16), size=5)) > 0


# --- tiny networks that run ------------------------------------------------------------------

TINY = {
    "policy": PolicyNet(filters=8, trunk_layers=3),
    "value": ValueNet(filters=8, trunk_layers=3, hidden=16),
    "dual": DualResNet(blocks=2, filters=16, value_hidden=16),
}


@pytest.fixture(scope="module")
def tiny():
    """(net, variables for 5x5, variables for 9x9, jitted apply) per tiny network."""
    out = {}
    for i, (name, net) in enumerate(TINY.items()):
        key = jax.random.key(i, impl="rbg")  # compiles 3x faster than threefry on CPU
        init = jax.jit(nets.init_variables, static_argnums=(0, 2))
        out[name] = (net, init(net, key, 5), init(net, key, 9), jax.jit(net.apply))
    return out


def planes_for(net, size, batch, seed=0):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.integers(0, 2, size=(batch, size, size, net.in_planes)).astype(np.float32))


@pytest.mark.parametrize("size", [5, 9])
def test_shapes_dtypes_and_ranges(tiny, size):
    b, a = 4, size * size + 1
    net, v5, v9, apply = tiny["policy"]
    logits = apply(v5 if size == 5 else v9, planes_for(net, size, b))
    chex.assert_shape(logits, (b, a))
    chex.assert_type(logits, jnp.float32)
    chex.assert_tree_all_finite(logits)

    net, v5, v9, apply = tiny["value"]
    value = apply(v5 if size == 5 else v9, planes_for(net, size, b))
    chex.assert_shape(value, (b,))
    chex.assert_type(value, jnp.float32)
    assert bool(jnp.all(jnp.abs(value) <= 1.0))

    net, v5, v9, apply = tiny["dual"]
    logits, value = apply(v5 if size == 5 else v9, planes_for(net, size, b))
    chex.assert_shape([logits, value], [(b, a), (b,)])
    chex.assert_type([logits, value], jnp.float32)
    chex.assert_tree_all_finite(logits)
    assert bool(jnp.all(jnp.abs(value) <= 1.0))


def test_variables_shapes_and_dtypes(tiny):
    for name, (net, v5, v9, _) in tiny.items():
        chex.assert_type(jax.tree_util.tree_leaves(v5), jnp.float32)
        assert set(v5) == ({"params", "batch_stats"} if name == "dual" else {"params"}), name
    # Size-dependent parameters follow the board: position biases, fully connected layers.
    chex.assert_shape(tiny["policy"][1]["params"]["position_bias"], (25,))
    chex.assert_shape(tiny["policy"][2]["params"]["position_bias"], (81,))
    chex.assert_shape(tiny["value"][2]["params"]["fc"]["kernel"], (81, 16))
    chex.assert_shape(tiny["dual"][2]["params"]["policy_fc"]["kernel"], (162, 82))


def test_policy_output_biases(tiny):
    net, v5, _, apply = tiny["policy"]
    x = planes_for(net, 5, 2)
    base = apply(v5, x)
    params = dict(v5["params"])
    params["position_bias"] = jnp.arange(25, dtype=jnp.float32)
    params["pass_logit"] = jnp.float32(3.0)
    shifted = apply({"params": params}, x)
    np.testing.assert_allclose(shifted[:, :25] - base[:, :25], np.broadcast_to(np.arange(25.0), (2, 25)), atol=1e-5)
    np.testing.assert_array_equal(np.asarray(shifted[:, 25]), 3.0)


def test_masked_softmax():
    logits = jnp.array([[1.0, 2.0, 3.0, 0.5], [0.0, 0.0, 0.0, 0.0]])
    mask = jnp.array([[True, False, True, True], [False, False, False, False]])
    p = jax.jit(nets.masked_softmax)(logits, mask)
    chex.assert_shape(p, (2, 4))
    chex.assert_type(p, jnp.float32)
    chex.assert_tree_all_finite(p)
    assert float(p[0, 1]) == 0.0
    np.testing.assert_allclose(float(p[0].sum()), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(p[1]), 0.0)
    np.testing.assert_allclose(nets.masked_softmax(logits[:1]), jax.nn.softmax(logits[:1]), rtol=1e-6)


def test_batch_norm_train_and_eval(tiny):
    net, variables, _, apply = tiny["dual"]
    x = planes_for(net, 5, 8, seed=1)
    # Train mode uses batch statistics and returns updated running statistics.
    (logits_t, value_t), updates = net.apply(variables, x, train=True, mutable=["batch_stats"])
    chex.assert_shape([logits_t, value_t], [(8, 26), (8,)])
    old, new = variables["batch_stats"], updates["batch_stats"]
    chex.assert_trees_all_equal_shapes(old, new)
    # Running mean starts at 0 and moves by (1 - momentum) toward the batch mean.
    stem = jax.lax.stop_gradient(
        jax.lax.conv_general_dilated(
            x, variables["params"]["stem_conv"]["kernel"], (1, 1), "SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )
    )
    np.testing.assert_allclose(new["stem_bn"]["mean"], 0.1 * stem.mean(axis=(0, 1, 2)), rtol=1e-4, atol=1e-6)
    # Eval mode uses the running statistics: different outputs, and no mutable state needed.
    logits_e, value_e = apply(variables, x)
    assert not np.allclose(logits_e, logits_t)
    # In eval mode each example is independent of the rest of the batch; in train mode it is not.
    logits_e1, _ = apply(variables, x[:4])
    np.testing.assert_allclose(logits_e1, logits_e[:4], rtol=1e-5, atol=1e-5)
    (logits_t1, _), _ = net.apply(variables, x[:4], train=True, mutable=["batch_stats"])
    assert not np.allclose(logits_t1, logits_t[:4])
    # Train mode without a mutable batch_stats collection is an error, not a silent no-op.
    with pytest.raises(Exception, match="batch_stats"):
        net.apply(variables, x, train=True)


def test_jit_matches_eager_and_gradients_are_finite(tiny):
    net, v5, _, apply = tiny["policy"]
    x = planes_for(net, 5, 4, seed=2)
    chex.assert_trees_all_close(apply(v5, x), net.apply(v5, x), rtol=1e-5, atol=1e-5)

    targets = jnp.array([0, 7, 24, 25])  # the last one is pass

    @jax.jit
    def loss(params):
        logits = net.apply({"params": params}, x)
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), targets[:, None], axis=1))

    grads = jax.grad(loss)(v5["params"])
    chex.assert_trees_all_equal_shapes(grads, v5["params"])
    chex.assert_tree_all_finite(grads)
    assert float(jnp.abs(grads["pass_logit"])) > 0


def test_bfloat16_compute(tiny):
    # bfloat16 computation with float32 parameters and float32 outputs, close to float32.
    for name in ("policy", "dual"):
        net, v5, _, apply = tiny[name]
        half = net.clone(dtype=jnp.bfloat16)
        x = planes_for(net, 5, 2, seed=3)
        out = jax.jit(half.apply)(v5, x)
        chex.assert_type(out, jnp.float32)
        chex.assert_trees_all_close(out, apply(v5, x), atol=0.1, rtol=0.1)


def test_wrong_input_is_rejected():
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="expected 49 input planes, got 48"):
        ValueNet().init(key, jnp.zeros((1, 5, 5, 48)))
    with pytest.raises(ValueError, match="batch, size, size, planes"):
        TINY["policy"].init(key, jnp.zeros((1, 5, 4, 48)))
