"""Budgets: what a task or an agent may spend in model tokens and estimated dollars, and what
it has spent.

A task's budget is its own (``task create/update/claim --budget-tokens/--budget-usd``, or
``board run``'s for the tasks it starts), else the board's default (``[budget]`` in board.toml);
an agent's is the board's (``[budget] agent_tokens/agent_usd``). What was spent is read from the
token logs written from Claude Code's transcripts (``board.claude.transcripts``): a task's tokens are
its agents' messages while on it. Tokens count all four kinds (input, output, cache writes and
cache reads), as ccusage's totals do; dollars are the estimate at board's prices.

At ``warn_at`` of either limit (80 % unless set) the board raises ``budget.near``; at the limit,
``budget.over``, and the ``budget`` policy pauses the task (badged; a person can undo it, and
the task is not paused again for the same budget). Reading is by stat: a log that did not change
since the last look is not read again, so a coordinator's tick over a quiet board costs a stat a
task with a budget.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from board.records import NamedTuple
from board.model import Budget, Task
from board.status import ACTIVE, Status
from board.claude.transcripts import agent_tokens_path, read_tokens, summary
from board.store.file_format import TASK_TOKENS, task_tokens_path

Prices = Mapping[str, tuple[float, float, float, float]]


class Spend(NamedTuple):
    tokens: int
    usd: float


NOTHING = Spend(0, 0.0)


def used_share(spend: Spend, budget: Budget) -> float:
    """How much of ``budget`` is spent, as a share (1.0: all of it), by whichever limit is nearer."""
    shares = [spend.tokens / budget.tokens] if budget.tokens else []
    if budget.usd:
        shares.append(spend.usd / budget.usd)
    return max(shares, default=0.0)


def describe(spend: Spend, budget: Budget) -> str:
    """``$1.02 of $1.00`` / ``12,400 of 10,000 tokens``: the limit nearest to being spent."""
    parts = []
    if budget.usd:
        parts.append((spend.usd / budget.usd, f"${spend.usd:,.2f} of ${budget.usd:,.2f}"))
    if budget.tokens:
        parts.append((spend.tokens / budget.tokens, f"{spend.tokens:,} of {budget.tokens:,} tokens"))
    return max(parts)[1] if parts else "no budget"


def budget_text(budget: Budget) -> str:
    """``$2.00 / 500,000 tokens``: a budget as a person reads it."""
    parts = ([f"${budget.usd:,.2f}"] if budget.usd else []) + ([f"{budget.tokens:,} tokens"] if budget.tokens else [])
    return " / ".join(parts)


def task_budget(task: Task, default: Budget | None) -> Budget | None:
    return task.budget if task.budget is not None and (task.budget.tokens or task.budget.usd) else default


def budget_summary(task: Task, spend: Spend, default: Budget | None) -> tuple[str, float] | None:
    """The budget a task is held to as a person reads it (``$2.00 (the board default)``) and
    the share of it spent; None without one. ``task show`` and the detail view say it so."""
    budget = task_budget(task, default)
    if budget is None:
        return None
    return f"{budget_text(budget)}{'' if budget is task.budget else ' (the board default)'}", used_share(spend, budget)


class SpendReader:
    """Spend of tasks and agents from their token logs, each log read again only once it changed."""

    def __init__(self, state_dir: Path, prices: Prices) -> None:
        self.state_dir = state_dir
        self.prices = prices
        self._seen: dict[Path, tuple[tuple[int, int, int], Spend]] = {}

    def task(self, task_id: str) -> Spend:
        return self._read(task_tokens_path(self.state_dir, task_id))

    def agent(self, name: str) -> Spend:
        return self._read(agent_tokens_path(self.state_dir, name))

    def tasks(self, ids: Iterable[str]) -> dict[str, Spend]:
        """The spend of each task that spent anything."""
        found = {task_id: self.task(task_id) for task_id in ids}
        return {task_id: spend for task_id, spend in found.items() if spend.tokens}

    def every_task(self) -> dict[str, Spend]:
        """The spend of every task with a tokens log (the dashboard's cards and header)."""
        from board.names import ID_PATTERN

        try:
            names = [entry.name for entry in os.scandir(self.state_dir / TASK_TOKENS)]
        except OSError:
            return {}
        ids = [name[: -len(".jsonl")] for name in names if name.endswith(".jsonl")]
        return self.tasks(task_id for task_id in ids if ID_PATTERN.fullmatch(task_id))

    def _read(self, path: Path) -> Spend:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            self._seen.pop(path, None)
            return NOTHING
        key = (info.st_ino, info.st_size, info.st_mtime_ns)
        seen = self._seen.get(path)
        if seen is not None and seen[0] == key:
            return seen[1]
        totals = summary(read_tokens(path), self.prices)
        spend = Spend(int(totals["total"]), float(totals["cost"]))
        self._seen[path] = (key, spend)
        return spend


class BudgetState(NamedTuple):
    """One task's or agent's budget and what it spent, for the alerts and the policy."""

    spend: Spend
    budget: Budget

    @property
    def share(self) -> float:
        return used_share(self.spend, self.budget)

    def text(self) -> str:
        return describe(self.spend, self.budget)


def budget_states(
    tasks: Mapping[str, Task],
    reader: SpendReader,
    *,
    task_default: Budget | None,
    agent_budget: Budget | None,
) -> tuple[dict[str, BudgetState], dict[str, BudgetState]]:
    """The budget and spend of each active task that has a budget, and of each agent working on
    one (when agents have a budget): what ``budget.*`` alerts and the ``budget`` policy read."""
    by_task = {}
    owners = set()
    for task in tasks.values():
        if task.status not in ACTIVE:
            continue
        if task.status == Status.IN_PROGRESS and task.owner:
            owners.add(task.owner)
        budget = task_budget(task, task_default)
        if budget is not None:
            by_task[task.id] = BudgetState(reader.task(task.id), budget)
    by_agent = {name: BudgetState(reader.agent(name), agent_budget) for name in sorted(owners)} if agent_budget else {}
    return by_task, by_agent
