"""A Stop waits for its turn's last message to reach the transcript, since Claude Code may fire
it first; a turn that ends with the same words as one before it (a lead answering each
teammate's idle message alike) must not be taken for that earlier turn."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from board.claude.hooks.handler import _wait_for_last_message, ends_with_message
from tests.hooks.delivery import wait_until
from tests.hooks.test_hook_events import fire
from tests.hooks.test_team_events import agents_json


def entry(kind: str, content: object) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}}) + "\n"


def reply(text: str) -> str:
    return entry("assistant", [{"type": "text", "text": text}])


EARLIER_TURN = entry("user", "start the team") + reply("All steps done.") + json.dumps({"type": "system", "subtype": "stop_hook_summary"}) + "\n"
TEAMMATE_MESSAGE = entry("user", 'Another Claude session sent a message: <teammate-message teammate_id="ben">idle</teammate-message>')


def test_a_stop_waits_for_its_own_turns_message_though_an_earlier_turn_said_the_same(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(EARLIER_TURN + TEAMMATE_MESSAGE)
    started = threading.Event()

    def write_the_answer_late() -> None:
        started.wait()
        time.sleep(0.3)
        with transcript.open("a") as handle:
            handle.write(reply("All steps done."))

    writer = threading.Thread(target=write_the_answer_late)
    writer.start()
    started.set()
    try:
        _wait_for_last_message(transcript, "All steps done.")
        assert transcript.read_text().count("All steps done.") == 2, "the Stop went on before its turn's answer was in the transcript"
    finally:
        writer.join()


def test_the_last_turn_is_what_follows_the_last_user_entry() -> None:
    turn = EARLIER_TURN + TEAMMATE_MESSAGE
    assert not ends_with_message(turn.encode(), "All steps done.")
    assert ends_with_message((turn + reply("All steps done.")).encode(), "All steps done.")
    tool_turn = entry("assistant", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]) + entry("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
    assert ends_with_message((tool_turn + reply("Done, with the tests green.") + '{"type": "system"}\n').encode(), "Done, with the tests green.")
    # A line cut in half at the front of the tail, and lines that are not entries, are skipped.
    assert ends_with_message(('"type": "user"}\n[1]\n' + reply("Done.")).encode(), "Done.")
    assert not ends_with_message(reply("Something else.").encode(), "Done.")


def test_a_stop_whose_message_never_comes_goes_on_after_a_bounded_wait(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(EARLIER_TURN + TEAMMATE_MESSAGE)
    began = time.monotonic()
    _wait_for_last_message(transcript, "All steps done.")
    assert time.monotonic() - began < 30  # bounded (2 s), even on a loaded machine
    _wait_for_last_message(tmp_path / "missing.jsonl", "All steps done.")  # no transcript: no wait


def assistant(text: str, message_id: str, input_tokens: int) -> str:
    usage = {"input_tokens": input_tokens, "output_tokens": 7, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    message = {"id": message_id, "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}], "usage": usage}
    return json.dumps({"type": "assistant", "requestId": f"req_{message_id}", "timestamp": "2026-01-01T00:00:00.000Z", "message": message}) + "\n"


def test_a_turn_written_only_after_its_stop_is_still_counted(hooked: Path, tmp_path: Path) -> None:
    """Claude Code can write a turn (a teammate's message and the answer to it) after that turn's
    Stop hook has run, and no later event need come: the Stop's own look finds the earlier turn,
    which ended with the same words, so a second look must follow once the transcript grows."""
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(entry("user", "start the team") + assistant("All steps done.", "msg_1", 100))
    stopped = fire(hooked, "Stop", env={"BOARD_AGENT": "lead"}, transcript_path=str(transcript), last_assistant_message="All steps done.")
    assert (stopped.returncode, stopped.stderr) == (0, "")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOARD_", "CLAUDE_"))}
    assert agents_json(hooked, env)["agents"][0]["tokens"]["input"] == 100
    with transcript.open("a") as handle:
        handle.write(TEAMMATE_MESSAGE + assistant("All steps done.", "msg_2", 20))
    wait_until(lambda: agents_json(hooked, env)["agents"][0]["tokens"]["input"] == 120, what="the turn written after its Stop counted", timeout=30)


def test_a_fifo_where_the_transcript_is_said_to_be_is_never_waited_on(tmp_path: Path) -> None:
    """The event names the transcript: a FIFO there held the hook, and the agent's turn, for
    ever (it has no writer). It is no transcript: the wait ends as for a message that never came."""
    transcript = tmp_path / "session.jsonl"
    os.mkfifo(transcript)
    done = threading.Event()
    waiter = threading.Thread(target=lambda: (_wait_for_last_message(transcript, "All steps done."), done.set()), daemon=True)
    waiter.start()
    assert done.wait(30), "the hook waited on the FIFO"
