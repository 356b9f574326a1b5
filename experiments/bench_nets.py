"""Forward throughput of the networks: positions per second at several batch sizes.

Each network (AlphaGo's policy and value networks, AlphaGo Zero's 20-block dual ResNet in
inference mode) is initialised at the papers' sizes, its jitted forward pass compiled ahead of
time for every batch size, then timed on random 0/1 input planes. The first timed call is a
warm-up and is dropped when there is time for more; the table gives the median of the rest.

    python experiments/bench_nets.py                    # default nets, 19x19, batch 1 / 64 / 256
    python experiments/bench_nets.py --smoke            # tiny nets on 9x9, for CI
    python experiments/bench_nets.py --dtype bfloat16 --batches 256 1024   # on an accelerator

The output is a markdown table headed by the machine and the command, ready for
``docs/benchmarks.md``.
"""

from __future__ import annotations

import argparse
import pathlib
import shlex
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from alphago_jax import nets

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # sibling modules, however run
from benchlib import machine  # noqa: E402

DEFAULT_NETS = {
    "policy": lambda dtype: nets.PolicyNet(dtype=dtype),
    "value": lambda dtype: nets.ValueNet(dtype=dtype),
    "dual": lambda dtype: nets.DualResNet(dtype=dtype),
}
SMOKE_NETS = {
    "policy": lambda dtype: nets.PolicyNet(filters=8, trunk_layers=3, dtype=dtype),
    "value": lambda dtype: nets.ValueNet(filters=8, trunk_layers=3, hidden=16, dtype=dtype),
    "dual": lambda dtype: nets.DualResNet(blocks=2, filters=16, value_hidden=16, dtype=dtype),
}
DESCRIPTIONS = {
    "policy": "PolicyNet (13 layers x 192, 48 planes)",
    "value": "ValueNet (12 convs x 192 + FC 256, 49 planes)",
    "dual": "DualResNet (stem + {blocks} blocks x {filters}, 17 planes)",
}


def time_forward(fn, variables, x, repeats: int, max_seconds: float):
    """Wall times of ``fn(variables, x)``: up to ``repeats`` + 1 calls, within ``max_seconds``.

    Returns the times after the warm-up call, or the warm-up call's alone (flagged True) when
    it used up the time.
    """
    times = []
    while True:
        t0 = time.perf_counter()
        jax.block_until_ready(fn(variables, x))
        times.append(time.perf_counter() - t0)
        if len(times) > repeats or sum(times) >= max_seconds:
            break
    return (times[1:], False) if len(times) > 1 else (times, True)


def bench(name: str, net, size: int, batches, repeats: int, max_seconds: float):
    key = jax.random.PRNGKey(0)
    variables = jax.jit(nets.init_variables, static_argnums=(0, 2))(net, key, size)
    n_params = nets.param_count(variables["params"])
    apply = jax.jit(net.apply)  # DualResNet: train=False, running statistics
    rng = np.random.default_rng(0)
    rows = []
    for b in batches:
        x = jnp.asarray(rng.integers(0, 2, size=(b, size, size, net.in_planes)).astype(np.float32))
        t0 = time.perf_counter()
        compiled = apply.lower(variables, x).compile()
        compile_s = time.perf_counter() - t0
        times, warm_up_only = time_forward(compiled, variables, x, repeats, max_seconds)
        t = statistics.median(times)
        timed = "1 (warm-up)" if warm_up_only else str(len(times))
        rows.append((name, n_params, b, b / t, 1e3 * t, timed, compile_s))
        print(f"  {name:6s} batch {b:4d}: {b / t:10.1f} pos/s ({1e3 * t:.1f} ms, {len(times)} timed)",
              file=sys.stderr, flush=True)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="tiny networks on 9x9, batch 1 and 8 (CI)")
    ap.add_argument("--size", type=int, default=None, help="board side (default 19; 9 with --smoke)")
    ap.add_argument("--batches", type=int, nargs="+", default=None, help="batch sizes (default 1 64 256)")
    ap.add_argument("--nets", nargs="+", choices=sorted(DEFAULT_NETS), default=list(DEFAULT_NETS))
    ap.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                    help="computation dtype (parameters stay float32)")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls after the warm-up, at most")
    ap.add_argument("--max-seconds", type=float, default=20.0,
                    help="stop timing a cell after this many seconds (at least one call is timed)")
    args = ap.parse_args(argv)
    size = args.size or (9 if args.smoke else 19)
    batches = args.batches or ([1, 8] if args.smoke else [1, 64, 256])
    dtype = jnp.bfloat16 if args.dtype == "bfloat16" else jnp.float32
    makers = SMOKE_NETS if args.smoke else DEFAULT_NETS

    t_start = time.perf_counter()
    rows = []
    for name in args.nets:
        net = makers[name](dtype)
        rows += bench(name, net, size, batches, args.repeats, args.max_seconds)

    command = "python experiments/bench_nets.py" + "".join(" " + shlex.quote(a) for a in (argv or sys.argv[1:]))
    print(f"Machine: {machine()}  ")
    print(f"Command: `{command}` ({size}x{size}, {args.dtype} compute, float32 parameters; "
          f"total {time.perf_counter() - t_start:.0f} s)")
    print()
    print("| network | parameters | batch | positions/s | ms per batch | timed calls | compile s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, n_params, b, pps, ms, n, comp in rows:
        net = makers[name](dtype)
        desc = DESCRIPTIONS[name].format(blocks=getattr(net, "blocks", 0), filters=getattr(net, "filters", 0))
        if args.smoke:
            desc = f"{type(net).__name__} (smoke size)"
        print(f"| {desc} | {n_params:,} | {b} | {pps:,.1f} | {ms:,.2f} | {n} | {comp:.1f} |")


if __name__ == "__main__":
    main()
