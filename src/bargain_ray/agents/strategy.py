"""An offline agent that answers from its own brief and the public record only."""

from __future__ import annotations

from typing import Any

from bargain_ray.core.errors import Failure, FailureKind, TechnicalFailure, crash_detail
from bargain_ray.core.prompt import Prompt
from bargain_ray.core.records import Reply
from bargain_ray.games import family


class StrategyAgent:
    """A strategy agent: reads the same prompt text a model would, replies in the protocol."""

    def __init__(self, name: str, params: dict[str, Any], game_family: str) -> None:  # free-form: the strategy block as written (models.<letter>.strategy), read as the family strategy's Params
        self.name = name
        self.params = params
        self.respond = family(game_family).GAME.strategy.respond

    async def act(self, prompt: Prompt, call_id: str) -> Reply:
        messages = [m.model_dump() for m in prompt.messages]
        try:
            text = self.respond(prompt.system, messages, self.params)
        except Exception as exc:  # a bug of ours: the game ends unknown, named as ours (never a provider's error)
            raise TechnicalFailure(Failure(kind=FailureKind.INTERNAL,
                                           detail=crash_detail(exc, f"strategy agent {self.name}"))) from exc
        return Reply(
            text=text,
            provider="strategy",
            model=self.name,
            # Nothing is sent anywhere; the prompt is rebuilt from the engine on demand.
            request={"strategy": self.name, "params": self.params},
        )
