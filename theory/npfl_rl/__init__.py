"""NPFL-RL (seed 004, thesis ch. 6 / Publication 7): closed-form primal step (6.11), its tau-derivative, V_v, eta."""

from theory.npfl_rl.closed_form import (
    assumption1_eta,
    npfl_primal_closed_form,
    npfl_primal_derivative,
    validation_value,
    validation_value_derivative,
)

__all__ = [
    "assumption1_eta",
    "npfl_primal_closed_form",
    "npfl_primal_derivative",
    "validation_value",
    "validation_value_derivative",
]
