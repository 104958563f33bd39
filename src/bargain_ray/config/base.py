"""The base of every config model: an unknown key is refused, no float is NaN or infinite, and a model, once read,
never changes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
