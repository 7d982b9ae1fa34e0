"""The agent zoo: every agent implements one Policy protocol (see tenk_env.policies.base)."""

from tenk_env.policies.base import AGENTS, AgentError, Policy, RandomAgent, make_agent

__all__ = ["AGENTS", "AgentError", "Policy", "RandomAgent", "make_agent"]
