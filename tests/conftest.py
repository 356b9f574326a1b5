"""Shared test set-up: JAX's persistent compilation cache and paths to optional peers."""

from __future__ import annotations

import os
import pathlib

# The tests' programs are small and run briefly, so XLA's backend optimisation costs more than it
# saves: at level 0, test_grave.py and test_search.py compile and run cold in 452 s instead of 639,
# and the whole suite cold in 16 minutes on 2 cores. Set before JAX first compiles (XLA reads the
# flags then); child processes inherit it (children.py).
_FAST_COMPILE = "--xla_backend_optimization_level=0"
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS"), _FAST_COMPILE]))

import jax  # noqa: E402
import pytest  # noqa: E402

_CACHE = pathlib.Path(os.environ.get("ALPHAGO_JAX_TEST_CACHE", pathlib.Path.home() / ".cache" / "alphago_jax_tests"))
jax.config.update("jax_compilation_cache_dir", str(_CACHE))
# Every compilation is cached, the many small eager ones too: reading one back is cheaper than compiling it.
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)

SHARED = pathlib.Path(__file__).resolve().parents[1].parent / "shared"
SGF_DIR = SHARED / "data" / "sgf" / "gnugo-regression"


@pytest.fixture(scope="session")
def gnugo_path():
    from alphago_jax.gtp_client import find_gnugo

    path = find_gnugo()
    if path is None:
        pytest.skip("GNU Go is not installed (apt-get install -y gnugo); .ci/run installs it")
    return path


@pytest.fixture(scope="session")
def sgf_dir():
    if not SGF_DIR.is_dir():
        pytest.skip(f"{SGF_DIR} is absent: the SGF corpus ships in ../shared beside the checkout")
    return SGF_DIR
