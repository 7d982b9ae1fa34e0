"""The agent zoo: trained agents shipped with tenk, one folder each (``NAME/agent.yaml``, the
card, and ``NAME/weights.npz``). Installed as the data package ``tenk_env.zoo``; the code
that reads it is :mod:`tenk_env.policies.zoo` (``zoo:NAME`` agents, ``tenk zoo``)."""
