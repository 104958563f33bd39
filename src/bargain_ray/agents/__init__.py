"""Agents: LLM (prompt + model client), strategy (computed reply), replay (recorded reply)."""

from __future__ import annotations

from bargain_ray.agents.base import Agent
from bargain_ray.agents.llm import LLMAgent
from bargain_ray.agents.strategy import StrategyAgent
from bargain_ray.clients.base import ClientSource
from bargain_ray.config import ModelConfig


def make_agent(model: ModelConfig, clients: ClientSource, game_family: str) -> Agent:
    """The agent for a configured model in a game of ``game_family``; clients are shared."""
    if model.provider == "strategy":
        return StrategyAgent(model.name, model.strategy, game_family)
    return LLMAgent(clients.get(model))
