"""The Colab notebooks run top to bottom at tiny size, and are stored without outputs.

Every ``colab/*.ipynb`` is executed by nbclient in a fresh kernel with ``ALPHAGO_JAX_SMOKE=1``
(each notebook's size switch), in a temporary directory (what a notebook writes stays there),
with this test session's persistent JAX compilation cache. A cell error fails the test, naming
the cell; each cell has ``CELL_TIMEOUT_S`` and all notebooks together ``TOTAL_BUDGET_S``.

The set-up cell (the same in every notebook) installs alphago_jax from ``ALPHAGO_JAX_SOURCE``; run
where nothing names a source and the package cannot be imported, it stops with one sentence
saying what to set.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest
from children import child_env

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "colab").glob("*.ipynb"))
CELL_TIMEOUT_S = 240
TOTAL_BUDGET_S = 900
_spent = [0.0]  # seconds used by the notebooks run so far in this session


def _code_cells(path: pathlib.Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks in colab/"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert not dirty, (f"{path.name}: cells {dirty} hold outputs or execution counts; clear them before "
                       f"committing (e.g. jupyter nbconvert --clear-output --inplace {path.name})")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_opens_with_the_install_cell_and_size_switch(path):
    first = _code_cells(path)[0].source
    assert "ALPHAGO_JAX_SOURCE" in first and "ALPHAGO_JAX_SMOKE" in first, (
        f"{path.name}: the first code cell must install the package from ALPHAGO_JAX_SOURCE and read ALPHAGO_JAX_SMOKE")
    assert first == _code_cells(NOTEBOOKS[0])[0].source, f"{path.name}: the set-up cell differs from {NOTEBOOKS[0].name}'s"
    text = path.read_text()
    assert "github.com/alphago-jax" not in text and "colab-badge" not in text, (
        f"{path.name}: links to a repository that does not exist")


def _run_setup_cell(path: pathlib.Path, cwd: pathlib.Path, source: str | None) -> subprocess.CompletedProcess:
    """The notebook's set-up cell in a plain Python that cannot import alphago_jax (no site packages,
    no PYTHONPATH, run outside the checkout), as in a fresh Colab session."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALPHAGO_JAX_SOURCE")}
    if source is not None:
        env["ALPHAGO_JAX_SOURCE"] = source
    return subprocess.run([sys.executable, "-S", "-c", _code_cells(path)[0].source], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


SET_SOURCE = ("Set ALPHAGO_JAX_SOURCE (in this cell or the environment) to a git URL of your copy of alphago_jax, "
              "a wheel file uploaded to this session, or a checkout's path, then run this cell again.")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_setup_cell_without_a_source_says_what_to_set(path, tmp_path):
    r = _run_setup_cell(path, tmp_path, None)
    assert r.returncode == 1 and r.stderr.strip() == SET_SOURCE, r.stderr
    r = _run_setup_cell(path, tmp_path, "")
    assert r.returncode == 1 and r.stderr.strip() == SET_SOURCE, r.stderr


def test_setup_cell_names_a_bad_source(tmp_path):
    path = NOTEBOOKS[0]
    r = _run_setup_cell(path, tmp_path, str(tmp_path / "alphago_jax-0.1.0-py3-none-any.whl"))
    assert r.returncode == 1 and r.stderr.strip() == (
        f"ALPHAGO_JAX_SOURCE names the wheel {tmp_path / 'alphago_jax-0.1.0-py3-none-any.whl'}, which is not here: "
        "upload it to this session first."), r.stderr
    r = _run_setup_cell(path, tmp_path, "my copy")
    assert r.returncode == 1 and r.stderr.strip() == (
        "ALPHAGO_JAX_SOURCE is 'my copy': neither a directory, a wheel file nor a git URL."), r.stderr


def test_setup_cell_inside_a_checkout_uses_it(tmp_path):
    """Run from the checkout's colab/ folder with alphago_jax importable, the cell installs nothing
    and puts the checkout first on the path."""
    code = _code_cells(NOTEBOOKS[0])[0].source + "\nimport alphago_jax; print(alphago_jax.__file__)\n"
    env = {**child_env(), "ALPHAGO_JAX_SOURCE": ""}
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "colab", env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert pathlib.Path(r.stdout.strip()).resolve() == ROOT / "alphago_jax" / "__init__.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_tiny_size(path, tmp_path):
    left = TOTAL_BUDGET_S - _spent[0]
    if left < 30:
        pytest.fail(f"the notebooks have used their {TOTAL_BUDGET_S} s budget before {path.name}")
    env = {**child_env(), "ALPHAGO_JAX_SMOKE": "1"}
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=int(min(CELL_TIMEOUT_S, left)), kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    t0 = time.perf_counter()
    try:
        client.execute(env=env, cwd=str(tmp_path))
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{path.name}: a cell failed:\n{e}")
    except nbclient.exceptions.CellTimeoutError as e:
        pytest.fail(f"{path.name}: a cell ran past {client.timeout} s:\n{e}")
    finally:
        _spent[0] += time.perf_counter() - t0
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
