"""``board checkpoint`` and ``board resume``: save where a task stands, and pick it up again."""

from __future__ import annotations

import argparse
from typing import Any

from board.cli.parser import add_command
from board.cli.output import print_json
from board.cli.arguments import task_id
from board.cli.opening import open_store

#: Position of these commands in --help.
ORDER = 25


def register(commands: argparse._SubParsersAction) -> None:
    checkpoint = add_command(commands, "checkpoint", "record where a task stands (document, git HEAD, file hashes, a resume note)")
    checkpoint.add_argument("id", type=task_id, help="the task to checkpoint")
    checkpoint.add_argument("--note", default="", help="what to do next, for whoever resumes the task")
    checkpoint.add_argument("--list", action="store_true", help="list the task's checkpoints instead, saying which are corrupt")
    checkpoint.set_defaults(handler=cmd_checkpoint)

    resume = add_command(commands, "resume", "print a task's resume note and what changed since its checkpoint")
    resume.add_argument("id", type=task_id, help="the task to resume")
    resume.add_argument("--seq", type=int, help="resume from this checkpoint instead of the newest")
    resume.set_defaults(handler=cmd_resume)


def cmd_checkpoint(args: argparse.Namespace) -> int:
    from board.checkpoints import checkpoint_json, write_checkpoint

    store = open_store(args)
    store.get(args.id)
    if args.list:
        return _list(store, args)
    checkpoint = write_checkpoint(store, args.id, reason="request", note=args.note, actor=getattr(args, "actor", None) or "cli")
    if args.json:
        print_json(checkpoint_json(checkpoint))
    else:
        print(f"checkpoint {checkpoint.seq} of #{args.id} written ({checkpoint.where})")
    return 0


def _list(store: Any, args: argparse.Namespace) -> int:
    from board.checkpoints import checkpoint_rows

    rows = checkpoint_rows(store.checkpoint_book, args.id)
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print(f"#{args.id} has no checkpoints")
    for row in rows:
        if row["valid"]:
            print(f"{row['seq']:>4}  {row['createdAt']}  {row['actor']:<12} {row['reason']:<12} {row['note']}")
        else:
            print(f"   !  CORRUPT  {row['path']}")
    return 1 if any(not row["valid"] for row in rows) else 0


def cmd_resume(args: argparse.Namespace) -> int:
    from board.checkpoints import resume_from

    store = open_store(args)
    task = store.get(args.id)
    resumed = resume_from(store, args.id, args.seq)
    if args.json:
        print_json(resumed.to_dict())
        return 0
    checkpoint = resumed.checkpoint
    lines = [
        f"#{task.id} {task.subject}",
        f"resume from checkpoint {checkpoint.seq} ({checkpoint.reason}, {checkpoint.created_at}, by {checkpoint.actor}); checksum ok",
        "",
        "note: " + (checkpoint.note or "(none)"),
        "",
        "changed since:",
    ]
    changes = []
    if checkpoint.git_head != resumed.head_now:
        changes.append(f"  git HEAD {_short(checkpoint.git_head)} -> {_short(resumed.head_now)}")
    for path, (then, current) in resumed.files.items():
        what = "deleted" if current is None else "created" if then is None else "modified"
        changes.append(f"  {path}: {what}")
    for key, (then, current) in resumed.fields.items():
        changes.append(f"  {key}: {then!r} -> {current!r}")
    lines += changes or ["  nothing: the task, its files and git HEAD are as they were"]
    print("\n".join(lines))
    return 0


def _short(head: str | None) -> str:
    return head[:12] if head else "(no commit)"
