"""Tiny but valid epsilon or delta (1e-300, 1e-320) give a clear answer or a ValueError naming the argument, and
dp-accounting's absl warnings stay off the terminal (theory.privacy.quiet)."""

import logging
import math

import numpy as np
import pytest
from scipy import special

from theory.privacy.accounting import account_rounds, epsilon_rdp_accountant, rho_schedule_constant
from theory.privacy.quiet import quiet_dp_accounting
from theory.privacy.subsampled import noise_multiplier_fedpdm, rdp_poisson_subsampled_gaussian


def test_noise_multiplier_at_subnormal_delta_and_tiny_epsilon():
    z = noise_multiplier_fedpdm(0.5, 1e-320)
    assert math.isfinite(z) and z == pytest.approx(math.sqrt(2 * (math.log(1.25) - math.log(1e-320))) / 0.5, rel=1e-15)
    assert noise_multiplier_fedpdm(0.5, 1e-5) == math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5  # unchanged, bit for bit
    assert noise_multiplier_fedpdm(1e-300, 1e-5) == pytest.approx(4.8448e300, rel=1e-4)
    with pytest.raises(ValueError, match="epsilon = 1e-320 is too small"):
        noise_multiplier_fedpdm(1e-320, 1e-5)


def _rdp_as_before(q, z, orders):
    """The log-sum-exp of the integer-order formula without the cancellation-free branch (the reference values)."""
    out = []
    for a in orders:
        k = np.arange(a + 1, dtype=np.float64)
        terms = (special.gammaln(a + 1.0) - special.gammaln(k + 1.0) - special.gammaln(a - k + 1.0)
                 + (a - k) * math.log1p(-q) + k * math.log(q) + (k * k - k) / (2 * z * z))
        out.append(special.logsumexp(terms) / (a - 1.0))
    return np.array(out)


def test_rdp_is_never_negative_at_a_huge_noise_multiplier_and_unchanged_elsewhere():
    orders = [2, 3, 5, 64, 1000, 16384]
    huge = rdp_poisson_subsampled_gaussian(0.1, 4.8e300, orders)
    assert np.all(huge == 0.0)  # the true values (about q^2 alpha / z^2) underflow
    tiny = rdp_poisson_subsampled_gaussian(0.1, 1e8, orders)
    assert np.all(tiny >= 0.0) and tiny[0] == pytest.approx(0.01 / 1e16, rel=1e-6)  # q^2 / z^2 at alpha = 2
    for q, z in ((0.02, 48.0), (0.3, 1.0), (0.25, 9.7)):  # far from 0: the log-sum-exp values, to their rounding
        values = rdp_poisson_subsampled_gaussian(q, z, orders[:5])
        assert np.all(values > 1e-9)
        np.testing.assert_allclose(values, _rdp_as_before(q, z, orders[:5]), rtol=0, atol=1e-15)


def test_accountants_answer_at_tiny_delta():
    acc = account_rounds(rho_schedule_constant(1.0, 2.0, 10), 1e-300)
    assert all(math.isfinite(v) for k, v in acc.epsilon.items() if k != "pld_accountant")
    assert acc.epsilon["pld_accountant"] == math.inf  # documented: below dp-accounting's truncated tail mass
    assert math.isfinite(account_rounds(rho_schedule_constant(1.0, 2.0, 10), 1e-320).epsilon["exact_gaussian"])


def test_dp_accounting_warnings_do_not_reach_the_terminal(caplog):
    with caplog.at_level(logging.WARNING, logger="absl"):
        eps = epsilon_rdp_accountant(rho_schedule_constant(1.0, 1e12, 50), 1e-5)  # z = 1e12: negative RDP roundings
    assert eps >= 0.0 and not [r for r in caplog.records if r.name == "absl"]
    logger = logging.getLogger("absl")
    before = logger.level
    with quiet_dp_accounting():
        assert logger.getEffectiveLevel() >= logging.ERROR
    assert logger.level == before
