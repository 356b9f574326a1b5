"""The Colab notebooks run top to bottom at tiny size, and are stored without outputs.

Every ``colab/*.ipynb`` is executed by nbclient in a fresh kernel with ``ALPHAGO_JAX_SMOKE=1``
(each notebook's size switch), in a temporary directory (what a notebook writes stays there),
with this test session's persistent JAX compilation cache. A cell error fails the test, naming
the cell; each cell has ``CELL_TIMEOUT_S`` and all notebooks together ``TOTAL_BUDGET_S``.
"""

from __future__ import annotations

import pathlib
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
    assert "git+https://github.com/alphago-jax/alphago_jax" in first and "ALPHAGO_JAX_SMOKE" in first, (
        f"{path.name}: the first code cell must install the package (Colab) and read ALPHAGO_JAX_SMOKE")


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
