"""Per-board settings from ``.tasks/board.toml``; every setting has a default, the file is optional."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from board import document_schema as schema
from board.document_schema import ValidationError

from board.document import Document, field, optional
from board.errors import BoardError
from board.model import Budget
from board.prices import merged_prices
from board.disk.atomic import SpecialFile, read_regular
from board.store.file_format import SETTINGS_FILE

if TYPE_CHECKING:
    from board.store.base import Problem

FILE_NAME = SETTINGS_FILE


class _Section(Document, extra="forbid", camel_case=False, numbers_as_str=False):
    """A table of ``board.toml``: its keys as written (snake_case), a key it does not know refused."""


def _setting(core: schema.CoreSchema, default: Any) -> Any:
    """A setting's field: its schema and default; a default of None makes it optional as well."""
    return field(core if default is not None else optional(core), default=default)


def _number(*, default: float | None, **limits: Any) -> Any:
    return _setting(schema.float_schema(**limits), default)


def _whole(*, default: int | None, **limits: Any) -> Any:
    return _setting(schema.int_schema(**limits), default)


def _flag(default: bool) -> Any:
    return _setting(schema.bool_schema(), default)


def _text(default: str | None) -> Any:
    return _setting(schema.str_schema(), default)


def _one_of(*words: str, default: str | None) -> Any:
    return _setting(schema.literal_schema(list(words)), default)


_S = TypeVar("_S", bound=Document)


def _section(kind: type[_S]) -> _S:
    """A table of its own, all defaults when left out."""
    return field(kind.__pydantic_core_schema__, default_factory=kind)  # type: ignore[no-any-return]


#: How long a worker gives a command it stops (SIGTERM) before SIGKILL.
COMMAND_STOP_SECONDS = 2.0


class LeaseSettings(_Section):
    seconds: float = _number(default=30.0, ge=1, le=86400)
    #: How far the clocks of the board's machines may disagree. A worker that cannot renew its
    #: lease stops its command by the lease's end by its own clock; the coordinator takes the
    #: lease back only this much, plus the stop's grace, after the end by its clock.
    clock_skew_seconds: float = _number(default=1.0, ge=0, le=3600)

    @property
    def reclaim_margin(self) -> timedelta:
        """How long past its expiry a lease is left to its holder (``clock_skew_seconds`` and
        the time a fenced worker takes to stop its command)."""
        return timedelta(seconds=self.clock_skew_seconds + COMMAND_STOP_SECONDS)


class CoordinatorSettings(_Section):
    #: How often the coordinator ticks when no file change wakes it.
    tick_seconds: float = _number(default=1.0, gt=0, le=60)
    #: In-progress tasks one agent may hold at once.
    max_tasks_per_agent: int = _whole(default=1, ge=1)
    #: An agent whose heartbeat is older than this many lease lengths is stale.
    stale_after_leases: float = _number(default=1.0, gt=0)


class PolicySettings(_Section):
    """Seed 002's automatic status policies; 0 means off."""

    block_after_failures: int = _whole(default=0, ge=0)
    complete_after_successes: int = _whole(default=0, ge=0)


class BudgetSettings(_Section):
    """What a task or an agent may spend (``board.budgets``); unset: no limit. A task's own
    budget (``--budget-tokens``/``--budget-usd``) wins over ``task_*``."""

    task_tokens: int | None = _whole(default=None, ge=1)
    task_usd: float | None = _number(default=None, gt=0, allow_inf_nan=False)
    agent_tokens: int | None = _whole(default=None, ge=1)
    agent_usd: float | None = _number(default=None, gt=0, allow_inf_nan=False)
    #: ``budget.near`` once this share of a limit is spent.
    warn_at: float = _number(default=0.8, gt=0, le=1)
    #: At the limit, pause the task (the ``budget`` policy); false: the error alert only.
    pause: bool = _flag(True)

    def for_tasks(self) -> Budget | None:
        return Budget(tokens=self.task_tokens, usd=self.task_usd) if self.task_tokens or self.task_usd else None

    def for_agents(self) -> Budget | None:
        return Budget(tokens=self.agent_tokens, usd=self.agent_usd) if self.agent_tokens or self.agent_usd else None


class GitSettings(_Section):
    #: Run ``git fetch`` before drift checks (never done unless asked).
    fetch: bool = _flag(False)
    #: With ``fetch`` on, fetch at most this often (alerts are refreshed every tick).
    fetch_interval_seconds: float = _number(default=60.0, ge=0)
    timeout_seconds: float = _number(default=5.0, gt=0)


class WorktreeSettings(_Section):
    """A git worktree per task (``board run --worktrees``)."""

    #: Every ``board run`` of this board runs each task's command in the task's worktree.
    enabled: bool = _flag(False)
    #: The branch worktrees start from and merge into; empty: the one checked out at the run's start.
    base: str = _text("")
    #: ``auto``: the coordinator merges each completed task's branch, in dependency order;
    #: ``manual``: a person does (``board merge ID``, or ``m`` in a task's details).
    merge: Literal["manual", "auto"] = _one_of("manual", "auto", default="manual")


class AlertSettings(_Section):
    #: ``agent.failing`` once an agent's task has this many failed tool calls in a row.
    failing_after: int = _whole(default=3, ge=1)
    #: How long a refused stale write stays on the board as ``conflict.write``.
    write_conflict_seconds: float = _number(default=300.0, gt=0)
    #: How long ``lease.expired`` stays up, in lease lengths (unless the task is claimed again).
    reclaim_window_leases: float = _number(default=2.0, gt=0)
    #: Default life of a file reservation (seed 004: five minutes).
    reservation_ttl_seconds: float = _number(default=300.0, ge=1, le=86400)
    #: A task waiting for a person this long raises its ``human.waiting`` alert to an error.
    waiting_error_seconds: float = _number(default=1800.0, gt=0)


class UiSettings(_Section):
    theme: str | None = _text(None)
    #: Ring the terminal bell when a task starts waiting for a person.
    bell: bool = _flag(False)


NoticeKind = Literal["waiting", "failed", "cancelled_blocker", "error"]
NOTICE_KINDS: tuple[NoticeKind, ...] = ("waiting", "failed", "cancelled_blocker", "error")


class NotifySettings(_Section):
    """Telling a person when the board needs them (``board.notify``): what, and by which routes."""

    #: What to tell: a task waiting for an answer, a failed task, a task waiting on a cancelled
    #: blocker, an error alert.
    on: list[NoticeKind] = field(schema.list_schema(schema.literal_schema(list(NOTICE_KINDS))), default_factory=lambda: list(NOTICE_KINDS))
    #: How a dashboard tells its own terminal: ``bell``, ``osc9`` / ``osc777`` (a notification
    #: from terminals that show them), or ``off``. Unset: ``bell`` when ``[ui] bell`` is on.
    terminal: Literal["off", "bell", "osc9", "osc777"] | None = _one_of("off", "bell", "osc9", "osc777", default=None)
    #: A desktop notification (``notify-send``) where there is one.
    desktop: bool = _flag(False)
    #: POST each notification here (ntfy-compatible: ``https://ntfy.sh/your-topic``).
    url: str = _text("")
    #: A link back to the task, ``{id}`` replaced by its id (sent as ntfy's ``Click`` header).
    link: str = _text("")
    #: Notices this close together go as one message.
    coalesce_seconds: float = _number(default=2.0, ge=0, le=3600)
    #: A route sends at most once this often; what arrives meanwhile goes as one message.
    min_gap_seconds: float = _number(default=30.0, ge=0, le=86400)


class HookSettings(_Section):
    """What ``board hook`` does when an agent is about to write a file another agent's task
    holds: ``block`` the write, ``warn`` (let it pass; the touch raises the conflict alert) or
    ``off``."""

    #: A write reservation another task made (``board reserve``).
    reserved: Literal["block", "warn", "off"] = _one_of("block", "warn", "off", default="block")
    #: A file listed by a task another agent has in progress.
    held: Literal["block", "warn", "off"] = _one_of("block", "warn", "off", default="warn")


class StoreSettings(_Section):
    """Where the board is kept: ``url`` names a PostgreSQL database (``--db`` and ``BOARD_DB``
    win over it); without one, the board is the files in ``.tasks/``."""

    url: str | None = _text(None)


class WebSettings(_Section):
    """``board web``: the token a browser must bring (default: a new one each start, printed in
    the address it prints). Kept here, it survives restarts; anyone who can read this file can
    use the board through the server."""

    token: str | None = field(optional(schema.str_schema(min_length=16, max_length=200, pattern=r"^[A-Za-z0-9_\-.~]+$")), default=None)


class PriceSettings(_Section):
    """A model's price in dollars per million tokens (``[prices."model-name"]``); a field left
    out keeps board's default for the model (``board.prices.DEFAULT_PRICES``)."""

    input: float | None = _number(default=None, ge=0)
    output: float | None = _number(default=None, ge=0)
    cache_write: float | None = _number(default=None, ge=0)
    cache_read: float | None = _number(default=None, ge=0)


class BoardSettings(_Section):
    store: StoreSettings = _section(StoreSettings)
    lease: LeaseSettings = _section(LeaseSettings)
    coordinator: CoordinatorSettings = _section(CoordinatorSettings)
    policies: PolicySettings = _section(PolicySettings)
    budget: BudgetSettings = _section(BudgetSettings)
    git: GitSettings = _section(GitSettings)
    worktrees: WorktreeSettings = _section(WorktreeSettings)
    alerts: AlertSettings = _section(AlertSettings)
    ui: UiSettings = _section(UiSettings)
    hooks: HookSettings = _section(HookSettings)
    notify: NotifySettings = _section(NotifySettings)
    web: WebSettings = _section(WebSettings)
    prices: dict[str, PriceSettings] = field(schema.dict_schema(schema.str_schema(), PriceSettings.__pydantic_core_schema__), default_factory=dict)

    def model_prices(self) -> dict[str, tuple[float, float, float, float]]:
        """Dollars per million tokens by model: board's defaults with ``[prices]`` applied."""
        return merged_prices({model: price.model_dump() for model, price in self.prices.items()})

    @property
    def terminal_notices(self) -> str:
        """How a dashboard tells its terminal (``[notify] terminal``, else ``[ui] bell``)."""
        return self.notify.terminal or ("bell" if self.ui.bell else "off")

    @property
    def agent_stale_after(self) -> timedelta:
        """An agent whose heartbeat is older than this is stale (stopped, crashed or hung)."""
        return timedelta(seconds=self.lease.seconds * self.coordinator.stale_after_leases)


class BrokenSettings(BoardError):
    """A ``board.toml`` that cannot be used: where it is, and what is wrong with it."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = str(path)
        self.reason = reason


def load_settings(local_dir: Path) -> BoardSettings:
    """Read ``board.toml`` from the store's ``local_dir`` (the workspace's settings on this
    machine: ``.tasks/``); a broken file is one clear error (``BrokenSettings``)."""
    path = local_dir / FILE_NAME
    try:
        raw = read_regular(path)
    except FileNotFoundError:
        return BoardSettings()
    except SpecialFile as special:
        raise BrokenSettings(path, special.reason) from None
    import tomllib  # only for a board that has settings

    try:
        return BoardSettings.model_validate(tomllib.loads(raw.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise BrokenSettings(path, f"not valid TOML ({error})") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BrokenSettings(path, f"setting {where!r}: {first['msg']}") from None


def settings_problem(local_dir: Path) -> Problem | None:
    """``board check``'s problem with ``board.toml``, if it is broken."""
    from board.store.base import Problem

    try:
        load_settings(local_dir)
    except BrokenSettings as broken:
        return Problem("settings.broken", broken.path, broken.reason)
    return None


def settings_or_defaults(local_dir: Path) -> BoardSettings:
    """``load_settings``, or the defaults when ``board.toml`` is broken: for what reads a setting
    on the way (``board check`` names the broken one)."""
    try:
        return load_settings(local_dir)
    except BoardError:
        return BoardSettings()
