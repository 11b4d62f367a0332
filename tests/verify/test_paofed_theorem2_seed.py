"""paofed.theorem2_seed_model: an inflated spectral radius is refuted; the Lyapunov certificate rejects an unstable
F."""

import numpy as np

from verify.paofed.theorem2 import (
    _default_rho,
    check_theorem2_seed_model,
    lyapunov_certificate,
)
from verify.records import CheckContext, Verdict


def _inflated_rho(moments, model, mu):
    return _default_rho(moments, model, mu) * 1.01


def test_seed_model_check_refutes_an_inflated_radius():
    assert check_theorem2_seed_model(CheckContext(), rho_fn=_inflated_rho).verdict is Verdict.REFUTED


def test_lyapunov_certificate_accepts_a_contraction_and_rejects_an_expansion():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 6))
    A /= np.max(np.abs(np.linalg.eigvals(A)))
    # spectral radius 0.95 (contraction) and 1.05 (expansion): 5 % either side of 1
    assert lyapunov_certificate(0.95 * A)["lyapunov_certified"]
    assert not lyapunov_certificate(1.05 * A)["lyapunov_certified"]
