"""Argument types shared by command groups: each refuses a bad value with one line."""

from __future__ import annotations

import argparse
from collections.abc import Callable

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


def seconds_within(low: float, high: float, refusal: str) -> Callable[[str], float]:
    """An argparse type for a number of seconds from ``low`` to ``high``; ``refusal`` says the range."""

    def seconds(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(refusal)
        return number

    return seconds


def positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _token_count(value: str) -> int:
    try:
        number = int(value.replace("_", "").replace(",", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not a whole number of tokens") from None
    if number < 0:
        raise argparse.ArgumentTypeError("a budget cannot be negative")
    return number


def _dollars(value: str) -> float:
    try:
        number = float(value.lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shortened(value)}' is not an amount of dollars (e.g. 2.50)") from None
    if not 0 <= number < 1e9:
        raise argparse.ArgumentTypeError("a budget is between 0 and a billion dollars")
    return number


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
