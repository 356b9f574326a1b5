"""The environment of a test's child Python process: CPU only, the checkout importable, ``devices``
host devices (``--xla_force_host_platform_device_count``), the tests' compilation cache."""

from __future__ import annotations

import os
import pathlib

import jax

ROOT = pathlib.Path(__file__).resolve().parents[1]


def child_env(devices: int = 1) -> dict:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))  # no empty entry: that would be the cwd
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=path)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if "xla_force_host_platform_device_count" not in f]
    if devices > 1:
        flags.append(f"--xla_force_host_platform_device_count={devices}")
    env["XLA_FLAGS"] = " ".join(flags)
    cache = jax.config.jax_compilation_cache_dir
    if cache:  # the compilation cache conftest.py set up
        env["JAX_COMPILATION_CACHE_DIR"] = str(cache)
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = str(jax.config.jax_persistent_cache_min_compile_time_secs)
    return env
