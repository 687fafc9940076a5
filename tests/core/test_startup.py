"""Start-up cost of the command line: a hook or script runs board often, so what a command
imports before it runs must be only what it needs. (How fast it is, is measured in
tests/bench/bench_startup.py; these tests check what is loaded, which a slow import breaks.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from board.errors import GraphError, LeaseHeld, NotReady, StaleLease, VersionConflict
from board.store import Store
from tests.conftest import REPO

#: Modules no command needs before it knows which command runs.
HEAVY = (
    "pydantic", "pydantic_core", "textual", "board.model", "board.store.base", "board.store.files", "board.graph", "board.alerts", "board.gitstate",
    "board.config", "board.actions", "mcp", "anyio", "board.mcp.server",
)


def modules_after(code: str) -> set[str]:
    """The modules loaded once ``code`` has run in a fresh interpreter."""
    probe = f"import sys\n{code}\nimport json\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    modules = modules - {"pydantic.plugin._loader"}  # the command line's stand-in (board.cli.startup), not pydantic's
    return sorted(name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY))


def test_building_the_parser_loads_no_store_model_or_ui() -> None:
    assert heavy_in(modules_after("from board.cli import build_parser; build_parser()")) == []


def test_the_dashboard_loads_none_of_the_coordinator_it_only_asks_about() -> None:
    """The dashboard asks whether a coordinator runs; the coordinator's tick, workers and run
    supervisor stay out of its process (and of its start-up time)."""
    loaded = modules_after("import board.ui.app")
    assert "board.coordinator.presence" in loaded
    assert sorted(name for name in loaded if name.startswith("board.coordinator.") and name != "board.coordinator.presence") == []


def test_the_dashboard_draws_its_first_frame_without_loading_what_comes_after_it() -> None:
    """Alerts are judged once the whole board is read, in a worker: their detectors, git and
    worktrees (15 ms of imports) load then, not before the first frame; so do what tells the
    person, a task's checkpoints, a worktree's record and the TOML reader (for settings and
    themes that a board has, and this one has not). What the alerts' package lends stays
    reachable from it."""
    loaded = modules_after("import board.ui.app")
    assert "board.alerts.model" in loaded and "board.ui.session" in loaded
    later = ["board.alerts.evaluate", "board.alerts.detectors", "board.gitstate", "board.notify", "board.checkpoints", "board.worktrees.record", "tomllib"]
    assert [name for name in later if name in loaded] == []
    lent = modules_after("from board.alerts import refresh_alerts, AlertInputs, read_alerts\nimport board.alerts as alerts\nassert alerts.detect_all.__module__ == 'board.alerts.evaluate'")
    assert "board.alerts.evaluate" in lent
    with pytest.raises(subprocess.CalledProcessError):
        modules_after("from board.alerts import no_such_name")


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["task", "--help"], ["toolcall", "--help"], ["mcp", "--help"]])
def test_version_and_help_load_no_store_model_or_ui(argv: list[str]) -> None:
    code = f"from board.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    assert heavy_in(modules_after(code)) == []


def test_a_bad_argument_is_refused_before_the_store_is_loaded() -> None:
    code = "from board.cli import main\ntry:\n    main(['toolcall', '../x', 'Edit'])\nexcept SystemExit:\n    pass"
    assert heavy_in(modules_after(code)) == []


def test_the_command_map_names_the_module_that_registers_each_command() -> None:
    from board.cli.parser import COMMANDS, _Parser, command_modules, common_options

    registered = {}
    for module in command_modules():
        commands = _Parser().add_subparsers(dest="command")
        commands.common = common_options()  # type: ignore[attr-defined]
        module.register(commands)
        registered.update(dict.fromkeys(commands.choices, module.__name__.rsplit(".", 1)[1]))
    assert registered == COMMANDS


@pytest.mark.parametrize("argv", [["toolcall", "--help"], ["-w", ".", "--json", "heartbeat", "--help"], ["task", "list", "--help"]])
def test_a_command_loads_only_its_own_command_module(argv: list[str]) -> None:
    code = f"from board.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
    loaded = {name for name in modules_after(code) if name.startswith("board.cli.")}
    assert loaded <= {"board.cli.parser", "board.cli.startup", "board.cli.arguments", "board.cli.output", "board.cli.opening", "board.cli.tasks", "board.cli.leases"}
    assert "board.cli.run" not in loaded and "board.cli.mcp" not in loaded


def test_what_a_command_alone_cannot_parse_is_parsed_by_the_whole_parser(workspace: Path) -> None:
    run_board(workspace, "task", "create", "first")
    # An abbreviated option before the command: its value looks like a command word.
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "board", "--work", str(workspace), "task", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "first" in done.stdout, done.stderr
    assert run_board(workspace, "task", "lst").stderr.strip() == "board task: 'lst' is not a command (see 'board task --help')"
    assert run_board(workspace, "claim").stderr.strip() == "board claim: the following arguments are required: --agent (see 'board claim --help')"


def test_commands_skip_pydantics_plugin_search_and_keep_its_loader_whole() -> None:
    # The MCP server's models (its SDK's) are pydantic models, built on the first use.
    model = "from pydantic import BaseModel\nclass Shown(BaseModel):\n    name: str = ''\nShown()"
    loaded = modules_after(f"from board.cli.startup import skip_pydantic_plugins\nskip_pydantic_plugins()\n{model}")
    assert "pydantic.main" in loaded and "importlib.metadata" not in loaded
    code = "from board.cli.startup import skip_pydantic_plugins\nskip_pydantic_plugins()\nfrom pydantic.plugin import _loader as loader\nprint(loader.PYDANTIC_ENTRY_POINT_GROUP, list(loader.get_plugins()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["pydantic", "[]"]


@pytest.mark.parametrize(
    "argv",
    [
        ["toolcall", "1", "Edit", "--agent", "a-new-one"],  # first heard of: the store makes its record
        ["heartbeat", "--agent", "a1"],
        ["task", "update", "2", "--progress", "5"],
        ["task", "list"],
        ["claim", "--agent", "a2"],
    ],
)
def test_the_commands_scripts_run_often_load_pydantics_core_but_not_its_models(workspace: Path, argv: list[str]) -> None:
    """pydantic's models cost four times its core to import: the task documents are written on
    the core (board/document.py), and nothing a frequent command reads may bring the models in."""
    for command in (["task", "create", "first"], ["task", "create", "second"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main({argv!r}) == 0"
    loaded = modules_after(code)
    assert "board.model" in loaded and "pydantic_core._pydantic_core" in loaded  # it did read tasks
    assert "pydantic.main" not in loaded and "pydantic" not in loaded


def test_a_heartbeat_from_an_agent_already_known_does_not_load_sockets(workspace: Path) -> None:
    """The host's name goes into an agent's record when it is first heard from; a heartbeat
    after that starts without the socket module."""
    for command in (["task", "create", "first"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main(['heartbeat', '--agent', 'a1']) == 0"
    assert "socket" not in modules_after(code)
    assert Store.open(workspace).agent_records.read("a1")["host"]  # type: ignore[index]


def test_showing_a_task_does_not_load_openssl(workspace: Path) -> None:
    """``hashlib`` (OpenSSL) names a transcript's state file, which ``task show`` never needs."""
    assert run_board(workspace, "task", "create", "first").returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main(['task', 'show', '1']) == 0"
    assert "hashlib" not in modules_after(code)


def test_the_dashboard_loads_pydantics_core_but_not_its_models() -> None:
    """Settings, themes and agent records are documents on the core, as tasks are: the
    dashboard's start does not pay for pydantic's models."""
    loaded = modules_after("import board.ui.app\nfrom board.config import BoardSettings\nBoardSettings()")
    assert "board.agent_record" in loaded and "board.ui.themes" in loaded and "pydantic_core._pydantic_core" in loaded
    assert "pydantic.main" not in loaded and "pydantic" not in loaded
    assert "pydantic_core.core_schema" not in loaded


@pytest.mark.parametrize(
    "argv",
    [
        ["task", "show", "1"],
        ["claim", "--agent", "a1"],  # refused: it holds one
        ["task", "list"],
        ["claim", "--agent", "a2"],
        ["heartbeat", "--agent", "a1"],
        ["task", "update", "2", "--progress", "40"],
        ["task", "create", "third", "--blocked-by", "1"],
        ["task", "update", "2", "--status", "cancelled"],
    ],
)
def test_commands_about_a_task_load_the_compiled_core_without_its_typing_helpers(workspace: Path, argv: list[str]) -> None:
    """The core's package spends most of its import on typing helpers for schemas board builds
    itself (board/document_schema.py): a command that reads tasks loads the compiled core alone,
    and one that writes a few writes them without the core's serializer, which would ask the
    package for a sentinel the first time it runs (board/document_json.py)."""
    for command in (["task", "create", "first"], ["task", "create", "second"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    refused = argv == ["claim", "--agent", "a1"]  # it holds one already
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main({argv!r}) == {2 if refused else 0}"
    loaded = modules_after(code)
    assert "board.model" in loaded and "pydantic_core._pydantic_core" in loaded
    assert "pydantic_core" not in loaded and "pydantic_core.core_schema" not in loaded and "typing_extensions" not in loaded


@pytest.mark.parametrize(
    "argv",
    [
        ["task", "show", "1"],
        ["claim", "--agent", "a1"],  # refused: it holds one
        ["claim", "--agent", "a2"],
        ["heartbeat", "--agent", "a1"],
        ["task", "update", "2", "--progress", "40"],
    ],
)
def test_commands_about_a_task_load_no_module_they_do_not_use(workspace: Path, argv: list[str]) -> None:
    """Each of these costs a command about one task about half a millisecond, and none is used
    by one: ``threading`` (its locks come from ``_thread``), ``ctypes`` (a process's first write
    renames, with no spare to exchange), ``copy`` (a task's copy copies JSON itself), ``random``
    (the lock's jitter), ``signal`` and ``struct`` (only for spares recycled and lifetime locks),
    ``weakref`` (descriptors kept open close in ``__del__``), a Claude Code list's modules."""
    for command in (["task", "create", "first"], ["task", "create", "second"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    refused = argv == ["claim", "--agent", "a1"]
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main({argv!r}) == {2 if refused else 0}"
    loaded = modules_after(code)
    assert "board.store.files.state" in loaded and "board.disk.atomic" in loaded
    assert not {"threading", "ctypes", "copy", "random", "signal", "struct", "weakref", "shutil", "board.store.claude", "board.store.files.mirror"} & loaded
    if argv[0] != "task":  # an agent's own commands open the board without the task commands and how they show tasks
        assert not {"board.cli.tasks", "board.present"} & loaded


@pytest.mark.parametrize("columns", [None, "120", "0", "-3", "wide", "81"])
def test_the_parsers_width_is_the_terminals_as_shutil_tells_it(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    """argparse asked ``shutil`` for the width of every formatter it built (shutil, bz2, lzma:
    1.5-3 ms of every command): the parser works it out the same way without them."""
    import shutil

    from board.cli.parser import build_parser, terminal_width

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_width() == shutil.get_terminal_size().columns
    assert build_parser()._get_formatter()._width == shutil.get_terminal_size().columns - 2  # as argparse's own formatter has it


def test_a_tool_call_on_a_board_in_files_loads_neither_pydantic_nor_the_store(workspace: Path) -> None:
    """``board toolcall`` is what a script runs after every step of an agent: on a board in
    files it reads the task's file and appends to its log as ``board hook`` does."""
    for command in (["task", "create", "first"], ["claim", "--agent", "a1"], ["toolcall", "1", "Read", "--agent", "a1", "--failed"]):
        assert run_board(workspace, *command).returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main(['toolcall', '1', 'Edit', '--agent', 'a1', '--file', 'src/a.py', '--ms', '12']) == 0"
    assert heavy_in(modules_after(code)) == []
    calls = Store.open(workspace).get("1").tool_calls
    assert (calls.total, calls.ok, calls.failed, calls.last_tool) == (2, 1, 1, "Edit")
    token = Store.open(workspace).get("1").lease.token  # type: ignore[union-attr]
    said = run_board(workspace, "toolcall", "1", "Bash", "--agent", "a1", "--token", str(token))
    assert said.returncode == 0 and said.stdout == "#1 3 tool calls (1 failed)\n"
    stale = run_board(workspace, "toolcall", "1", "Bash", "--agent", "a1", "--token", str(token + 1))
    assert stale.returncode == 2 and "your lease token for task 1 is stale" in stale.stderr
    logged = Store.open(workspace).toolcalls("1")
    assert len(logged) == 3 and (logged[1]["files"], logged[1]["ms"], logged[1]["agent"]) == (["src/a.py"], 12, "a1")


def test_help_still_lists_every_command_with_its_help() -> None:
    from board.cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command")
    text = parser.format_help()
    for choice in commands._choices_actions:
        assert choice.dest in text and choice.help.split()[0] in text
    assert {"task", "claim", "heartbeat", "release", "toolcall", "check", "alerts", "ui"} <= set(commands.choices)


def test_the_store_package_loads_the_store_only_when_asked() -> None:
    loaded = modules_after("import board.store; board.store.DEFAULT_LEASE_SECONDS")
    assert "board.store.base" not in loaded and "board.store.files" not in loaded
    assert "board.store.base" in modules_after("from board.store import Store")


# -- commands about one task read that task, not the board ------------------------------------


def _board_with_a_broken_neighbour(workspace: Path) -> Store:
    store = Store.open(workspace)
    store.create("first")
    store.create("second", blocked_by=["1"])
    store.claim("alice", lease_seconds=600)
    (workspace / ".tasks" / "task_9.json").write_text('{"id": "9", "subject": ')
    return store


def test_a_one_task_store_reads_only_the_task_asked_for(workspace: Path) -> None:
    _board_with_a_broken_neighbour(workspace)
    store = Store.open(workspace, whole=False)
    task = store.record_toolcall("1", "Edit", agent="alice")
    assert task.tool_calls.total == 1
    assert set(store.graph.tasks) == {"1"} and store.invalid == {}  # task 2 and the broken 9 were never read
    assert Store.open(workspace).get("1").tool_calls.total == 1


def test_one_task_commands_work_beside_a_broken_file_and_leave_it_reported(workspace: Path) -> None:
    _board_with_a_broken_neighbour(workspace)
    broken = (workspace / ".tasks" / "task_9.json").read_bytes()
    for argv in (["toolcall", "1", "Edit"], ["task", "update", "2", "--progress", "40"], ["release", "1", "--force"]):
        done = run_board(workspace, *argv)
        assert done.returncode == 0, done.stderr
    assert Store.open(workspace).get("2").progress == 40
    assert (workspace / ".tasks" / "task_9.json").read_bytes() == broken
    check = run_board(workspace, "check")
    assert check.returncode == 1 and "task_9.json" in check.stdout


def test_a_one_task_command_on_a_broken_file_names_the_file(workspace: Path) -> None:
    _board_with_a_broken_neighbour(workspace)
    for argv in (["toolcall", "9", "Edit"], ["task", "update", "9", "--progress", "5"]):
        done = run_board(workspace, *argv)
        assert done.returncode == 2 and "task_9.json" in done.stderr and "not valid JSON" in done.stderr
    assert run_board(workspace, "toolcall", "12", "Edit").stderr.strip() == "board: no task with id '12'"


def test_a_one_task_store_keeps_fencing_compare_and_set_and_outside_edit_detection(workspace: Path) -> None:
    claimed = _board_with_a_broken_neighbour(workspace).get("1")
    assert claimed.lease is not None
    with pytest.raises(StaleLease):
        Store.open(workspace, whole=False).record_toolcall("1", "Edit", token=claimed.lease.token - 1)
    with pytest.raises(LeaseHeld):
        Store.open(workspace, whole=False).update("1", progress=50)  # no token under a live lease
    path = workspace / ".tasks" / "task_2.json"
    path.write_text(path.read_text().replace('"subject": "second"', '"subject": "edited by hand"'))
    store = Store.open(workspace, whole=False)
    store.update("2", progress=10)
    assert [r["op"] for r in store.history("2")][-2:] == ["outside edit", "update"]
    with pytest.raises(VersionConflict):
        Store.open(workspace, whole=False).update("2", subject="renamed", expected_version=7)
    assert Store.open(workspace).get("2").subject == "edited by hand"


def test_what_needs_the_board_reads_all_of_it_on_a_one_task_store(workspace: Path) -> None:
    _board_with_a_broken_neighbour(workspace)
    store = Store.open(workspace, whole=False)
    with pytest.raises(NotReady):
        store.set_status("2", "in_progress", owner="bob")  # its blocker #1 is read and still open
    assert {"1", "2"} <= set(store.graph.tasks) and store.invalid  # the whole board, broken file included
    store = Store.open(workspace, whole=False)
    with pytest.raises(GraphError):
        store.link([("1", "2")])  # 2 already waits on 1: a cycle
    assert set(Store.open(workspace, whole=False).tasks) == {"1", "2"}


def run_board(workspace: Path, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "board", "-w", str(workspace), *argv], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize(
    "argv",
    [["task", "show", "1"], ["task", "list"], ["heartbeat", "--agent", "a1"], ["task", "update", "2", "--progress", "40"], ["claim", "--agent", "a2"]],
)
def test_commands_about_a_task_do_not_load_dataclasses(workspace: Path, argv: list[str]) -> None:
    """``dataclasses`` brings ``inspect`` (and ``ast``, ``dis``, ``tokenize``) with it: 6 ms of
    a command about one task. The records on its way (a move's ``Who`` and ``TaskChange``
    among them) are named tuples."""
    for command in (["task", "create", "first"], ["task", "create", "second"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main({argv!r}) == 0"
    loaded = modules_after(code)
    assert "board.store.files.state" in loaded  # the store whose records these are was loaded
    assert "dataclasses" not in loaded and "inspect" not in loaded


@pytest.mark.parametrize("argv", [["task", "show", "1"], ["hook"]])
def test_a_command_ends_without_the_collectors_last_passes_over_what_it_loaded(workspace: Path, argv: list[str]) -> None:
    """At exit the garbage collector would walk every object a command made, the store and the
    pydantic core with them: 2.5 to 4 ms of a command about one task, or of a hook. The last exit
    handler freezes them, so that they are freed as the interpreter lets go of its modules and
    no collection walks them. (An exit handler registered before the command runs after it.)"""
    assert run_board(workspace, "task", "create", "first").returncode == 0
    probe = (
        "import atexit, gc, os\n"
        f"os.chdir({str(workspace)!r})\n"
        "atexit.register(lambda: os.write(1, b'\\nfrozen %d' % gc.get_freeze_count()))\n"
        "from board.cli import main\n"
        f"main({argv!r})\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", probe], input="{}", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.rsplit("frozen ", 1)[1]) > 10_000


@pytest.mark.parametrize("argv", [["task", "show", "1"], ["heartbeat", "--agent", "a1"], ["task", "update", "1", "--progress", "40", "--token", "TOKEN"]])
def test_commands_about_a_task_make_no_validator_they_do_not_use(workspace: Path, argv: list[str]) -> None:
    """A task's validator and serializer hold its lease's, budget's and policy mark's schemas,
    so those documents' own are made only when one is checked or written by itself."""
    assert run_board(workspace, "task", "create", "first").returncode == 0
    task_id, token = run_board(workspace, "claim", "--agent", "a1").stdout.split("\t")[:2]
    argv = [token if part == "TOKEN" else part for part in argv]
    assert task_id == "1"
    probe = (
        f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main({argv!r}) == 0\n"
        "from board.document import _MadeOnFirstUse\nfrom board import model\n"
        "print(sorted(f'{kind.__name__}.{part}' for kind in (model.Task, model.Lease, model.Budget, model.PolicyMark) for part in ('__pydantic_validator__', '__pydantic_serializer__') if not isinstance(vars(kind)[part], _MadeOnFirstUse)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "['Task.__pydantic_validator__']"


def test_a_document_made_on_first_use_validates_as_its_own_class_in_a_subclass_too() -> None:
    from board.document import Document, constrained_str, field

    class Outer(Document):
        name: str = field(constrained_str(min_length=1))

    class Inner(Outer):
        size: int = field({"type": "int"}, default=0)

    from board.document_schema import ValidationError

    assert Inner.model_validate({"name": "a", "size": 3}).size == 3  # the subclass's own validator, made first
    with pytest.raises(ValidationError):
        Inner.model_validate({"name": "a", "size": "many"})
    assert Outer.model_validate({"name": "b", "size": "many"}).model_extra == {"size": "many"}  # not a field of its own
    assert Outer(name="c").model_dump() == {"name": "c"} and Inner(name="d").model_dump() == {"name": "d", "size": 0}


@pytest.mark.parametrize("argv", [["task", "show", "1"], ["heartbeat", "--agent", "a1"], ["claim", "--agent", "a2"], ["toolcall", "1", "Edit", "--agent", "a1"]])
def test_commands_about_a_task_compile_no_source_as_they_start(workspace: Path, argv: list[str]) -> None:
    """``typing.NamedTuple`` compiled each field's annotation (text, in modules written with
    ``from __future__ import annotations``) and ``collections.namedtuple`` its ``__new__``:
    1.9 ms of a heartbeat, 0.9 of it the first compile in the process. board's records are
    built without compiling (``board.records``); the standard library's own named tuples are
    loaded before the count starts."""
    for command in (["task", "create", "first"], ["task", "create", "second"], ["claim", "--agent", "a1"]):
        assert run_board(workspace, *command).returncode == 0
    probe = (
        "import sys, functools, shutil, socket, urllib.parse\n"  # what the standard library compiles of its own
        f"import os\nos.chdir({str(workspace)!r})\n"
        "compiled = []\n"
        "sys.addaudithook(lambda event, args: compiled.append(args[0]) if event == 'compile' and not str(args[1]).endswith('.py') else None)\n"
        f"from board.cli import main\nmain({argv!r})\n"
        "print(repr(compiled))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "argv, collects",
    [
        (["heartbeat", "--agent", "a1"], False),
        (["-w", ".", "task", "show", "1"], False),
        (["claim", "--agent", "a2"], False),
        (["hook"], False),
        (["task", "list"], True),
        (["check"], True),
    ],
)
def test_the_commands_agents_run_most_run_without_the_cyclic_collector(workspace: Path, argv: list[str], collects: bool) -> None:
    """Brief and bounded, a command about one task (and a hook) runs without the collector,
    whose passes over what its imports made were 1.5-2.5 ms of it; every other command collects
    as usual, and a caller of ``main`` finds the collector as it left it."""
    assert run_board(workspace, "task", "create", "first").returncode == 0
    assert run_board(workspace, "claim", "--agent", "a1").returncode == 0
    probe = (
        f"import gc, os\nos.chdir({str(workspace)!r})\n"
        "passes = []\ngc.callbacks.append(lambda phase, info: passes.append(info) if phase == 'start' else None)\n"
        f"from board.cli import main\npasses.clear()\nmain({argv!r})\n"
        "print(len(passes), gc.isenabled())"
    )
    done = subprocess.run([sys.executable, "-c", probe], input="{}", capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr
    passes, enabled = done.stdout.split()[-2:]
    assert (int(passes) > 0) == collects and enabled == "True"


def test_showing_a_task_reads_its_tokens_with_the_transcript_reader_only_when_it_has_some(workspace: Path) -> None:
    """Most tasks never had a message counted: ``task show`` prices none without loading
    Claude Code's transcript reader, and one with a tokens log as before."""
    for command in (["task", "create", "first"], ["task", "create", "second", "--budget-tokens", "3000"]):
        assert run_board(workspace, *command).returncode == 0
    code = f"import os\nos.chdir({str(workspace)!r})\nfrom board.cli import main\nassert main(['task', 'show', '1']) == 0"
    assert "board.claude.transcripts" not in modules_after(code)
    assert "  budget     -\n" in run_board(workspace, "task", "show", "1").stdout
    logged = workspace / ".tasks" / "tokens"
    logged.mkdir()
    (logged / "2.jsonl").write_text(json.dumps({"model": "claude-sonnet-4-5", "input": 1200, "output": 300, "cacheWrite": 0, "cacheRead": 0}) + "\n")
    shown = {task_id: json.loads(run_board(workspace, "task", "show", task_id, "--json").stdout)["tokens"] for task_id in ("1", "2")}
    assert shown["1"]["total"] == 0 and shown["2"]["total"] == 1500 and shown["2"]["input"] == 1200
    assert "  budget     3,000 tokens (50% spent)\n" in run_board(workspace, "task", "show", "2").stdout
