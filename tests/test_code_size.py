"""Modules and functions a reader can take in: no module of ``alphago_jax`` over 600 lines and no
function over 80 (from ``def`` to its last line), unless a ``# length: <reason>`` line says why,
among the first lines of the module or of the function. Parsed with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import pathlib
import re

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "alphago_jax"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
REASON = re.compile(r"^\s*# length: \S")


def has_reason(lines: list[str], first: int, count: int = 6) -> bool:
    """Whether one of ``count`` lines from index ``first`` gives a reason for the length."""
    return any(REASON.match(line) for line in lines[first:first + count])


def oversized() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = path.read_text().splitlines()
        name = path.relative_to(PACKAGE.parent)
        if len(lines) > MAX_MODULE_LINES and not has_reason(lines, 0):
            found.append(f"{name}: {len(lines)} lines")
        for node in ast.walk(ast.parse("\n".join(lines), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES and not has_reason(lines, node.lineno - 1):
                    found.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    return found


def test_modules_and_functions_stay_short_or_say_why():
    assert oversized() == [], (
        f"over {MAX_MODULE_LINES} lines a module or {MAX_FUNCTION_LINES} a function: split it, or put a "
        "'# length: <reason>' line at its top")


def test_the_check_sees_a_long_function_and_its_reason(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    lines = f"def f():\n{body}\n".splitlines()
    node = ast.parse("\n".join(lines)).body[0]
    assert node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES and not has_reason(lines, 0)
    assert has_reason(["def f():", "    # length: one table of cases, clearer whole"] + lines[1:], 0)
