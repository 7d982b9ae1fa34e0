"""mkdocs hook: the CLI and config references are generated from the code, so they cannot drift.

``<!-- cli-reference -->`` becomes the ``--help`` of ``tenk`` and of every subcommand (nested
ones included), ``<!-- config-reference -->`` the tables of every training config key.
"""

from __future__ import annotations

import argparse
import os

CLI_MARKER = "<!-- cli-reference -->"
CONFIG_MARKER = "<!-- config-reference -->"


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    if parser._subparsers is None:
        return {}
    for action in parser._subparsers._group_actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _help_sections(parser: argparse.ArgumentParser, name: str, depth: int) -> list[str]:
    out = [f"{'#' * depth} `{name}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for sub_name, sub in _subcommands(parser).items():
        out += _help_sections(sub, f"{name} {sub_name}", min(depth + 1, 4))
    return out


def cli_reference() -> str:
    from tenk_env.cli.main import build_parser

    # argparse wraps to the terminal's width: fix it so the page is the same on every machine
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        parser = build_parser()
        out = ["## `tenk`", "", "```text", parser.format_help().rstrip(), "```", ""]
        for name, sub in _subcommands(parser).items():
            out += _help_sections(sub, f"tenk {name}", 3)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return "\n".join(out)


def _cell(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(rows) -> str:
    lines = ["| key | default | meaning |", "| --- | --- | --- |"]
    lines += [f"| `{_cell(k)}` | `{_cell(d)}` | {_cell(h)} |" for k, d, h in rows]
    return "\n".join(lines)


def config_reference() -> str:
    from tenk_env.training.afterstate import AfterstateConfig
    from tenk_env.training.config import describe_fields

    return "\n".join(
        [
            "### PPO (`algo: ppo`, the default)",
            "",
            _table(describe_fields()),
            "",
            "### Afterstate (`algo: afterstate`)",
            "",
            _table(describe_fields(AfterstateConfig)),
            "",
        ]
    )


def on_page_markdown(markdown: str, page, config, files) -> str:
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    if CONFIG_MARKER in markdown:
        markdown = markdown.replace(CONFIG_MARKER, config_reference())
    return markdown
