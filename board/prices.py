"""What tokens cost: board's default prices by model, board.toml's ``[prices]`` over them, and a
tokens log's totals priced (``summary``).

Standard library only: the settings (``board.config``) and the transcripts' readers both use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# Only for annotations, which are never evaluated: ``board hook`` starts faster without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The token counts a tokens line holds, as a transcript's ``usage`` names them.
USAGE_FIELDS = {
    "input": "input_tokens",
    "output": "output_tokens",
    "cacheWrite": "cache_creation_input_tokens",
    "cacheRead": "cache_read_input_tokens",
}
#: Dollars per million tokens: (input, output, cache write, cache read), as Anthropic publishes
#: them (and ccusage prices them). A model is looked up by its name, then without its date
#: (``claude-sonnet-4-5-20250929`` is ``claude-sonnet-4-5``). ``[prices."name"]`` in
#: board.toml adds a model or changes one.
DEFAULT_PRICES: dict[str, tuple[float, float, float, float]] = {
    "claude-opus-4-6": (5.0, 25.0, 6.25, 0.5),
    "claude-opus-4-5": (5.0, 25.0, 6.25, 0.5),
    "claude-opus-4-1": (15.0, 75.0, 18.75, 1.5),
    "claude-opus-4": (15.0, 75.0, 18.75, 1.5),
    "claude-sonnet-4-6": (3.0, 15.0, 3.75, 0.3),
    "claude-sonnet-4-5": (3.0, 15.0, 3.75, 0.3),
    "claude-sonnet-4": (3.0, 15.0, 3.75, 0.3),
    "claude-3-7-sonnet": (3.0, 15.0, 3.75, 0.3),
    "claude-haiku-4-5": (1.0, 5.0, 1.25, 0.1),
    "claude-3-5-haiku": (0.8, 4.0, 1.0, 0.08),
}
PRICE_FIELDS = ("input", "output", "cacheWrite", "cacheRead")

_DATED = re.compile(r"-\d{8}$")


def price_of(model: str, prices: Mapping[str, tuple[float, float, float, float]]) -> tuple[float, float, float, float] | None:
    """Dollars per million tokens for a model (its name, then its name without a date)."""
    base = model[: -len("-fast")] if model.endswith("-fast") else model
    for name in (model, base, _DATED.sub("", base)):
        if name in prices:
            return prices[name]
    return None


def merged_prices(overrides: Mapping[str, Mapping[str, float | None]]) -> dict[str, tuple[float, float, float, float]]:
    """The default prices with board.toml's ``[prices."model"]`` (input, output, cache_write,
    cache_read; a field left out keeps the default's, or 0 for a new model)."""
    prices = dict(DEFAULT_PRICES)
    for model, fields in overrides.items():
        known = price_of(model, DEFAULT_PRICES) or (0.0, 0.0, 0.0, 0.0)
        chosen = [fields.get(name) for name in ("input", "output", "cache_write", "cache_read")]
        prices[model] = tuple(float(value) if value is not None else default for value, default in zip(chosen, known))  # type: ignore[assignment]
    return prices


def summary(by_model: Mapping[str, Mapping[str, int]], prices: Mapping[str, tuple[float, float, float, float]]) -> dict[str, Any]:
    """Totals over models, the estimated cost in dollars (the models with a price), and which
    models had none."""
    totals: dict[str, Any] = dict.fromkeys(("messages", *USAGE_FIELDS), 0)
    cost = 0.0
    unpriced = []
    models = {}
    for model, sums in sorted(by_model.items()):
        for field in totals:
            totals[field] += sums.get(field, 0)
        price = price_of(model, prices)
        model_cost = None
        if price is None:
            unpriced.append(model)
        else:
            model_cost = sum(sums.get(field, 0) * rate for field, rate in zip(PRICE_FIELDS, price)) / 1_000_000
            cost += model_cost
        models[model] = {**sums, "cost": model_cost}
    totals["total"] = sum(totals[field] for field in USAGE_FIELDS)
    totals["cost"] = cost
    totals["unpriced"] = unpriced
    totals["models"] = models
    return totals


def cost_text(tokens: Mapping[str, Any]) -> str:
    """A ``summary``'s estimated cost: ``$0.42``; ``$0.42+?`` when some of its tokens are of a
    model with no price, ``$?`` when all are (never ``$0.00`` for tokens board cannot price)."""
    if tokens["unpriced"] and not tokens["cost"]:
        return "$?"
    return f"${tokens['cost']:.2f}" + ("+?" if tokens["unpriced"] else "")
