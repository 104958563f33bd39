"""What a call costs, in one place: the price table, the dollars a reply's usage is billed, the most a request
can cost, and the tokens a text is taken for before it is sent.

The clients bill each reply with ``cost_usd``, the budget reserves ``worst_case_usd`` before a call, the dry
run estimates with ``cost_usd`` over tokens it counted with ``estimate_tokens``; the tables and the summary
only add up what was billed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from bargain_ray.config.base import Strict
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Usage

if TYPE_CHECKING:
    from bargain_ray.config.schema import ModelConfig

PER_MILLION = 1e6
CHARS_PER_TOKEN = 4
"""Characters a token, for counts made before a call (the limiter's reservation, the estimate, the sim's usage)."""
MESSAGE_TOKENS = 16
"""Tokens a provider may add per message (role markers, separators) beyond its text: ours, generous."""
MAX_PRICE = 10_000.0
"""The most a price may be, in US dollars per million tokens (ours: far above any list price, far below what would
make a cost or an estimate infinite)."""
FREE = ("local", "strategy", "human")
"""Providers nothing is paid to: the bundled local model, the strategy agents and the people in human seats."""


class Price(Strict):
    """US dollars per million tokens."""

    input: float = Field(0.0, ge=0, le=MAX_PRICE)
    output: float = Field(0.0, ge=0, le=MAX_PRICE)
    cache_read: float = Field(0.0, ge=0, le=MAX_PRICE)
    cache_write: float = Field(0.0, ge=0, le=MAX_PRICE)
    batch_discount: float = Field(0.5, ge=0.0, le=1.0, description="share of the price a batch API call saves")

    def charged(self, cost_usd: float, batched: bool) -> float:
        """``cost_usd`` at this table's prices as billed: a call through a batch API saves ``batch_discount``
        of it. The one place the discount is applied (a paid reply's cost and the dry run's estimate)."""
        return cost_usd * (1.0 - self.batch_discount) if batched else cost_usd


def estimate_tokens(text: str) -> int:
    """The tokens ``text`` is taken for before it is sent: four characters a token, at least one."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def cost_usd(usage: Usage, price: Price, input_includes_cache: bool = False) -> float:
    """Dollars for one call's ``usage`` at a per-million-token ``price`` (at the list price: see ``Price.charged``).

    OpenAI counts cached prompt tokens inside ``prompt_tokens``; Anthropic reports them apart.
    """
    fresh = usage.input_tokens - (usage.cache_read_tokens if input_includes_cache else 0)
    return (
        fresh * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / PER_MILLION


def price_of(model: ModelConfig) -> tuple[float, float]:
    """(USD per input token at its dearest, USD per output token) as this run pays ``model`` (as it calls it).

    The local model and the strategy agents are free; the simulated provider keeps the configured price, so a
    rehearsal shows what the real run would cost.
    """
    if model.provider in FREE:
        return 0.0, 0.0
    p = model.price
    return max(p.input, p.cache_write, p.cache_read) / PER_MILLION, p.output / PER_MILLION


def worst_case_usd(model: ModelConfig, prompt: Prompt) -> float:
    """The most one call of ``model`` can cost: every UTF-8 byte of the request as an input token (a byte-level
    tokenizer never makes more tokens than bytes), plus ``max_tokens`` of output."""
    per_in, per_out = price_of(model)
    tokens_in = len(prompt.model_dump_json().encode()) + MESSAGE_TOKENS * (len(prompt.messages) + 1)
    return tokens_in * per_in + model.max_tokens * per_out
