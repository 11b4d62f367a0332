"""The accountants check can fail: an optimistic exact-Gaussian epsilon is caught by the PLD oracle.

Its resolution is the PLD value discretisation (1e-4 absolute): a relative error of 1e-4 at epsilon = 5 is
five times that, so it must be caught; errors below the discretisation are not visible to this oracle.
"""

import dataclasses

from theory.privacy.accounting import account_rounds
from verify.dp.accountants import evaluate_accountants


def _optimistic_exact(rhos, delta):
    account = account_rounds(rhos, delta)
    epsilon = dict(account.epsilon, exact_gaussian=account.epsilon["exact_gaussian"] * (1 - 1e-4))
    return dataclasses.replace(account, epsilon=epsilon)


def _loose_cks(rhos, delta):
    account = account_rounds(rhos, delta)
    return dataclasses.replace(account, epsilon=dict(account.epsilon, cks=account.epsilon["cks"] * 0.98))


def test_accountants_check_refutes_wrong_conversions():
    # noise multiplier 4 over 20 rounds at delta = 1e-5: total rho = 20 / (2 x 4^2) = 0.625, a moderate regime
    assert evaluate_accountants(4.0, 20, 1e-5).holds
    assert not evaluate_accountants(4.0, 20, 1e-5, account=_optimistic_exact).holds
    assert not evaluate_accountants(4.0, 20, 1e-5, account=_loose_cks).holds
