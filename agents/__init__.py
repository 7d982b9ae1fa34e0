"""The agent zoo: every agent implements one Policy protocol (see agents.base)."""

from agents.base import AGENTS, AgentError, Policy, RandomAgent, make_agent

__all__ = ["AGENTS", "AgentError", "Policy", "RandomAgent", "make_agent"]
