"""Dashboard themes: ``themes/*.toml`` files, validated, turned into Textual themes.

A theme file that does not parse or validate is reported (one line per file) and skipped; the
dashboard always has its built-in fallbacks. The chosen theme is remembered per user in
``$XDG_CONFIG_HOME/board/ui.toml``; a board can pin one with ``[ui] theme = "..."`` in
``.tasks/board.toml``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from board import document_schema as schema
from board.document_schema import ValidationError
from textual.color import Color, ColorParseError
from textual.theme import Theme

import board
from board.disk.atomic import read_regular, write_atomic
from board.document import Document, field as document_field, optional

DEFAULT_THEME = "board-dark"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,40}")


def _named(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError("use lower-case letters, digits and '-' (at most 41)")
    return value


def _colour(value: str | None) -> str | None:
    if value is not None:
        try:
            Color.parse(value)
        except ColorParseError:
            raise ValueError(f"{value!r} is not a colour") from None
    return value


_COLOUR = schema.no_info_after_validator_function(_colour, schema.str_schema())


def _maybe_colour() -> str | None:
    return document_field(optional(_COLOUR), default=None)  # type: ignore[no-any-return]


def _share(default: float) -> float:
    return document_field(schema.float_schema(ge=0, le=1), default=default)  # type: ignore[no-any-return]


class ThemeFile(Document, extra="forbid", camel_case=False, numbers_as_str=False):
    """The keys of a theme file; colours are anything Textual can parse (#rrggbb, rgb(), names)."""

    name: str = document_field(schema.no_info_after_validator_function(_named, schema.str_schema()))
    dark: bool = document_field(schema.bool_schema(), default=True)
    primary: str = document_field(_COLOUR)
    secondary: str | None = _maybe_colour()
    accent: str | None = _maybe_colour()
    warning: str | None = _maybe_colour()
    error: str | None = _maybe_colour()
    success: str | None = _maybe_colour()
    foreground: str | None = _maybe_colour()
    background: str | None = _maybe_colour()
    surface: str | None = _maybe_colour()
    panel: str | None = _maybe_colour()
    boost: str | None = _maybe_colour()
    luminosity_spread: float = _share(0.15)
    text_alpha: float = _share(0.95)
    variables: dict[str, str] = document_field(schema.dict_schema(schema.str_schema(), schema.str_schema()), default_factory=dict)

    def to_theme(self) -> Theme:
        # The fields as they are, all plain values: pydantic's serializer (``model_dump``)
        # loads its package's typing helpers the first time it runs, before the dashboard's
        # first frame (which came 8-13 ms sooner without it, alternating with the code before).
        data = {name: getattr(self, name) for name in type(self).model_fields}
        data["variables"] = dict(self.variables)
        return Theme(**data)


@dataclass
class LoadedThemes:
    themes: list[Theme] = field(default_factory=list)
    #: One line per broken file, for a single notification.
    problems: list[str] = field(default_factory=list)


def theme_dirs() -> list[Path]:
    """Shipped themes (in the wheel, or the source tree), then the user's own."""
    package = Path(board.__file__).resolve().parent
    dirs = [package / "themes", package.parent / "themes", user_config_dir() / "themes"]
    return [d for d in dict.fromkeys(dirs) if d.is_dir()]


def load_theme_file(path: Path) -> Theme:
    """Parse one file; raises ValueError with one line saying what is wrong."""
    import tomllib  # only for a theme file (most dashboards have none)

    try:
        data = tomllib.loads(read_regular(path, follow=True).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"not valid TOML ({error})") from None
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ValueError(f"{where}: {first['msg'].removeprefix('Value error, ')}") from None


def load_themes(dirs: list[Path] | None = None) -> LoadedThemes:
    loaded = LoadedThemes()
    names: set[str] = set()
    for directory in theme_dirs() if dirs is None else dirs:
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ValueError as error:
                loaded.problems.append(f"theme {path.name} skipped: {error}")
                continue
            if theme.name in names:
                loaded.themes = [t for t in loaded.themes if t.name != theme.name]
            names.add(theme.name)
            loaded.themes.append(theme)
    return loaded


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "board"


def user_config_path() -> Path:
    return user_config_dir() / "ui.toml"


def remembered_theme() -> str | None:
    try:
        text = read_regular(user_config_path(), follow=True).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    import tomllib  # only once a theme was remembered

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    theme = data.get("theme")
    return theme if isinstance(theme, str) else None


def remember_theme(name: str) -> None:
    """Write the user's choice; an unwritable config directory is not worth an error."""
    if not _NAME.fullmatch(name) and not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        return
    path = user_config_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, f'# Written by the board dashboard.\ntheme = "{name}"\n'.encode("utf-8"))
    except OSError:
        pass
