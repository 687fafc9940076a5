import json
import subprocess
import sys
from pathlib import Path

from board.status import Status
from board.store import Store

from tests.conftest import REPO, SAMPLE


def test_sample_shows_every_status_and_is_clean(sample: Path) -> None:
    store = Store.open(sample)
    statuses = {t.status for t in store.tasks.values()}
    assert statuses == set(Status)
    assert 25 <= len(store.tasks) <= 40
    assert store.check() == []
    assert len(set(store.graph.waves().values())) >= 4
    assert any(t.parent for t in store.tasks.values())
    assert store.graph.ready_ids()


def test_sample_matches_its_build_script(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(REPO / "tests" / "build_sample_workspace.py"), str(tmp_path / "rebuilt")], check=True, cwd=REPO)
    for original in sorted((SAMPLE / ".tasks").glob("task_*.json")):
        rebuilt = tmp_path / "rebuilt" / ".tasks" / original.name
        assert json.loads(rebuilt.read_text()) == json.loads(original.read_text()), original.name
