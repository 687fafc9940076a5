"""The keys that change a task: each makes a move of the shared action layer (``board.actions``),
as the person at the keyboard, on the task they saw when they pressed it.

Writes run in a worker thread through the session (``BoardSession.write``, under its lock);
success shows at once (the task the store returns is posted as ``BoardChanged``), a refusal is
one notification and nothing changes.

A key reaches its binding a moment after it was pressed (longer on a busy machine), and agents
move cards meanwhile. Cursor keys select at once (``KanbanBoard.select_task``), so a key typed
after one finds the card it went to; the cursor goes with the selected card wherever another
writer moves it, so a key acts on the card highlighted; a task key pressed as the selected task
left the view, and the dashboard moved the cursor to a neighbour, does nothing
(``cursor_just_moved``); and a move is refused when the task changed on disk since the key
(``Seen``), a dialog's "y" included.

``TaskKeys`` is a mixin of ``BoardApp`` (Textual looks for a binding's action on the app); its
host is typed as an ``App`` holding a ``BoardSession``, and what else it needs of the host it
declares below.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import events, work

from board import actions
from board.agents import AgentState, agent_state
from board.errors import BoardError, os_error_line
from board.model import Seen, Task, by_policy
from board.status import Status
from board.store import Store
from board.text import printable
from board.ui.card import format_age
from board.ui.lanes import LANE_TITLES
from board.ui.messages import BoardChanged
from board.identity import local_user
from board.ui.session import BoardSession

# The mixins' host: to mypy an ``App`` (every Textual call they make is checked against it); at
# run time nothing, as ``BoardApp`` brings ``App`` itself.
if TYPE_CHECKING:
    from textual.app import App

    KeysHost = App[None]
else:
    KeysHost = object

#: A task key pressed before, or this soon after, the dashboard moved the cursor to another card
#: (the selected task left the view: filtered out, deleted, cancelled while those are hidden)
#: does nothing: it was meant for the task that left, and the person has not had the time to see
#: the new one. A card that only moves keeps the cursor (``BoardApp._follow_selection``).
CURSOR_MOVED_NOTICE_SECONDS = 1.0


@dataclass(frozen=True)
class CursorMoved:
    """The dashboard, not the person, put the cursor on another card."""

    #: When, by ``time.monotonic``: the clock Textual stamps a key with when it is read.
    at: float
    #: The card that was selected.
    away_from: str


class TaskKeys(KeysHost):
    """start, pause, retry, cancel, assign, answer and undo, for ``BoardApp``."""

    #: Actions on the selected task, hidden on screens that show no task.
    TASK_ACTIONS = frozenset({"details", "start", "pause", "retry", "cancel", "assign", "undo_policy", "answer", "message", "filter", "toggle_view", "toggle_cancelled"})
    #: Actions that write to the board, disabled with --readonly.
    WRITE_ACTIONS = frozenset({"start", "pause", "retry", "cancel", "assign", "undo_policy", "answer", "message"})

    #: The board the keys act on (the host's).
    session: BoardSession
    #: Whether the dashboard writes nothing, and whether its cursors blink (the host's).
    readonly: bool
    live_clock: bool
    #: When the key being handled was pressed (None between keys).
    _key_pressed_at: float | None = None
    _cursor_moved: CursorMoved | None = None

    async def on_event(self, event: events.Event) -> None:
        # A key's binding runs while the key is dispatched here (on its way back up from the
        # focused widget): note when it was pressed for ``cursor_just_moved``.
        if not isinstance(event, events.Key):
            await super().on_event(event)
            return
        self._key_pressed_at = event.time
        try:
            await super().on_event(event)
        finally:
            self._key_pressed_at = None

    @property
    def selected_task(self) -> Task | None:
        selected = self.session.view.selected
        return self.session.graph.tasks.get(selected) if selected else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Write keys are off on a read-only board, task keys on screens that show no task;
        w shows on a waiting task only, m on a team member's."""
        if self.readonly and action in self.WRITE_ACTIONS:
            return False
        if action in self.TASK_ACTIONS and not getattr(self.screen, "ACTS_ON_TASKS", True):
            return False
        if action == "answer":
            task = self.selected_task
            return task is not None and task.status == Status.WAITING
        if action == "message":
            task = self.selected_task
            return task is not None and bool(task.owner) and any(task.owner == m.name for t in self.session.teams for m in t.members)
        return True

    def cursor_moved_by_board(self, away_from: str) -> None:
        """The dashboard selected another card in place of ``away_from`` (which moved or went)."""
        self._cursor_moved = CursorMoved(time.monotonic(), away_from)

    def cursor_just_moved(self) -> bool:
        """Whether the key being handled (or, without one, a command from the palette now) came
        before the person could see that the dashboard had moved the cursor to another card."""
        moved = self._cursor_moved
        pressed = self._key_pressed_at if self._key_pressed_at is not None else time.monotonic()
        return moved is not None and pressed < moved.at + CURSOR_MOVED_NOTICE_SECONDS

    def _target(self) -> Task | None:
        """The selected task, which the key acts on; None (said why) when there is none, or
        when the card under the cursor is not the one the person saw there."""
        task = self.selected_task
        if task is None:
            self.notify("select a task first", severity="warning")
            return None
        moved = self._cursor_moved
        if moved is not None and self.cursor_just_moved():
            placed = self.session.lanes.lane_index(moved.away_from)
            went = f"moved to {LANE_TITLES[placed[0]]}" if placed else "left the view"
            self.notify(
                printable(f"#{moved.away_from} {went} just as the key was pressed; the cursor is on #{task.id} now: press the key again to act on it"),
                title="Nothing done", severity="warning", timeout=6, markup=False,
            )
            return None
        return task

    def _refuse(self, message: str) -> None:
        self.notify(printable(message), title="Not changed", severity="error", timeout=6, markup=False)

    def action_start(self) -> None:
        task = self._target()
        if task is None or self._refused("start", task):
            return
        if task.status == Status.PENDING and not self.session.graph.is_ready(task.id):
            self._refuse(f"#{task.id} is not ready: {self.session.graph.why_not_ready(task)}")
            return
        self._act(task, "start", lambda store, who: actions.start(store, task.id, who))

    def action_pause(self) -> None:
        task = self._target()
        if task is None or self._refused("resume" if task.status == Status.PAUSED else "pause", task):
            return
        seconds = self.session.settings.lease.seconds
        what = "resume" if task.status == Status.PAUSED else "pause"
        self._act(task, what, lambda store, who: actions.toggle_pause(store, task.id, who, lease_seconds=seconds))

    def action_retry(self) -> None:
        task = self._target()
        if task is None or self._refused("requeue", task):
            return
        what = actions.REQUEUE_FROM[task.status]
        self._act(task, what, lambda store, who: actions.requeue(store, task.id, who))

    def action_cancel(self) -> None:
        from board.ui.screens.confirm import ConfirmScreen

        task = self._target()
        if task is None or self._refused("cancel", task):
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._act(task, "cancel", lambda store, who: actions.cancel(store, task.id, who))

        from board.worktrees.record import read_record

        worktree = read_record(task.metadata, task.id)
        if worktree is not None and not worktree.merged:
            self._cancel_with_worktree(task, worktree.path)
            return
        self.push_screen(ConfirmScreen(f"Cancel #{task.id}?", printable(task.subject), confirm_label="Cancel task"), confirmed)

    def _cancel_with_worktree(self, task: Task, path: str) -> None:
        """Cancel a task that has a worktree, asking what becomes of it: kept (its branch and
        commits stay for later), or removed (refused, with nothing done, over uncommitted work)."""
        from board.ui.screens.choice import ChoiceScreen
        from board.worktrees.on_board import worktree_ending

        def chosen(choice: str | None) -> None:
            if choice is None:
                return

            def cancel(store: Store, who: actions.Who) -> Task:
                ending = worktree_ending(store, task.id, choice)
                cancelled = actions.cancel(store, task.id, who)
                if ending is not None:
                    ending()
                return cancelled

            self._act(task, "cancel", cancel)

        detail = printable(f"{task.subject}\n\nIts worktree {path} holds its work. Remove it too? (A branch with commits not in its base is kept either way.)", multiline=True)
        choices: list[tuple[str, str, str | None]] = [("Cancel, keep worktree", "y", "keep"), ("Cancel, remove worktree", "x", "remove"), ("Keep the task", "n", None)]
        self.push_screen(ChoiceScreen(f"Cancel #{task.id}?", detail, choices), chosen)

    def action_undo_policy(self) -> None:
        task = self._target()
        if task is None:
            return
        mark = task.policy
        if mark is None or not by_policy(task):
            self._refuse(f"#{task.id} is {task.status} by a person or its agent, not by a policy; there is nothing to undo")
            return
        seconds = self.session.settings.lease.seconds
        self._act(task, f"undo {mark.name}", lambda store, who: actions.undo_policy(store, task.id, who, lease_seconds=seconds))

    def action_assign(self) -> None:
        from board.ui.screens.assign import AssignScreen

        task = self._target()
        if task is None or self._refused("assign", task):
            return
        if not self.session.graph.is_ready(task.id):
            self._refuse(f"only a ready task can be assigned; #{task.id} is not ready: {self.session.graph.why_not_ready(task)}")
            return
        if not self.session.agents:
            self._refuse("no agents are registered in .tasks/agents/")
            return

        from board.ui.screens.confirm import ConfirmScreen

        seconds = self.session.settings.lease.seconds
        stale_after = self.session.settings.agent_stale_after

        def assign(agent: str) -> None:
            self._act(task, f"assign to {agent}", lambda store, who: actions.assign(store, task.id, agent, who, lease_seconds=seconds))

        def chosen(agent: str | None) -> None:
            record = self.session.agent_record(agent)
            if agent is None or record is None:
                return
            if agent_state(record, self.session.now(), stale_after) != AgentState.STALE:
                assign(agent)
                return
            how = "stopped" if record.stopped else f"has been silent for {format_age((self.session.now() - record.heartbeat_at).total_seconds())}"
            detail = f"It will not pick the task up: its lease runs out after {seconds:g} s and the coordinator hands #{task.id} to another agent."
            self.push_screen(
                ConfirmScreen(printable(f"{agent} {how}. Assign #{task.id} to it anyway?"), detail, confirm_label="Assign anyway"),
                lambda yes: assign(agent) if yes else None,
            )

        self.push_screen(AssignScreen(task.id, self.session.agents, self.session.now(), stale_after), chosen)

    def _answer_goes_to(self, task: Task) -> str:
        """Where an answer sends ``task``, by the rule ``actions.answer`` applies."""
        return actions.answer_goes_to(task, self.session.agent_record(task.owner), self.session.now(), self.session.settings.agent_stale_after)

    def action_answer(self) -> None:
        from board.ui.screens.answer import AnswerScreen

        task = self._target()
        if task is None or self._refused("answer", task):
            return

        def answered(text: str | None) -> None:
            if text:
                seconds = self.session.settings.lease.seconds
                self._act(task, "answer", lambda store, who: actions.answer(store, task.id, text, who, lease_seconds=seconds))

        self.push_screen(AnswerScreen(task, self._answer_goes_to(task), cursor_blink=self.live_clock), answered)

    def _refused(self, move: str, task: Task) -> bool:
        """Say why ``move`` cannot be made on ``task``, if it cannot (no dialog opens then)."""
        if task.status == Status.WAITING and move in ("start", "resume", "pause", "requeue"):
            goes_to = self._answer_goes_to(task)
            self.notify(printable(f"#{task.id} waits for your answer: press w to answer it (it goes {goes_to}), or c to cancel it"), title="Needs you", severity="warning", timeout=8, markup=False)
            return True
        why = actions.refusal(move, task)
        if why is not None:
            self._refuse(why)
        return why is not None

    def _act(self, task: Task, what: str, move: Callable[[Store, actions.Who], Task]) -> None:
        """Make a move on ``task`` as the person at the keyboard, refused if the task changed
        since they pressed the key. Overriding an agent's live lease is asked about first, and
        history records it."""
        from board.ui.screens.confirm import ConfirmScreen

        person = local_user()
        seen = Seen.of(task)  # an agent's tool calls meanwhile do not make the key act on something else
        holder = actions.needs_override(task, self.session.now())
        if holder is None or holder == person:
            self.write(task.id, what, lambda store: move(store, actions.Who(person, expected_version=seen)))
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.write(task.id, what, lambda store: move(store, actions.Who(person, force=True, expected_version=seen)))

        question = f"{holder} is working on it under a live lease; it will lose the task. The board's history records that you overrode it."
        self.push_screen(ConfirmScreen(f"{what.capitalize()} #{task.id}?", question, confirm_label=f"{what.capitalize()} anyway"), confirmed)

    @work(thread=True, group="board-write")
    def write(self, task_id: str, what: str, operation: Callable[[Store], Task]) -> None:
        """Run one store write off the app thread; success shows at once, refusal as a notification."""
        try:
            read = self.session.write(operation)
        except BoardError as error:
            self.call_from_thread(self._refuse, f"{what} #{task_id}: {error}")
            return
        except OSError as error:  # a full disk, a read-only mount: the dashboard lives on
            self.call_from_thread(self._refuse, f"{what} #{task_id}: {os_error_line(error)}")
            return
        self.post_message(BoardChanged.of(read))
