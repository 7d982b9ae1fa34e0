"""The solvers' compiled inner loops (numba), one module per role.

* :mod:`~tenk_env.solve.kernels.rules`: the shared rules of a turn: the bank rule
  (``may_bank``, ``bankable_from``) and the tie-break (``ends_turn``, ``better_keep``).
* :mod:`~tenk_env.solve.kernels.turn`: the turn, every within-turn backward induction
  (``turn_dp``, ``self_eval_dp``, ``self_forward``, ``final_turn_table``).
* :mod:`~tenk_env.solve.kernels.game`: the 2-player game (``solve_game``, ``sweep_game``).
* :mod:`~tenk_env.solve.kernels.evaluation`: evaluation of fixed policies (``eval_game``,
  ``tab_*``, ``fixed_*``, ``penalty_sweep``).
* :mod:`~tenk_env.solve.kernels.multi`: N players (``regular_level``, ``final_*``).
* :mod:`~tenk_env.solve.kernels.equilibrium`: the symmetric equilibrium (``eq_*``).

This file imports nothing, so that a module's import closure holds only the kernels it runs.
"""
