"""The dashboard's filter: free text plus ``owner:``/``@``, ``status:``, ``priority:``, ``label:`` and ``#id`` terms.

All terms must match. Free text matches the id, subject or owner, case-insensitively.
``status:`` takes a display state or a prefix of one (``ready``, ``waiting-deps``, ``fail``...).
"""

from __future__ import annotations

from collections.abc import Callable

from board.model import Priority, Task
from board.status import Status

StateOf = Callable[[Task], str]
#: What ``status:`` can name: every status, and the two states a pending task is shown in.
STATES = sorted({*(s.value.replace("_", "-") for s in Status if s != Status.PENDING), "ready", "waiting-deps"})


class TaskQuery:
    def __init__(self, text: str, state_of: StateOf | None = None) -> None:
        self.text = text.strip()
        self.state_of = state_of
        self.owners: list[str] = []
        self.states: list[str] = []
        self.priorities: list[str] = []
        self.ids: list[str] = []
        self.labels: list[str] = []
        self.words: list[str] = []
        for term in self.text.split():
            lower = term.casefold()
            key, _, value = lower.partition(":")
            if lower.startswith("@") and len(lower) > 1:
                self.owners.append(lower[1:])
            elif lower.startswith("#") and len(lower) > 1:
                self.ids.append(term[1:])
            elif value and key in ("owner", "o"):
                self.owners.append(value)
            elif value and key in ("status", "s", "is"):
                self.states.append(value.replace("_", "-"))
            elif value and key in ("priority", "p"):
                self.priorities.append(value)
            elif value and key in ("label", "l"):
                self.labels.append(value)
            elif value and key == "id":
                self.ids.append(term.split(":", 1)[1])
            else:
                self.words.append(lower)

    def __bool__(self) -> bool:
        return bool(self.text)

    def problems(self, labels_in_use: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
        """Terms that can match nothing, said plainly (rather than showing an empty board)."""
        found = []
        for state in self.states:
            if not any(known.startswith(state) for known in STATES):
                found.append(f"no status {state!r}: use one of {', '.join(STATES)}")
        for priority in self.priorities:
            if not any(p.value.startswith(priority) for p in Priority):
                found.append(f"no priority {priority!r}: use one of {', '.join(p.value for p in Priority)}")
        in_use = {name.casefold() for name in labels_in_use}
        for name in self.labels:
            if name not in in_use:
                found.append(f"no task has the label {name!r}" + (f" (in use: {', '.join(sorted(labels_in_use))})" if labels_in_use else ""))
        return found

    def matches(self, task: Task) -> bool:
        if self.ids and task.id not in self.ids:
            return False
        owner = task.owner.casefold()
        if self.owners and not any(o in owner for o in self.owners):
            return False
        if self.priorities and not any(str(task.priority).startswith(p) for p in self.priorities):
            return False
        if self.states:
            state = (self.state_of(task) if self.state_of else str(task.status)).replace("_", "-")
            if not any(state.startswith(s) for s in self.states):
                return False
        if self.labels and not all(name in {label.casefold() for label in task.labels} for name in self.labels):
            return False
        if self.words:
            haystack = f"#{task.id} {task.subject} {task.owner}".casefold()
            if not all(word in haystack for word in self.words):
                return False
        return True
