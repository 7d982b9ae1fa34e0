"""Training, sweep and tournament configs shipped with tenk, and rulesets (``rules/``).
Installed as the data package ``tenk_env.configs``, so ``tenk train --config ppo_demo``
finds ``ppo_demo.yaml`` here from any directory."""
