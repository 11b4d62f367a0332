"""pgfl.theorem2_limit_identity: the check refutes a slightly wrong fixed point and records D_inf >> eta."""

import numpy as np

from reference_impl.pgfl import fixed_point
from verify.pgfl.theorem2_limit import check_limit_identity
from verify.records import CheckContext, Verdict


def _slightly_wrong_fixed_point(problem, config):
    models, residual, radius = fixed_point(problem, config)
    return np.asarray(models) * (1.0 + 1e-6), residual, radius


def test_limit_identity_check_refutes_a_slightly_wrong_fixed_point():
    result = check_limit_identity(CheckContext(), fixed_point_fn=_slightly_wrong_fixed_point)
    assert result.verdict is Verdict.REFUTED, result.summary


def test_limit_identity_records_the_anisotropic_ratio():
    result = check_limit_identity(CheckContext())
    assert result.verdict is Verdict.CONFIRMED, result.summary
    assert max(result.details["D_inf_over_eta"]) > 100.0
