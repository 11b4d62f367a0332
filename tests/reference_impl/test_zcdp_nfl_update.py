"""The zCDP-NFL one-step primal update: argmin of P2 (7), affine in the data term, batched, validated."""

import doctest

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import reference_impl.zcdp_nfl_update as module
from reference_impl.zcdp_nfl_update import zcdp_nfl_primal_update
from verify.tolerance import gamma
from verify.zcdp_nfl._instances import elastic_net_subgradient, lad_subgradient, sample_update_instance
from verify.zcdp_nfl.lemma1_sensitivity import evaluate_closed_form_argmin


def _instance(seed=0, **kw):
    args = {"K": 6, "P": 3, "M": 7, "rho": 0.7, "eta": 0.3, "loss": "lad", "replacement": "random"} | kw
    return sample_update_instance(np.random.default_rng(seed), **args)


def _update(inst, X=None, y=None, **kw):
    return zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X if X is None else X,
                                  inst.y if y is None else y, lad_subgradient, inst.rho, inst.eta, inst.degree, **kw)


def test_doctests_pass():
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("loss", ["lad", "clipped_squared"])
def test_closed_form_matches_cvxpy_solve_of_p2_7(seed, loss):
    """Closed form = Clarabel's argmin of (7) within the strong-convexity certified radius."""
    settings_ = {"K": 8, "P": 4, "M": 12, "rho": 0.5 + seed, "eta": 0.05 * (seed + 1), "history_scale": 1.0,
                 "regular_degree": None, "loss": loss}
    evidence = evaluate_closed_form_argmin(settings_, seed, client=seed)
    assert evidence.holds, evidence
    assert evidence.parameters["distance"] < 1e-12


def test_printed_a1_is_not_the_argmin_but_has_the_same_slope():
    """P2 (A.1) as printed (+rho/2 sum(w~_k - w~_l) + gamma/2) is not the update (E6), yet its derivative in the
    data term is the same, so Lemma I is unaffected."""
    inst = _instance(3)
    d = inst.degree[:, None].astype(float)
    g = lad_subgradient(inst.X, inst.y, inst.w_tilde).mean(axis=1)
    printed = (inst.w_tilde / inst.eta + 0.5 * inst.rho * (d * inst.w_tilde - inst.neighbour_sum) + inst.gamma / 2 - g) / (
        1 / inst.eta + 2 * inst.rho * d)
    assert np.max(np.abs(printed - _update(inst))) > 1e-3
    X2, y2 = inst.X_prime, inst.y_prime
    g2 = lad_subgradient(X2, y2, inst.w_tilde).mean(axis=1)
    printed2 = printed - (g2 - g) / (1 / inst.eta + 2 * inst.rho * d)
    np.testing.assert_allclose(printed - printed2, _update(inst) - _update(inst, X2, y2), rtol=0, atol=1e-14)


@given(shift=st.floats(min_value=-10, max_value=10), seed=st.integers(0, 2**16))
def test_update_is_affine_in_the_data_term(shift, seed):
    """Adding a constant c to every per-sample subgradient moves w by -c/(1/eta + 2 rho d_k) exactly (to rounding)."""
    inst = _instance(seed)
    base = _update(inst)
    moved = zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y,
                                   lambda X, y, w: lad_subgradient(X, y, w) + shift, inst.rho, inst.eta, inst.degree)
    expected = base - shift / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None])
    scale = np.abs(inst.w_tilde) / inst.eta + inst.rho * (inst.degree[:, None] * np.abs(inst.w_tilde)
                                                           + inst.neighbour_abs_sum) + np.abs(inst.gamma) + abs(shift) + 1
    assert np.all(np.abs(moved - expected) <= gamma(40) * scale / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None]))


def test_batch_axis_equals_loop():
    """Leading batch axes (Monte-Carlo runs) give the same rows as one call per run; eta may be per client."""
    insts = [_instance(s) for s in range(3)]
    eta = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    stack = lambda name: np.stack([getattr(i, name) for i in insts])
    batched = zcdp_nfl_primal_update(stack("w_tilde"), stack("neighbour_sum"), stack("gamma"), stack("X"), stack("y"),
                                     lad_subgradient, 0.7, eta, insts[0].degree)
    for b, inst in enumerate(insts):
        single = zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y, lad_subgradient,
                                        0.7, eta, insts[0].degree)
        np.testing.assert_array_equal(batched[b], single)


def test_regulariser_enters_as_a_data_independent_shift():
    inst = _instance(5)
    with_reg = _update(inst, regularizer_subgradient=lambda w: elastic_net_subgradient(w, K=inst.K))
    shift = elastic_net_subgradient(inst.w_tilde, K=inst.K) / (1 / inst.eta + 2 * inst.rho * inst.degree[:, None])
    np.testing.assert_allclose(_update(inst) - with_reg, shift, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"rho": 0.0}, "rho must be"), ({"rho": float("nan")}, "rho must be"), ({"eta": -1.0}, "eta must be"),
     ({"eta": np.inf}, "eta must be"), ({"eta": np.ones(4)}, "eta must broadcast"),
     ({"degree": np.array([1, 2, 3])}, "degree must be"), ({"degree": np.full(6, 1.5)}, "degree must be"),
     ({"y": np.zeros((6, 3))}, "y must have shape"), ({"gamma": np.zeros((6, 2))}, "one shape"),
     ({"w_tilde": np.full((6, 3), np.nan)}, "w_tilde must be finite")],
)
def test_bad_input_raises_value_error_naming_the_parameter(kwargs, message):
    inst = _instance(0)
    args = {"w_tilde": inst.w_tilde, "neighbour_sum": inst.neighbour_sum, "gamma": inst.gamma, "X": inst.X,
            "y": inst.y, "loss_subgradient": lad_subgradient, "rho": inst.rho, "eta": inst.eta,
            "degree": inst.degree} | kwargs
    with pytest.raises(ValueError, match=message):
        zcdp_nfl_primal_update(**args)


def test_wrong_subgradient_shape_is_rejected():
    inst = _instance(0)
    with pytest.raises(ValueError, match="loss_subgradient must return"):
        zcdp_nfl_primal_update(inst.w_tilde, inst.neighbour_sum, inst.gamma, inst.X, inst.y,
                               lambda X, y, w: w, inst.rho, inst.eta, inst.degree)
