"""Shared test set-up: JAX's persistent compilation cache, a bound on the memory maps that compiled
programs hold, and paths to optional peers."""

from __future__ import annotations

import gc
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


def _memory_maps() -> int | None:
    """The memory maps this process holds (Linux), else None."""
    try:
        with open("/proc/self/maps", "rb") as maps:
            return sum(1 for _ in maps)
    except OSError:
        return None


def _max_memory_maps() -> int:
    try:
        return int(pathlib.Path("/proc/sys/vm/max_map_count").read_text())
    except (OSError, ValueError):
        return 65530  # Linux's default


@pytest.fixture(scope="module", autouse=True)
def _release_compiled_programs():
    """After a test file, JAX's compiled programs are dropped if the process holds more than 30% of
    the memory maps Linux allows it. Each XLA:CPU executable holds a few maps, and a test worker
    runs file after file: one reached vm.max_map_count (65,530) after some 25 minutes and
    segfaulted in its next compile or cache read; one file added 14,000. The next file recompiles
    what it needs (from the persistent cache)."""
    yield
    maps = _memory_maps()
    if maps is not None and maps > 0.3 * _max_memory_maps():
        jax.clear_caches()
        gc.collect()


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
