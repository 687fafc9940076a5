"""Argument types shared by command groups: each refuses a bad value with one line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeVar

from board import values
from board.text import shortened


def argument_type(check: Callable[[str], str]) -> Callable[[str], str]:
    """``check`` (from ``board.values``) as an argparse type: its refusal is the error line."""

    def parse(value: str) -> str:
        try:
            return check(value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parse.__name__ = check.__name__
    return parse


task_id = argument_type(values.task_id)
agent_name = argument_type(values.agent_name)
label = argument_type(values.label)

N = TypeVar("N", int, float)


def number_argument(parse: Callable[[str], N], kind: str, fits: Callable[[N], bool], refusal: str) -> Callable[[str], N]:
    """An argparse type: ``parse`` the text (refused as not ``kind``), then check that the number
    ``fits`` (refused with ``refusal``, where ``{}`` stands for the number)."""

    def number(value: str) -> N:
        try:
            parsed = parse(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not {kind}") from None
        if not fits(parsed):
            raise argparse.ArgumentTypeError(refusal.format(parsed))
        return parsed

    return number


def seconds_within(low: float, high: float, refusal: str) -> Callable[[str], float]:
    """An argparse type for a number of seconds from ``low`` to ``high``; ``refusal`` says the range."""
    return number_argument(float, "a number of seconds", lambda number: low <= number <= high, refusal)


positive_int = number_argument(int, "a whole number", lambda number: number >= 1, "must be at least 1")
_token_count = number_argument(
    lambda text: int(text.replace("_", "").replace(",", "")), "a whole number of tokens", lambda number: number >= 0, "a budget cannot be negative",
)
_dollars = number_argument(
    lambda text: float(text.lstrip("$")), "an amount of dollars (e.g. 2.50)", lambda number: 0 <= number < 1e9, "a budget is between 0 and a billion dollars",
)


def add_budget_options(parser: argparse.ArgumentParser, whose: str) -> None:
    """``--budget-tokens`` / ``--budget-usd``: what ``whose`` may spend (0 removes the limit)."""
    parser.add_argument("--budget-tokens", type=_token_count, metavar="N", help=f"tokens {whose} may spend (input, output and cache together; 0: no limit); paused at the limit")
    parser.add_argument("--budget-usd", type=_dollars, metavar="USD", help=f"estimated dollars {whose} may spend (0: no limit); paused at the limit")


def budget_change(args: argparse.Namespace) -> dict[str, float | int | None] | None:
    """The limits given on the command line (0 as None: removed), or None when none was."""
    given = {"tokens": args.budget_tokens, "usd": args.budget_usd}
    if given["tokens"] is None and given["usd"] is None:
        return None
    return {name: (value or None) for name, value in given.items() if value is not None}
