"""A ruleset is parsed once, where it comes in.

The public entry points (``solve_game``, ``Game``, ``play_match``, the envs, ...) take a
``Ruleset`` or a name, path or mapping and parse it with :func:`tenk_env.rules.load_ruleset`;
everything below them takes the parsed :class:`~tenk_env.rules.Ruleset`. Checked on the
source with ``ast`` (the command line and the web server, which read user input, are
boundaries of their own and left out):

- ``load_ruleset`` is called only in public functions and methods (and constructors), plus the
  few private ones listed below with their reason;
- every parameter named ``rules`` is annotated, and a private function's annotation never
  admits a string: it receives what an entry point parsed.
"""

from __future__ import annotations

import ast

from support import ROOT

PACKAGE = ROOT / "tenk_env"
#: the user-facing layers, each parsing its own input
OUTSIDE = ("cli", "web")
#: private functions that parse a ruleset, and why
PARSES = {
    "evaluation/tournament.py:_validate": "a tournament config's rules field, parsed when the config is checked",
}


def functions():
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in OUTSIDE:
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield rel, node


def private(node) -> bool:
    return node.name.startswith("_") and not (node.name.startswith("__") and node.name.endswith("__"))


def test_rulesets_are_parsed_only_at_entry_points():
    parsers = set()
    for rel, node in functions():
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                name = getattr(call.func, "id", getattr(call.func, "attr", None))
                if name == "load_ruleset" and private(node):
                    parsers.add(f"{rel}:{node.name}")
    assert parsers == set(PARSES)


def test_below_the_entry_points_a_ruleset_is_a_ruleset():
    loose = []
    for rel, node in functions():
        for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            if a.arg != "rules" or rel == "rules.py":
                continue
            ann = ast.unparse(a.annotation) if a.annotation else None
            if ann is None or (private(node) and "str" in ann):
                loose.append(f"{rel}:{node.lineno} {node.name}(rules: {ann})")
    assert not loose
