"""Agents: LLM (prompt + model client), strategy (computed reply), human (a person's reply), replay (recorded reply)."""

from __future__ import annotations

from bargain_ray.agents.base import Agent
from bargain_ray.agents.human import Desk, HumanAgent
from bargain_ray.agents.llm import LLMAgent
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.clients.base import ClientSource
from bargain_ray.config import ModelConfig


def make_agent(model: ModelConfig, clients: ClientSource, game_family: str, desk: Desk | None = None,
               seat: str = "") -> Agent:
    """The agent for a configured model in a game of ``game_family``; clients are shared. A human model takes
    ``seat`` at ``desk`` (the sweep's seat server)."""
    if model.provider == "strategy":
        return StrategyAgent(model.name, model.strategy, game_family)
    if model.is_human:
        if desk is None:
            raise ValueError(f"model {model.name!r} is a human seat, and this run serves no seat page")
        return HumanAgent(desk, seat, model.name)
    return LLMAgent(clients.get(model))
