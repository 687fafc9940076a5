"""The YAML front matter Backlog.md writes at the top of a task file, read and written for the
part of YAML it uses: scalars (plain or quoted), lists (block or ``[a, b]``), no nesting."""

from __future__ import annotations

import json
import re
from typing import Any

from board.plans.plan import PlanError

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


def split_document(text: str, where: str) -> tuple[dict[str, Any], str]:
    """The front matter's fields and the body after it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise PlanError(f"{where}: no front matter: a task file starts with a '---' line")
    try:
        end = next(index for index in range(1, len(lines)) if lines[index].strip() == "---")
    except StopIteration:
        raise PlanError(f"{where}: its front matter is never closed by a '---' line") from None
    fields: dict[str, Any] = {}
    key: str | None = None
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.startswith((" ", "\t", "-")) and key is not None and line.strip().startswith("-"):
            if not isinstance(fields[key], list):
                fields[key] = []
            fields[key].append(scalar(line.strip()[1:].strip(), f"{where}:{number}"))
            continue
        found = _KEY.match(line)
        if found is None:
            raise PlanError(f"{where}:{number}: not a front matter field ('name: value'): {line.strip()[:60]}")
        key, value = found.group(1), found.group(2).strip()
        fields[key] = [] if value == "" else scalar(value, f"{where}:{number}")
        if value == "":
            fields[key] = []  # a block list follows, or nothing (an empty value)
    return fields, "\n".join(lines[end + 1:])


def scalar(value: str, where: str) -> Any:
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [scalar(part.strip(), where) for part in _split_flow(inner)] if inner else []
    if value.startswith("'") and value.endswith("'") and len(value) >= 2:
        return value[1:-1].replace("''", "'")
    if value.startswith('"') and value.endswith('"') and len(value) >= 2:
        try:
            return json.loads(value)
        except ValueError:
            raise PlanError(f"{where}: a quoted value that does not end where it should: {value[:60]}") from None
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if value in ("null", "~"):
        return None
    if value in ("true", "false"):
        return value == "true"
    return value


def _split_flow(inner: str) -> list[str]:
    parts, current, quote = [], "", ""
    for char in inner:
        if quote:
            current += char
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
            current += char
        elif char == ",":
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part for part in parts if part.strip()]


def dump_value(value: Any) -> str:
    """A value as Backlog.md writes it: plain when YAML reads it back as the same string,
    else single-quoted; a list in block form."""
    if isinstance(value, list):
        if not value:
            return "[]"
        return "\n" + "\n".join(f"  - {dump_value(item)}" for item in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    text = str(value)
    if text and re.fullmatch(r"[A-Za-z0-9_./@+-][A-Za-z0-9_ ./@+()-]*", text) and not text.endswith(" ") and not re.fullmatch(r"-?\d+(\.\d+)?|true|false|null|~|yes|no|on|off", text, re.IGNORECASE):
        return text
    return "'" + text.replace("'", "''") + "'"


def dump_document(fields: dict[str, Any], body: str) -> str:
    lines = ["---"] + [f"{key}: {dump_value(value)}" if not (isinstance(value, list) and value) else f"{key}:{dump_value(value)}" for key, value in fields.items()]
    return "\n".join(lines) + "\n---\n\n" + body.strip("\n") + "\n"
