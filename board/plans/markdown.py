"""A markdown plan, as a person writes it by hand or a model writes it unasked, made into a
``Plan``: headings are tasks and the list items under a heading its sub-tasks; a plan of list
items alone makes each item a task and nested items its sub-tasks. Lines such as ``after: 2``,
``needs: "Set up the database"``, ``labels: api, db``, ``priority: high`` give dependencies
and fields. The format is the README's "Plans" section; every refusal names the line."""

from __future__ import annotations

import re
from pathlib import Path
from dataclasses import dataclass, field

from board.names import LABEL_REGEX, validate_id
from board.plans.plan import MAX_SUBJECT, Plan, PlanError, PlanTask, priority_of, read_text_file
from board.status import Status

#: Field names, as written (any case, optionally bold), to the field they set.
FIELD_NAMES = {
    "after": "needs", "needs": "needs", "depends on": "needs", "depends": "needs", "blocked by": "needs", "requires": "needs",
    "labels": "labels", "label": "labels", "tags": "labels", "tag": "labels",
    "priority": "priority", "status": "status", "key": "key", "files": "files", "file": "files",
}
_FIELD = re.compile(
    r"^(?:[-*+]\s+)?(?:\*\*|__)?(" + "|".join(sorted(FIELD_NAMES, key=len, reverse=True)) + r")\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*(.*)$",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX~-])\]\s*(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
#: A step's own number in front of its title: "1.", "2)", "Step 3:", "Phase 2 -".
_STEP_NUMBER = re.compile(r"^(?:(?:step|phase|stage|part)\s+)?(\d{1,9}(?:\.\d{1,9})*)(?:[.):]|\s+[-–—:])\s*(?=\S)", re.IGNORECASE)
#: "**Title** — what it means" or "**Title**: ...": the bold part is the title.
_BOLD_LEAD = re.compile(r"^(?:\*\*|__)(.+?)(?:\*\*|__)\s*(?:[:.\-–—]\s*)?(.*)$")
_LABEL = re.compile(f"^{LABEL_REGEX}$")
#: Headings whose sections are about the plan, not work to do: a plan-mode document's
#: Context or Files to modify. Their text makes no task (the report lists them as skipped).
NOTE_HEADINGS = re.compile(
    r"^(context|overview|summary|background|motivation|goals?|non-goals|approach|notes?|design|rationale|"
    r"risks?|open questions|questions|out of scope|assumptions|decisions|references|"
    r"(critical |key |relevant )?files( to (modify|change|create|touch))?|existing code.*|reuse.*)\s*:?$",
    re.IGNORECASE,
)
#: Statuses a plan may give a task; any other word is refused (a plan says what is done).
STATUS_WORDS = {
    "done": Status.COMPLETED, "completed": Status.COMPLETED, "complete": Status.COMPLETED, "finished": Status.COMPLETED,
    "cancelled": Status.CANCELLED, "canceled": Status.CANCELLED, "dropped": Status.CANCELLED, "wontfix": Status.CANCELLED,
    "todo": Status.PENDING, "to do": Status.PENDING, "pending": Status.PENDING, "open": Status.PENDING,
}


@dataclass
class _Node:
    title: str
    line: int
    parent: _Node | None
    #: The number the source wrote in front of it ("3." or "Step 3:"), if any.
    written_number: str | None = None
    status: Status = Status.PENDING
    text: list[str] = field(default_factory=list)
    fields: list[tuple[str, str, int]] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)
    #: "2.1": its place among the plan's tasks, counted from 1 at each level.
    path: str = ""
    key: str = ""


def parse_markdown(text: str, source: str) -> Plan:
    """The plan ``text`` writes; ``source`` names it in errors and on the board."""
    lines = text.splitlines()
    roots, skipped = _tree(lines, source)
    tasks: list[PlanTask] = []
    if not roots:
        raise PlanError(f"{source}: no tasks found: write a heading or a list item for each task (see 'Plans' in the README)")
    _number(roots, "")
    every = _walk(roots)
    _give_keys(every, source)
    for node in every:
        tasks.append(_task(node, roots, every, source))
    return Plan(source=source, kind="markdown", tasks=tasks, skipped=skipped)


def _tree(lines: list[str], source: str) -> tuple[list[_Node], list[str]]:
    """Headings and list items as a tree of would-be tasks, with their text and field lines."""
    headings = [(index, found) for index, line in enumerate(lines) if (found := _HEADING.match(line)) and not _inside_fence(lines, index)]
    title_line = _title_heading(headings)
    roots: list[_Node] = []
    skipped: list[str] = []
    heading_stack: list[tuple[int, _Node]] = []
    item_stack: list[tuple[int, _Node]] = []
    #: Inside a note section (``NOTE_HEADINGS``): nothing is a task until a heading at its level or above.
    skipping_below: int | None = None
    current: _Node | None = None  # what text and fields attach to
    fence: str | None = None

    def add(node: _Node) -> None:
        (node.parent.children if node.parent is not None else roots).append(node)

    for index, raw in enumerate(lines):
        number = index + 1
        line = raw.rstrip()
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            if current is not None and skipping_below is None:
                current.text.append(raw)
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            if current is not None and skipping_below is None:
                current.text.append(raw)
            continue
        heading = _HEADING.match(line)
        if heading:
            level = len(heading.group(1))
            if index == title_line:
                current = None
                continue
            if skipping_below is not None and level > skipping_below:
                continue
            skipping_below = None
            title = _clean(heading.group(2))
            if NOTE_HEADINGS.match(title):
                skipping_below = level
                skipped.append(f"{source}:{number} {title}")
                current = None
                continue
            while heading_stack and heading_stack[-1][0] >= level:
                heading_stack.pop()
            node = _node(heading.group(2), number, heading_stack[-1][1] if heading_stack else None, source)
            add(node)
            heading_stack.append((level, node))
            item_stack = []
            current = node
            continue
        if skipping_below is not None or not line.strip():
            if current is not None and skipping_below is None:
                current.text.append("")
            continue
        item = _ITEM.match(line)
        indent = len(item.group(1).expandtabs(4)) if item else len(line) - len(line.lstrip())
        while item_stack and item_stack[-1][0] >= indent and item:
            item_stack.pop()
        owner = item_stack[-1][1] if item_stack else (heading_stack[-1][1] if heading_stack else None)
        field_line = _FIELD.match(line.strip())
        if field_line and (owner is not None or current is not None):
            # "- after: 1" under an item, or "after: 1" below a heading or an item's first line.
            target = owner if item else (current or owner)
            assert target is not None
            target.fields.append((FIELD_NAMES[field_line.group(1).lower()], field_line.group(2).strip(), number))
            continue
        if item:
            node = _node(item.group(3), number, owner, source)
            if item.group(2)[0].isdigit() and node.written_number is None:
                node.written_number = item.group(2)[:-1]
            add(node)
            item_stack.append((indent, node))
            current = node
            continue
        if item_stack and indent <= item_stack[-1][0]:
            # Text back at an item's own margin closes the list: it belongs to the heading.
            item_stack = []
            current = heading_stack[-1][1] if heading_stack else None
        if current is not None:
            current.text.append(line.strip() if current is not (heading_stack[-1][1] if heading_stack else None) else line)
    if fence is not None:
        raise PlanError(f"{source}: a code block opened with {fence} is never closed; close it so the lines after it are read as the plan")
    return roots, skipped


def _inside_fence(lines: list[str], index: int) -> bool:
    fences = sum(1 for line in lines[:index] if _FENCE.match(line))
    return fences % 2 == 1


def _title_heading(headings: list[tuple[int, re.Match[str]]]) -> int | None:
    """The line of the plan's title: its first heading, when no other heading is at its level
    or above it (``# Plan: ...`` over ``##`` steps). A plan of one heading and items is titled too."""
    if not headings:
        return None
    first_index, first = headings[0]
    level = len(first.group(1))
    if any(len(found.group(1)) <= level for _, found in headings[1:]):
        return None
    return first_index


def _clean(title: str) -> str:
    title = title.strip()
    checkbox = _CHECKBOX.match(title)
    if checkbox:
        title = checkbox.group(2)
    title = _STEP_NUMBER.sub("", title, count=1)
    bold = _BOLD_LEAD.match(title)
    if bold and not bold.group(2):
        title = bold.group(1)
    return title.strip()


def _node(written: str, line: int, parent: _Node | None, source: str) -> _Node:
    text = written.strip()
    status = Status.PENDING
    checkbox = _CHECKBOX.match(text)
    if checkbox:
        mark, text = checkbox.group(1), checkbox.group(2)
        status = Status.COMPLETED if mark in "xX" else Status.CANCELLED if mark in "~-" else Status.PENDING
    number = _STEP_NUMBER.match(text)
    written_number = number.group(1) if number else None
    if number:
        text = text[number.end():]
    description: list[str] = []
    bold = _BOLD_LEAD.match(text)
    if bold:
        text = bold.group(1)
        if bold.group(2):
            description.append(bold.group(2))
    if text.startswith("~~") and text.endswith("~~") and len(text) > 4:
        text, status = text[2:-2], Status.CANCELLED
    text = " ".join(text.split())
    if not text:
        raise PlanError(f"{source}:{line}: a task with no title; write what is to be done after the heading or list marker")
    if len(text) > MAX_SUBJECT:
        raise PlanError(f"{source}:{line}: the title is {len(text)} characters, over the {MAX_SUBJECT} a task's subject takes; put the rest on the lines below it")
    return _Node(title=text, line=line, parent=parent, written_number=written_number, status=status, text=description)


def _number(nodes: list[_Node], prefix: str) -> None:
    for place, node in enumerate(nodes, start=1):
        node.path = f"{prefix}{place}"
        _number(node.children, node.path + ".")


def _walk(nodes: list[_Node]) -> list[_Node]:
    found: list[_Node] = []
    for node in nodes:
        found.append(node)
        found += _walk(node.children)
    return found


def normalized(title: str) -> str:
    """A title as keys and references compare it: case, spacing and a closing period ignored."""
    return " ".join(title.lower().split()).rstrip(".:")


def _give_keys(nodes: list[_Node], source: str) -> None:
    """Each task's key: its own ``key:`` when it has one, else the titles from the top down to
    it. A title written twice under one parent would share a key, so it is refused."""
    seen: dict[str, _Node] = {}
    for node in nodes:
        given = [value for name, value, _ in node.fields if name == "key"]
        if len(given) > 1:
            raise PlanError(f"{source}:{node.line}: '{node.title}' is given two keys; keep one")
        if given:
            key = given[0].strip().strip("\"'")
            if not key:
                raise PlanError(f"{source}:{node.line}: an empty key; write a word that names the task, or drop the line")
            node.key = "key:" + key
        else:
            node.key = (node.parent.key + " / " if node.parent is not None else "") + normalized(node.title)
        twin = seen.get(node.key)
        if twin is not None:
            under = f" under '{node.parent.title}'" if node.parent is not None else ""
            raise PlanError(
                f"{source}:{node.line}: '{node.title}' is written twice{under} (first at line {twin.line}); "
                "give one of them another title or a 'key:' line, so a re-import can tell them apart"
            )
        seen[node.key] = node


def _task(node: _Node, roots: list[_Node], every: list[_Node], source: str) -> PlanTask:
    task = PlanTask(
        key=node.key, subject=node.title, parent=node.parent.key if node.parent is not None else None,
        status=node.status, where=f"{source}:{node.line}",
    )
    task.description = _text(node.text)
    for name, value, line in node.fields:
        where = f"{source}:{line}"
        if name == "needs":
            for reference in _references(value, where):
                if reference.startswith("#"):
                    task.extra.setdefault("boardNeeds", []).append(_board_id(reference[1:], where))
                    continue
                target = _resolve(reference, node, roots, every, where)
                if target is node:
                    raise PlanError(f"{where}: '{node.title}' cannot wait on itself")
                if target.key not in task.needs:
                    task.needs.append(target.key)
        elif name == "labels":
            for label in (part.strip().strip("\"'`") for part in value.split(",")):
                if not label:
                    continue
                if not _LABEL.match(label):
                    raise PlanError(f"{where}: '{label}' is not a label: one word of 1-40 characters, no spaces or commas")
                if label not in task.labels:
                    task.labels.append(label)
        elif name == "priority":
            priority = priority_of(value.strip("\"'`*"))
            if priority is None:
                raise PlanError(f"{where}: unknown priority '{value}'; write critical, high, medium or low")
            task.priority = priority
        elif name == "status":
            status = STATUS_WORDS.get(" ".join(value.strip("\"'`*").lower().split()))
            if status is None:
                raise PlanError(f"{where}: unknown status '{value}'; a plan says done, cancelled or todo (agents set the rest)")
            task.status = status
        elif name == "files":
            task.extra.setdefault("files", []).extend(part.strip().strip("`\"'") for part in value.split(",") if part.strip().strip("`\"'"))
    return task


def _text(lines: list[str]) -> str:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return "\n".join(lines)


def _references(value: str, where: str) -> list[str]:
    """``2, 3``, ``"Set up the database", 4``, ``#12``: quoted titles may hold commas."""
    found: list[str] = []
    rest = value.strip()
    while rest:
        quoted = re.match(r"^[\"“'`](.+?)[\"”'`]\s*(?:,|\band\b|$)\s*", rest)
        if quoted:
            found.append(quoted.group(1).strip())
            rest = rest[quoted.end():]
            continue
        part, _, rest = rest.partition(",")
        for piece in re.split(r"\s+and\s+", part):
            if piece.strip():
                found.append(piece.strip())
        rest = rest.strip()
    if not found:
        raise PlanError(f"{where}: says what it waits on but names nothing; write step numbers or titles, e.g. 'after: 2, 3'")
    return found


def _board_id(value: str, where: str) -> str:
    try:
        return validate_id(value)
    except ValueError as error:
        raise PlanError(f"{where}: #{value}: {error}") from None


def _resolve(reference: str, node: _Node, roots: list[_Node], every: list[_Node], where: str) -> _Node:
    """What a reference names: a step number of the same list (the number it was written with,
    else its place), else a top-level task's number, else a dotted path (2.1); or a title or
    a ``key:``, anywhere in the plan."""
    plain = reference.strip().lstrip("#").rstrip(".")
    step = re.fullmatch(r"(?:(?:step|task|phase)\s+)?(\d{1,9}(?:\.\d{1,9})*)", plain, re.IGNORECASE)
    if step:
        number = step.group(1)
        siblings = node.parent.children if node.parent is not None else roots
        if "." not in number:
            for candidate in siblings:
                if candidate.written_number == number:
                    return candidate
            if all(candidate.written_number is None for candidate in siblings) and 0 < int(number) <= len(siblings):
                return siblings[int(number) - 1]
        for candidate in every:
            if candidate.path == number:
                return candidate
        raise PlanError(f"{where}: there is no step {number} in the plan (its steps are numbered from 1 at each level, 2.1 being the first under 2)")
    wanted = normalized(plain.strip("\"'`"))
    named = [candidate for candidate in every if candidate.key == "key:" + plain or normalized(candidate.title) == wanted]
    if not named:
        raise PlanError(f"{where}: no task in the plan is called '{plain}'; write its title as it is written, or its step number")
    if len(named) > 1:
        lines = ", ".join(str(candidate.line) for candidate in named)
        raise PlanError(f"{where}: '{plain}' names {len(named)} tasks (lines {lines}); give the one you mean a 'key:' line and name that")
    return named[0]


#: The largest plan file read: a plan is read whole, and a megabyte of markdown is thousands of tasks.
MAX_PLAN_BYTES = 4 * 1024 * 1024


def read_markdown_file(path: Path, workspace: Path) -> Plan:
    """The plan in the file at ``path``, named on the board by its path from the workspace
    (else in full), so the same file is the same plan from any directory."""
    if not path.is_file():
        raise PlanError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    text = read_text_file(path, MAX_PLAN_BYTES)
    resolved, root = path.resolve(), workspace.resolve()
    source = str(resolved.relative_to(root)) if resolved.is_relative_to(root) else str(resolved)
    return parse_markdown(text, source)
