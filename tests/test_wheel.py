"""The wheel: ``python -m build`` makes one that holds the shipped network, and from a fresh virtual
environment with only that wheel installed ``alphago-jax gtp`` plays a 9x9 move with it.

The build runs on a copy of the checkout's files (those git tracks or would track), without build
isolation: the build system's requirements come from the dev extra, so nothing is downloaded.
The virtual environment sees this environment's packages (JAX and the rest: a ``.pth`` file lists
the running interpreter's site directories, which works whether the tests run in a virtual
environment or in the system's Python, where ``--system-site-packages`` would show the base
interpreter's packages instead) and gets the wheel with ``--no-deps --no-index``; the test checks
that the package it imports is the wheel's, not the checkout's (a path in a ``.pth`` file brings
no other ``.pth`` file with it, so this environment's editable install stays out).
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import site
import subprocess
import sys
import zipfile

import pytest
from children import child_env

ROOT = pathlib.Path(__file__).resolve().parents[1]
NETWORK = "alphago_jax/data/zero_9x9.msgpack"


def _source_files() -> list[str]:
    """The checkout's files as a fresh clone would have them (plus files not yet committed)."""
    if (ROOT / ".git").exists() and shutil.which("git"):
        r = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True)
        return [f for f in r.stdout.decode().split("\0") if f and (ROOT / f).is_file()]
    skip = {".git", "build", "dist", "runs", "__pycache__", ".pytest_cache", ".hypothesis", "node_modules"}
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*")
            if p.is_file() and not skip & set(p.relative_to(ROOT).parts) and ".egg-info" not in str(p)]


def _env_without_checkout() -> dict:
    """``children.child_env`` (CPU, the tests' compilation cache) without the checkout on the path."""
    env = child_env()
    keep = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and pathlib.Path(p).resolve() != ROOT]
    env["PYTHONPATH"] = os.pathsep.join(keep)
    if not keep:
        del env["PYTHONPATH"]
    return env


def test_the_wheel_holds_the_network_and_plays_from_a_fresh_environment(tmp_path):
    pytest.importorskip("build", reason="the wheel test needs the `build` package: pip install -e '.[dev]'")
    if not (ROOT / NETWORK).is_file():
        pytest.fail(f"{NETWORK} is missing from the checkout: the wheel must ship it")
    src = tmp_path / "src"
    for name in _source_files():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, src / name)
    dist = tmp_path / "dist"
    r = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    wheels = list(dist.glob("alphago_jax-*.whl"))
    assert len(wheels) == 1, wheels

    with zipfile.ZipFile(wheels[0]) as z:
        names = set(z.namelist())
        assert NETWORK in names, sorted(n for n in names if "/data/" in n)
        assert z.getinfo(NETWORK).file_size == (ROOT / NETWORK).stat().st_size
        assert {"alphago_jax/cli.py", "alphago_jax/play/gtp.py"} <= names
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(meta).decode()
        entry_points = z.read(meta.replace("METADATA", "entry_points.txt")).decode()
    assert "alphago-jax = alphago_jax.cli:main" in entry_points
    assert "Project-URL" not in metadata  # no link to a repository that does not exist
    assert not any(n.startswith(("tests/", "experiments/", "colab/")) for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, command = venv / "bin" / "python", venv / "bin" / "alphago-jax"
    env = _env_without_checkout()
    r = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, env=env, check=True, timeout=300)
    (pathlib.Path(r.stdout.strip()) / "test_env_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    # --ignore-installed: whatever alphago_jax those directories hold is not the wheel.
    r = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--ignore-installed",
                        str(wheels[0])],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    r = subprocess.run([str(python), "-c", "import alphago_jax.play.registry as r; print(r.shipped_network_path())"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    shipped = pathlib.Path(r.stdout.strip()).resolve()
    assert shipped.is_file() and venv.resolve() in shipped.parents, shipped  # the wheel's package, not the checkout

    session = "name\nboardsize 9\nclear_board\ngenmove b\nquit\n"
    r = subprocess.run([str(command), "gtp", "--player", "net:net=shipped,sims=8", "--size", "9"], input=session,
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    replies = r.stdout.split("\n\n")
    assert replies[:3] == ["= alphago-jax", "=", "="], r.stdout
    assert re.fullmatch(r"= ([A-HJ]\d|pass)", replies[3]), (r.stdout, r.stderr[-3000:])
    assert replies[4:] == ["=", ""], r.stdout
