"""``board hooks install`` / ``uninstall`` on a settings file that is the user's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

USERS_OWN = {
    "permissions": {"allow": ["Bash(npm test)", "Read(./src/**)"], "deny": ["Bash(rm -rf *)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "prettier --write \"$CLAUDE_FILE\""}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/guard.sh", "timeout": 5}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send 'Claude'"}]}],
    },
    "env": {"DEBUG": "1"},
    "model": "opus",
}
HTTP_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}
EVENTS_INSTALLED = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "UserPromptSubmit", "SessionEnd", "Stop", "SubagentStart", "SubagentStop", "TeammateIdle", "TaskCreated", "TaskCompleted"}


def boards_entry(entry: dict) -> str | None:
    """How a hook entry reaches board: "command" (``board hook``), "http" (board's server on
    127.0.0.1), or None (not board's)."""
    if entry.get("type") == "command" and entry["command"].endswith("board hook"):
        return "command"
    if entry.get("type") == "http" and entry["url"].startswith("http://127.0.0.1:") and entry["url"].endswith("/board/hook"):
        return "http"
    return None


def board(workspace: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "board", "-w", str(workspace), *args], capture_output=True, text=True, timeout=60, env={**os.environ, **(env or {})}
    )


def test_install_keeps_the_users_settings_twice_changes_nothing_and_uninstall_takes_only_boards(workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USERS_OWN, indent=4))
    assert board(workspace, "hooks", "install").returncode == 0
    installed = json.loads(settings.read_text())
    # Everything of the user's is still there, in its order, and board's entry follows theirs.
    assert list(installed) == list(USERS_OWN)
    assert {k: v for k, v in installed.items() if k != "hooks"} == {k: v for k, v in USERS_OWN.items() if k != "hooks"}
    for event, groups in USERS_OWN["hooks"].items():
        assert installed["hooks"][event][: len(groups)] == groups
    events = {event: boards_entry(h) for event, groups in installed["hooks"].items() for g in groups for h in g["hooks"] if boards_entry(h)}
    assert events == {event: "http" if event in HTTP_EVENTS else "command" for event in EVENTS_INSTALLED}
    # The hook's environment travels in headers Claude Code fills from its own, never a value
    # written into the file.
    post = installed["hooks"]["PostToolUse"][-1]["hooks"][0]
    assert post["headers"]["Board-Env-BOARD_AGENT"] == "${BOARD_AGENT}" and "BOARD_AGENT" in post["allowedEnvVars"]
    assert all(value == f"${{{name.removeprefix('Board-Env-')}}}" for name, value in post["headers"].items())
    # Not the database's URL: it may hold a password, and the port may be another user's.
    assert "BOARD_DB" not in post["allowedEnvVars"] and not any("BOARD_DB" in name for name in post["headers"])
    assert [g["matcher"] for g in installed["hooks"]["PreToolUse"]] == ["Bash", "Edit|MultiEdit|NotebookEdit|Write"]

    before = settings.read_bytes()
    again = board(workspace, "hooks", "install")
    assert again.returncode == 0 and "nothing changed" in again.stdout
    assert settings.read_bytes() == before

    assert board(workspace, "hooks", "uninstall").returncode == 0
    assert json.loads(settings.read_text()) == USERS_OWN


def test_install_keeps_its_port_switches_between_command_and_http_and_uninstall_takes_either(workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    assert board(workspace, "hooks", "install", "--port", "23456").returncode == 0
    urls = {h["url"] for groups in json.loads(settings.read_text())["hooks"].values() for g in groups for h in g["hooks"] if "url" in h}
    assert urls == {"http://127.0.0.1:23456/board/hook"}
    before = settings.read_bytes()
    assert "nothing changed" in board(workspace, "hooks", "install").stdout  # the port it has is kept
    assert settings.read_bytes() == before
    assert board(workspace, "hooks", "install", "--command").returncode == 0
    kinds = {boards_entry(h) for groups in json.loads(settings.read_text())["hooks"].values() for g in groups for h in g["hooks"]}
    assert kinds == {"command"}
    assert board(workspace, "hooks", "install").returncode == 0
    assert board(workspace, "hooks", "uninstall").returncode == 0
    assert json.loads(settings.read_text()) == {}


def test_a_broken_settings_file_is_one_line_and_left_as_it_is(workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": [oops')
    for action in ("install", "uninstall"):
        result = board(workspace, "hooks", action)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not valid JSON" in result.stderr
    assert settings.read_text() == '{"hooks": [oops'


def test_user_settings_follow_claude_config_dir(workspace: Path, tmp_path_factory) -> None:
    home = tmp_path_factory.mktemp("claude-home")
    result = board(workspace, "hooks", "install", "--user", "--json", env={"CLAUDE_CONFIG_DIR": str(home)})
    assert result.returncode == 0 and json.loads(result.stdout)["settings"] == str(home / "settings.json")
    assert "board hook" in (home / "settings.json").read_text()
    assert not (workspace / ".claude").exists()
    board(workspace, "hooks", "uninstall", "--user", env={"CLAUDE_CONFIG_DIR": str(home)})
    assert json.loads((home / "settings.json").read_text()) == {}


def test_install_adds_the_hooks_to_settings_that_have_none_yet(workspace: Path, tmp_path_factory) -> None:
    """The usual project file: permissions only, no "hooks" key (or an empty object)."""
    home = tmp_path_factory.mktemp("claude-home")
    cases = [
        (workspace / ".claude" / "settings.json", (), {"permissions": {"allow": ["Bash(npm test)"]}}),
        (home / "settings.json", ("--user",), {}),
    ]
    for settings, user, content in cases:
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps(content))
        result = board(workspace, "hooks", "install", *user, env={"CLAUDE_CONFIG_DIR": str(home)})
        assert result.returncode == 0 and "nothing changed" not in result.stdout, result.stdout
        installed = json.loads(settings.read_text())
        assert {k: v for k, v in installed.items() if k != "hooks"} == content
        assert sorted(installed["hooks"]) == sorted(EVENTS_INSTALLED)
        for groups in installed["hooks"].values():
            assert [boards_entry(h) is not None for g in groups for h in g["hooks"]] == [True]
        assert board(workspace, "hooks", "uninstall", *user, env={"CLAUDE_CONFIG_DIR": str(home)}).returncode == 0
        assert json.loads(settings.read_text()) == content


def test_install_says_a_session_started_in_a_sub_folder_needs_the_users_hooks(workspace: Path, tmp_path_factory) -> None:
    home = {"CLAUDE_CONFIG_DIR": str(tmp_path_factory.mktemp("claude-home"))}
    for _ in range(2):  # installed, then already there: said both times
        said = board(workspace, "hooks", "install").stdout
        assert f"only for a session started in {workspace}, not in a sub-folder" in said and "board hooks install --user" in said, said
    assert json.loads(board(workspace, "hooks", "install", "--json").stdout)["note"].startswith("Claude Code loads them only")
    user = board(workspace, "hooks", "install", "--user", env=home)
    assert user.returncode == 0 and "sub-folder" not in user.stdout


def test_install_writes_nothing_through_a_file_planted_beside_the_settings(workspace: Path, tmp_path: Path) -> None:
    """A co-tenant who can write in the settings' folder plants a link under the name the
    writer gave its temp file: the file it points at is left as it was, and the settings take
    the new hooks in a file of their own, with the old one's permissions."""
    from board.claude.hooks.install import install, uninstall

    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USERS_OWN))
    settings.chmod(0o600)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own\n")
    # The name was the pid's: installed in this process, the writer's was exactly this one.
    os.symlink(victim, settings.with_name(f".{settings.name}.{os.getpid()}.tmp"))
    assert install(settings, http=False) is True
    assert victim.read_text() == "the user's own\n"
    assert not settings.is_symlink() and settings.stat().st_mode & 0o777 == 0o600
    written = json.loads(settings.read_text())
    assert written["permissions"] == USERS_OWN["permissions"] and {boards_entry(h) for e in written["hooks"]["PreToolUse"] for h in e["hooks"]} >= {"command"}
    assert uninstall(settings) is True
    assert json.loads(settings.read_text()) == USERS_OWN and victim.read_text() == "the user's own\n"


def test_a_fifo_in_place_of_the_settings_is_one_line_and_a_linked_one_is_read(workspace: Path, tmp_path: Path) -> None:
    """A FIFO planted as the settings file is refused at once (it was waited on for ever); a
    settings file linked from a dotfiles folder is read and its hooks installed."""
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    os.mkfifo(settings)
    done = board(workspace, "hooks", "install", "--command")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1 and "FIFO" in done.stderr, done.stderr
    settings.unlink()
    dotfiles = tmp_path / "dotfiles-settings.json"
    dotfiles.write_text(json.dumps(USERS_OWN))
    settings.symlink_to(dotfiles)
    done = board(workspace, "hooks", "install", "--command")
    assert done.returncode == 0, done.stderr
    written = json.loads(settings.read_text())
    assert written["permissions"] == USERS_OWN["permissions"] and "SessionStart" in written["hooks"]
