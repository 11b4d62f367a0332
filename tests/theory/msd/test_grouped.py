"""The exchangeable-group reduction (white R, classes of clients) equals the unreduced routes."""

import numpy as np
import pytest

from theory.msd import PAOFedInstance, analysis_moments, msd_steady_state, spectral_radius_F
from theory.msd.grouped import (
    apply_F_grouped,
    client_grouping,
    compress_grouped,
    expand_grouped,
    grouped_msd_steady_state,
    grouped_psd_margin,
    grouped_spectral_radius,
    refined_grouping,
)
from theory.msd.routes import choose_route, mean_square_analysis
from theory.msd.white import apply_F_component, white_components
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL, SPECTRAL_RADIUS_RTOL

#: a class of three (refined: two singletons and a class of one), a class of two and a singleton class
LABELS = np.array([0, 1, 0, 2, 1, 0])


def _grouped(selection="subset", labels=LABELS, D=4, l_max=2, m=2, mu=0.05):
    p = np.array([0.9, 0.5, 0.3])[labels]
    v = np.array([1.0, 2.0, 1.0])[labels]         # classes 0 and 2 share v but not p: still different classes
    s2 = np.array([0.01, 0.02, 0.03])[labels]
    K = labels.size
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=m, selection=selection, p=p, delta=0.3,
                          alpha=0.5 ** np.arange(l_max + 1), sigma2_eta=s2,
                          R=v[:, None, None] * np.eye(D)[None], w_star=np.ones(D), mu=mu)


def _random_state(m, g, rng):
    n = (1 + (m.l_max + 1) * g.C) ** 2 + g.C * (m.l_max + 1) ** 2
    return compress_grouped(m, expand_grouped(m, rng.standard_normal(n), g), g)


def test_classes_and_refinement():
    m = analysis_moments(_grouped())
    g = client_grouping(m)
    assert g.C == 3 and sorted(g.sizes.tolist()) == [1, 2, 3]
    assert sorted(refined_grouping(g).sizes.tolist()) == [1] * 6  # every class of <= 3 splits into singletons
    big = analysis_moments(_grouped(labels=np.zeros(7, dtype=int)))
    assert sorted(refined_grouping(client_grouping(big)).sizes.tolist()) == [1, 1, 5]
    with pytest.raises(ValueError, match="R must be white"):
        client_grouping(analysis_moments(PAOFedInstance(
            K=2, D=2, l_max=0, m=1, selection="subset", p=np.array([0.5, 0.5]), delta=0.0, alpha=np.array([1.0]),
            sigma2_eta=np.array([0.01, 0.01]), R=np.array([np.diag([1.0, 2.0])] * 2), w_star=np.ones(2), mu=0.1)))


def test_expand_compress_round_trip():
    m = analysis_moments(_grouped())
    g = client_grouping(m)
    v = _random_state(m, g, np.random.default_rng(0))
    S = expand_grouped(m, v, g)
    assert np.array_equal(compress_grouped(m, S, g), v)
    perm = np.arange(m.n_blocks)  # swap clients 0 and 2 (class 0) at every delay: S is invariant
    for ell in range(m.l_max + 1):
        perm[[1 + ell * m.K, 1 + ell * m.K + 2]] = perm[[1 + ell * m.K + 2, 1 + ell * m.K]]
    assert np.array_equal(S[perm][:, perm], S)


@pytest.mark.parametrize("selection", ["subset", "window", "bernoulli"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_reduced_operator_is_the_restriction(selection, model):
    """F_c(expand(v)) = expand(F_grouped(v)) on the classes and on their refinement, every component."""
    m = analysis_moments(_grouped(selection, labels=np.array([0, 0, 0, 0, 1, 1, 2])))
    rng = np.random.default_rng(1)
    for g in (client_grouping(m), refined_grouping(client_grouping(m))):
        for comp in white_components(m, "exact"):  # unmerged: every (pi, Gaussian factor)
            v = _random_state(m, g, rng)
            full = apply_F_component(m, comp, expand_grouped(m, v, g), model)
            red = expand_grouped(m, apply_F_grouped(m, comp, v, g, model), g)
            assert np.max(np.abs(full - red)) <= 1e-13 * np.max(np.abs(full))  # same sums, other order: ~100 ulps


@pytest.mark.parametrize("selection", ["subset", "window"])
@pytest.mark.parametrize("model", ["seed", "exact"])
def test_msd_and_rho_equal_the_unreduced_route(selection, model):
    inst = _grouped(selection)
    full = msd_steady_state(inst, model, rtol=GMRES_RTOL)
    red = grouped_msd_steady_state(inst, model, rtol=GMRES_RTOL)
    assert red.residual <= 10 * GMRES_RTOL  # the solver's own acceptance limit
    assert abs(red.msd / full.msd - 1) <= MSD_AGREEMENT_RTOL
    m = analysis_moments(inst)
    C = np.kron(expand_grouped(m, red.state, client_grouping(m)), np.eye(inst.D))
    assert np.max(np.abs(C - full.C)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(full.C))
    rho_full = spectral_radius_F(inst, model)
    rho_red = max(grouped_spectral_radius(m, c, model)[0] for c in white_components(m, model))
    assert abs(rho_red - rho_full) <= SPECTRAL_RADIUS_RTOL


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_refined_spectrum_is_the_full_spectrum(model):
    """The refined grouping sees every eigenvalue of F_c (not only those of the invariant subspace)."""
    m = analysis_moments(_grouped(labels=np.zeros(5, dtype=int), l_max=1, mu=0.3))
    g = refined_grouping(client_grouping(m))
    nb = m.n_blocks
    n = (1 + (m.l_max + 1) * g.C) ** 2 + g.C * (m.l_max + 1) ** 2
    for comp in white_components(m, model):
        full = np.linalg.eigvals(np.column_stack([apply_F_component(m, comp, e.reshape(nb, nb), model).ravel()
                                                  for e in np.eye(nb * nb)]))
        red = np.linalg.eigvals(apply_F_grouped(m, comp, np.eye(n), g, model).T)
        # zero eigenvalues aside (the canonical folding of singleton classes adds some; F_c has a kernel too)
        full, red = full[np.abs(full) > 1e-9], red[np.abs(red) > 1e-9]
        gap = lambda a, b: np.max(np.min(np.abs(a[:, None] - b[None, :]), axis=1))  # noqa: E731
        assert gap(full, red) <= 1e-8 and gap(red, full) <= 1e-8  # dense eigenvalues of a non-normal operator


def test_psd_certificate_of_the_exact_solution():
    inst = _grouped()
    m = analysis_moments(inst)
    g = client_grouping(m)
    sol = grouped_msd_steady_state(inst, "exact")
    eps = grouped_psd_margin(m, sol.state, g)
    S = expand_grouped(m, sol.state, g)
    assert eps is not None
    assert np.min(np.linalg.eigvalsh(0.5 * (S + S.T))) >= -eps * np.max(np.abs(np.diag(S)))
    X = np.zeros_like(sol.state)
    X[0] = -1.0                                   # S = -e_0 e_0^T: not PSD
    assert grouped_psd_margin(m, X, g) is None


def test_route_picks_grouped_and_agrees_with_white():
    inst = _grouped(labels=np.array([0, 0, 0, 0, 1, 1]), mu=0.05)
    assert choose_route(inst) == "grouped"
    assert choose_route(_grouped(labels=np.array([0, 1, 2]))) == "white"  # classes too small to gain anything
    for model in ("seed", "exact"):
        a = mean_square_analysis(inst, model, route="grouped")
        b = mean_square_analysis(inst, model, route="white")
        assert abs(a.msd / b.msd - 1) <= MSD_AGREEMENT_RTOL
        assert abs(a.spectral_radius - b.spectral_radius) <= SPECTRAL_RADIUS_RTOL
        assert a.threshold.lo < b.threshold.hi and b.threshold.lo < a.threshold.hi  # certified brackets overlap
        if model == "exact":
            assert a.psd_certificate is not None
