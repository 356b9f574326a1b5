"""What the benchmark scripts share: the machine line, the command line, a timing loop."""

from __future__ import annotations

import os
import platform
import shlex
import statistics
import sys
import time

import jax


def machine() -> str:
    """One line: the accelerator (or CPU), the host CPU and cores, jax and Python versions."""
    dev = jax.devices()[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"{dev.platform.upper()} ({getattr(dev, 'device_kind', dev.platform)}), {len(jax.devices())} device(s); host {cpu}, "
            f"{os.cpu_count()} CPU cores; jax {jax.__version__}, Python {platform.python_version()}")


def print_header(script: str, argv, detail: str, t_start: float) -> None:
    """The ``Machine:`` and ``Command:`` lines that head a result table."""
    args = argv if argv is not None else sys.argv[1:]
    command = f"python experiments/{script}" + "".join(" " + shlex.quote(a) for a in args)
    print(f"Machine: {machine()}  ")
    print(f"Command: `{command}` ({detail}; total {time.perf_counter() - t_start:.0f} s)")
    print()


def timed(compiled, args, repeats: int, max_seconds: float):
    """Median seconds of the timed calls after a warm-up call, and how many were timed."""
    times = []
    while len(times) <= repeats and sum(times) < max_seconds:
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    rest = times[1:] or times
    return statistics.median(rest), len(rest)
