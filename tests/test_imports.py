"""The package's import graph: no import circles, and data flows one way through the layers.

Every module of ``alphago_jax`` is parsed with ``ast`` (nothing is imported, so this test needs no
JAX); every ``import`` and ``from ... import`` counts, relative ones and those inside functions
or ``TYPE_CHECKING`` blocks too. An import names the deepest module it reaches:
``from alphago_jax.train import optimizer`` is an import of ``alphago_jax.train.optimizer``,
``from alphago_jax.train import Checkpointer`` one of the package ``alphago_jax.train``. The
parent packages that Python runs on the way are not counted.

The layers, lowest first. A module may import modules of a lower layer, and of its own room of
its own layer; never a higher layer, nor a room beside its own (the AlphaGo and AlphaGo Zero
pipelines are independent of each other). A module belongs to the longest prefix listed.
"""

from __future__ import annotations

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "alphago_jax"

LAYERS: tuple[dict[str, tuple[str, ...]], ...] = (
    # Nothing of the package's own: atomic writes, the compilation cache's settings, the pipe to
    # external GTP engines (used by both training and play), the config classes' checks.
    {"base": ("alphago_jax.files", "alphago_jax.compile_cache", "alphago_jax.gtp_client", "alphago_jax.checks",
              "alphago_jax.katago")},
    # The rules, and what needs nothing but the rules: SGF records, random playouts, pictures
    # of boards and trees (arrays in, matplotlib out).
    {"games": ("alphago_jax.games", "alphago_jax.sgf", "alphago_jax.playout", "alphago_jax.viz")},
    {"features": ("alphago_jax.features",)},
    {"nets": ("alphago_jax.nets",)},
    # ``alphago_jax`` itself re-exports games, features, nets, search and sgf.
    {"search": ("alphago_jax.search", "alphago_jax")},
    # The training machinery both pipelines share.
    {"train": ("alphago_jax.train",)},
    # The two training pipelines, side by side: AlphaGo 2016 and AlphaGo Zero.
    {"alphago": ("alphago_jax.alphago",), "zero": ("alphago_jax.zero",)},
    {"play": ("alphago_jax.play",)},
    {"cli": ("alphago_jax.cli",)},
)


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    """Every module of the package by dotted name (a package by its ``__init__.py``)."""
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(name: str, path: pathlib.Path, known) -> list[tuple[str, int]]:
    """``(imported module, line)`` for every import of a package module in ``path``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            targets = [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            if target != "alphago_jax" and not target.startswith("alphago_jax."):
                continue
            while target not in known:  # a name inside a module: the module
                target = target.rpartition(".")[0]
            if target != name:
                found.append((target, node.lineno))
    return sorted(set(found), key=lambda t: (t[1], t[0]))


def graph() -> dict[str, list[tuple[str, int]]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def where(name: str, line: int) -> str:
    return f"{modules()[name].relative_to(PACKAGE.parent)}:{line}"


def place(name: str) -> tuple[int, str]:
    """``(layer index, room)`` of a module: its longest listed prefix."""
    best = None
    for index, rooms in enumerate(LAYERS):
        for room, prefixes in rooms.items():
            for prefix in prefixes:
                if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > best[0]):
                    best = (len(prefix), index, room)
    assert best is not None, f"{name} is in no layer: add it to LAYERS in {__file__}"
    return best[1], best[2]


def test_every_module_is_parsed_and_placed():
    found = modules()
    assert {"alphago_jax", "alphago_jax.games.go", "alphago_jax.alphago.supervised", "alphago_jax.play.registry",
            "alphago_jax.cli"} <= set(found)
    for name in found:
        place(name)
    prefixes = [prefix for rooms in LAYERS for group in rooms.values() for prefix in group]
    assert len(prefixes) == len(set(prefixes)), "a prefix listed twice in LAYERS"
    edges = graph()
    # ``from package import module`` and an import inside a function (cli's subcommands) are seen.
    assert "alphago_jax.alphago.positions" in {t for t, _ in edges["alphago_jax.alphago.supervised"]}
    assert "alphago_jax.alphago.pipeline_commands" in {t for t, _ in edges["alphago_jax.cli"]}
    assert place("alphago_jax.zero.loop") == place("alphago_jax.zero.selfplay") != place("alphago_jax.train.optimizer")
    assert "alphago_jax.zero.config" in {t for t, _ in edges["alphago_jax.zero.loop"]}


def test_relative_and_nested_imports_are_resolved(tmp_path):
    source = tmp_path / "alphago_jax" / "play" / "example.py"
    source.parent.mkdir(parents=True)
    source.write_text("from . import players\nfrom ..search import tree\n"
                      "def f():\n    from ..train.optimizer import TrainState\n    import alphago_jax.games.go\n")
    known = {"alphago_jax", "alphago_jax.play", "alphago_jax.play.players", "alphago_jax.search",
             "alphago_jax.search.tree", "alphago_jax.train", "alphago_jax.train.optimizer", "alphago_jax.games",
             "alphago_jax.games.go", "alphago_jax.play.example"}
    assert imports("alphago_jax.play.example", source, known) == [
        ("alphago_jax.play.players", 1), ("alphago_jax.search.tree", 2), ("alphago_jax.train.optimizer", 4),
        ("alphago_jax.games.go", 5)]


def test_no_import_reaches_up_or_across():
    edges = graph()
    names = [", ".join(rooms) for rooms in LAYERS]
    bad = []
    for name, targets in edges.items():
        layer, room = place(name)
        for target, line in targets:
            to_layer, to_room = place(target)
            if to_layer > layer:
                bad.append(f"{where(name, line)}: {name} imports {target}, from layer {names[layer]} up to "
                           f"layer {names[to_layer]}")
            elif to_layer == layer and to_room != room:
                bad.append(f"{where(name, line)}: {name} imports {target}, across from {room} to {to_room}")
    assert not bad, "imports against the layers (" + " < ".join(names) + "):\n" + "\n".join(bad)


def _cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_cycles_are_found():
    edges = {"a": [("b", 1)], "b": [("c", 2)], "c": [("a", 3), ("d", 4)], "d": []}
    assert _cycles(edges) == [["a", "b", "c"]]


def test_no_import_circles():
    edges = graph()
    report = []
    for component in _cycles(edges):
        inside = set(component)
        report.append("circle among " + ", ".join(component) + ":\n" + "\n".join(
            f"  {where(name, line)}: {name} imports {target}"
            for name in component for target, line in edges[name] if target in inside))
    assert not report, "\n".join(report)
