"""The agent zoo: every agent implements one Policy protocol."""
