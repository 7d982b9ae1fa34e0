"""One dialect for every config: dataclasses whose fields carry their help text.

A config is a dataclass whose fields are declared with :func:`config_field` (a default and a
help line: the dataclass is the documentation). :func:`build_section` reads a YAML mapping
into it, naming the closest known key for an unknown one and the wanted type for a wrong
value; :func:`describe_fields` lists every key with its default and help (``tenk train
--help-config``, the docs' config reference). Training, tournament and sweep configs raise
the one :class:`ConfigError`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field, fields
from typing import Any, Union

import yaml

from tenk_env.rules import did_you_mean

__all__ = [
    "ConfigError",
    "config_field",
    "public_fields",
    "coerce",
    "check_keys",
    "unknown_key",
    "build_section",
    "describe_fields",
]


class ConfigError(ValueError):
    """A config (training, tournament or sweep) that cannot be used; the message names the
    file or key and the fix. Every config reader raises it (sweeps a subclass, SweepError)."""


def config_field(text: str, default: Any = dataclasses.MISSING, factory: Any = dataclasses.MISSING):
    """A dataclass field with its help ``text`` (no default and no factory: a required key)."""
    if factory is not dataclasses.MISSING:
        return field(default_factory=factory, metadata={"help": text})
    return field(default=default, metadata={"help": text})


def public_fields(cls) -> list[dataclasses.Field]:
    return [f for f in fields(cls) if not f.metadata.get("internal")]


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " or ".join("null" if a is type(None) else _type_name(a) for a in typing.get_args(tp))
    if origin is list:
        return f"a list of {_type_name(typing.get_args(tp)[0])}"
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(tp, str(tp))


def coerce(value: Any, tp: Any, key: str) -> Any:
    """``value`` as type ``tp``, or ConfigError naming ``key``."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return coerce(value, a, key)
            except ConfigError:
                pass
        raise ConfigError(f"{key}: {value!r} is not {_type_name(tp)}")
    if origin is list:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: {value!r} is not {_type_name(tp)}; write it as [a, b, ...]")
        (inner,) = typing.get_args(tp)
        return [coerce(v, inner, f"{key}[{i}]") for i, v in enumerate(value)]
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key}: {value!r} is not true or false")
    if tp is int:
        if isinstance(value, bool):
            raise ConfigError(f"{key}: {value!r} is not an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)  # 1e6 in YAML arrives as a float
        if isinstance(value, str):
            try:
                f = float(value.replace("_", ""))
            except ValueError:
                f = math.nan
            if f.is_integer():
                return int(f)
        raise ConfigError(f"{key}: {value!r} is not an integer")
    if tp is float:
        if isinstance(value, bool):
            raise ConfigError(f"{key}: {value!r} is not a number")
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str):
            # PyYAML reads 3e-4 (no dot) as a string: accept what a reader would call a number
            try:
                return float(value)
            except ValueError:
                pass
        raise ConfigError(f"{key}: {value!r} is not a number")
    if tp is str:
        if isinstance(value, str):
            return value
        raise ConfigError(f"{key}: {value!r} is not a string; quote it")
    raise TypeError(f"unhandled config type {tp!r}")


def unknown_key(key: str, known: Sequence[str], prefix: str) -> str:
    """The training configs' message for an unknown ``key`` of section ``prefix``."""
    where = f"{prefix}." if prefix else ""
    return (
        f"unknown config key {where}{key}{did_you_mean(str(key), known)}; "
        f"{'section ' + prefix if prefix else 'the top level'} has: {', '.join(known)}"
    )


def check_keys(
    data: Mapping[str, Any],
    known: Sequence[str],
    prefix: str = "",
    message: Callable[[str, Sequence[str], str], str] = unknown_key,
    error: type[ConfigError] = ConfigError,
) -> None:
    """``error`` for the first key of ``data`` not in ``known``, worded by ``message``."""
    for k in data:
        if k not in known:
            raise error(message(k, list(known), prefix))


def _section_type(tp: Any) -> tuple[Any, bool]:
    """(the dataclass, whether null is allowed) for a nested section ``tp`` (a dataclass, or
    a dataclass or None: a section that is off unless given), (None, False) for a plain key."""
    if dataclasses.is_dataclass(tp):
        return tp, False
    args = typing.get_args(tp) if typing.get_origin(tp) in (Union, types.UnionType) else ()
    rest = [a for a in args if a is not type(None)]
    if len(args) == 2 and len(rest) == 1 and dataclasses.is_dataclass(rest[0]):
        return rest[0], True
    return None, False


def build_section(
    cls,
    data: Any,
    prefix: str = "",
    *,
    check_types: bool = True,
    message: Callable[[str, Sequence[str], str], str] = unknown_key,
    error: type[ConfigError] = ConfigError,
):
    """``cls`` built from the mapping ``data`` (None: every default), nested dataclasses from
    nested mappings. Unknown keys raise ``error`` (worded by ``message``), and so does a
    value of the wrong type unless ``check_types`` is false (for a config whose own
    validation names the fix better)."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise error(f"{prefix or 'config'}: expected a mapping of keys, got {type(data).__name__} {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name: f for f in public_fields(cls)}
    check_keys(data, list(known), prefix, message, error)
    kwargs = {}
    for name, f in known.items():
        key = f"{prefix}.{name}" if prefix else name
        section, nullable = _section_type(hints[name])
        if section is not None and not (nullable and data.get(name) is None):
            kwargs[name] = build_section(
                section, data.get(name), key, check_types=check_types, message=message, error=error
            )
        elif name in data:
            kwargs[name] = coerce(data[name], hints[name], key) if check_types else data[name]
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise error(f"{key!r} is missing: give {f.metadata.get('help', 'it')}")
    return cls(**kwargs)


def describe_fields(cls, prefix: str = "") -> list[tuple[str, str, str]]:
    """(key, default, help) rows for every key of config class ``cls``, nested sections as
    dotted keys: for documentation and `tenk train --help-config`."""
    rows = []
    hints = typing.get_type_hints(cls)
    for f in public_fields(cls):
        key = f"{prefix}{f.name}"
        section, nullable = _section_type(hints[f.name])
        if section is not None and not nullable:
            rows += describe_fields(section, key + ".")
            continue
        if f.default is not dataclasses.MISSING:
            default = _yaml_value(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _yaml_value(f.default_factory())
        else:
            default = "(required)"
        rows.append((key, default, f.metadata.get("help", "")))
        if section is not None:  # a section that is off by default: its row, then its keys
            rows += describe_fields(section, key + ".")
    return rows


def _yaml_value(v: Any) -> str:
    return yaml.safe_dump(v, default_flow_style=True).strip().removesuffix("\n...").strip()
