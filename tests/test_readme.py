"""The README's code example runs as written."""

from __future__ import annotations

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_example_runs():
    code = re.search(r"```python\n(.*?)```", README.read_text(), re.S).group(1)
    scope: dict = {}
    exec(compile(code, str(README), "exec"), scope)
    assert scope["out"].actions.shape == (8,)
    assert scope["out"].visit_probs.shape == (8, scope["game"].num_actions)


def test_the_layer_map_names_only_public_names():
    """Every name in the README's table of packages is in that package's ``__all__``."""
    import importlib

    table = README.read_text().split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(alphago_jax(?:\.\w+)?)` \| (.*) \|$", table, re.M)
    assert len(rows) >= 9
    for package, text in rows:
        module = importlib.import_module(package)
        public = getattr(module, "__all__", None)
        for token in re.findall(r"`([^`]+)`", text):
            if not re.fullmatch(r"[A-Za-z_][\w.]*(\(.*\))?", token):
                continue  # not a Python name: a GTP command, an option
            name = re.match(r"\w+", token).group(0)
            assert (name in public) if public is not None else hasattr(module, name), (package, token)
