"""The class-mean estimate of MSD_inf for per-client R_k (theory.msd.per_client): close to the exact value on
federations small enough for the structured route, exact when the classes are homogeneous, bad labels refused."""

import numpy as np
import pytest

from theory.msd.classes_rff import rff_client_covariances
from theory.msd.instance import PAOFedInstance
from theory.msd.per_client import class_mean_instance, class_mean_msd_estimate
from theory.msd.structured import msd_steady_state


def _federation(K=16, D=8, l_max=2, seed=3):
    R, _ = rff_client_covariances(D, K, np.random.default_rng(seed), ridge=1e-2)
    lam = max(float(np.linalg.eigvalsh(r).max()) for r in R)
    return PAOFedInstance(K=K, D=D, l_max=l_max, m=2, selection="window", p=np.repeat([0.5, 0.2], K // 2), delta=0.2,
                          alpha=0.2 ** np.arange(l_max + 1), sigma2_eta=np.full(K, 0.01), R=R,
                          w_star=np.ones(D) / D, mu=0.2 / lam)


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_the_estimate_is_near_the_per_client_msd(model):
    """16 clients with all-different RFF covariances in two availability groups: the group-mean estimate is within
    0.05 dB of the exact per-client MSD (measured 0.0024 dB seed, 0.0003 dB exact); it is flagged uncertified."""
    inst = _federation()
    assert len({r.tobytes() for r in inst.R}) == inst.K
    exact = msd_steady_state(inst, model).msd
    est = class_mean_msd_estimate(inst, model)
    assert est.classes == 2 and est.certified is False and est.spread > 0.01
    assert abs(10 * np.log10(est.msd / exact)) < 0.05
    assert est.residual < 1e-10


def test_homogeneous_classes_give_the_exact_value():
    inst = class_mean_instance(_federation())
    est = class_mean_msd_estimate(inst, "seed")
    assert est.spread <= 1e-15  # the mean of equal matrices, to rounding
    assert est.msd == pytest.approx(msd_steady_state(inst, "seed").msd, rel=1e-9)


def test_bad_labels_are_refused():
    inst = _federation()
    with pytest.raises(ValueError, match="labels must be K = 16 integers"):
        class_mean_instance(inst, labels=np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="mixes clients of different p_k"):
        class_mean_instance(inst, labels=np.zeros(16, dtype=int))


def _one_class(seed, *, m, ridge, p, K=4, D=3):
    """K clients of one availability class, each with its own RFF covariance, no delays (exactly solvable)."""
    R, _ = rff_client_covariances(D, K, np.random.default_rng(seed), ridge=ridge)
    lam = max(float(np.linalg.eigvalsh(r).max()) for r in R)
    return PAOFedInstance(K=K, D=D, l_max=0, m=m, selection="bernoulli", p=np.full(K, p), delta=0.0, alpha=np.ones(1),
                          sigma2_eta=np.full(K, 0.01), R=R, w_star=np.ones(D) / D, mu=0.2 / lam)


@pytest.mark.parametrize(("seed", "m", "ridge", "p", "sign"), [(2, 2, 1e-2, 0.5, +1), (1, 3, 1e-3, 0.2, -1)])
def test_the_estimate_is_neither_a_lower_nor_an_upper_bound(seed, m, ridge, p, sign):
    """Finding (docs/msd.md#per-client): the class-mean MSD is above the per-client MSD on some federations and below
    on others, in both models (measured +0.038 / +0.045 dB and -0.0069 / -0.0005 dB, seed / exact), so it cannot
    serve as either end of a bracket."""
    from theory.msd.naive import msd_steady_state_naive

    inst = _one_class(seed, m=m, ridge=ridge, p=p)
    bar = class_mean_instance(inst)
    for model in ("seed", "exact"):
        diff = 10 * np.log10(msd_steady_state_naive(inst, model, solver="sparse")
                             / msd_steady_state_naive(bar, model, solver="sparse"))
        assert sign * diff > 1e-4, (model, diff)


def _dense(inst, model):
    """The explicit F (theory.msd.naive.f_matrix, block-vectorised coordinates) and the noise term Q as a matrix."""
    from theory.msd.block import bvec_inverse
    from theory.msd.naive import f_matrix, noise_vector_h

    return f_matrix(inst, model), bvec_inverse(inst.mu ** 2 * noise_vector_h(inst), inst.D)


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_why_the_class_mean_solution_does_not_certify(model):
    """Finding (docs/msd.md#per-client), on four clients with different RFF covariances (D = 4, l_max = 1, N = 36):
    the per-client residual r = F(S_bar) + Q - S_bar of the class-mean solution S_bar has weight where the noise Q
    has none, so no scaled class-mean solution (1 + g) S_bar is a supersolution (g Q - (1 + g) r is indefinite for
    every g tried); and the positivity bound |MSD - MSD_bar| <= <V, |r|>, even with the exact per-client dual V,
    is ten times wider than 0.1 dB although the true difference is about 0.01 dB."""
    from theory.msd.block import bvec, bvec_inverse

    inst = _federation(K=4, D=4, l_max=1)
    F, Q = _dense(inst, model)
    Fb, Qb = _dense(class_mean_instance(inst), model)
    n, N, D = F.shape[0], Q.shape[0], inst.D
    S = bvec_inverse(np.linalg.solve(np.eye(n) - F, bvec(Q, D)), D)
    Sb = bvec_inverse(np.linalg.solve(np.eye(n) - Fb, bvec(Qb, D)), D)
    W = np.zeros((N, N))
    W[:D, :D] = np.eye(D)
    V = bvec_inverse(np.linalg.solve((np.eye(n) - F).T, bvec(W, D)), D)
    msd, msd_bar = np.trace(S[:D, :D]), np.trace(Sb[:D, :D])
    r = bvec_inverse(F @ bvec(Sb, D), D) + Q - Sb
    r = 0.5 * (r + r.T)
    lam, U = np.linalg.eigh(r)
    assert np.sum(V * r) == pytest.approx(msd - msd_bar, rel=1e-6)       # the error is <V, r>, exactly
    width = 10 * np.log10(1 + np.sum(V * ((U * np.abs(lam)) @ U.T)) / msd)
    assert abs(10 * np.log10(msd / msd_bar)) < 0.05 and width > 0.5
    for g in (0.1, 1.0, 10.0, 100.0, 1e4):
        assert np.linalg.eigvalsh(g * Q - (1 + g) * r).min() < -1e-6 * np.abs(r).max()


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_own_noise_is_the_per_client_noise_against_the_class_mean_dual(model):
    """With own_noise the estimate is <V_bar, Q>: the class-mean dynamics' dual against every client's own noise
    sigma_k^2 R_k (computed here from the explicit F of the class means), and without it the noise is averaged too."""
    from theory.msd.naive import _moments, _sigma_J, f_matrix, noise_vector_h

    R, s2 = rff_client_covariances(3, 4, np.random.default_rng(11), ridge=1e-2)
    inst = PAOFedInstance(K=4, D=3, l_max=1, m=2, selection="subset", p=np.array([0.6, 0.6, 0.3, 0.3]), delta=0.2,
                          alpha=np.array([1.0, 0.5]), sigma2_eta=s2, R=R, w_star=np.ones(3) / 3, mu=0.1)
    bar = class_mean_instance(inst)
    F = f_matrix(bar, model)
    dual = np.linalg.solve(np.eye(F.shape[0]) - F.T, _sigma_J(_moments(bar)))
    against_dual = float(inst.mu ** 2 * noise_vector_h(inst) @ dual)
    own = class_mean_msd_estimate(inst, model)
    averaged = class_mean_msd_estimate(inst, model, own_noise=False)
    assert own.msd == pytest.approx(against_dual, rel=1e-9)
    assert averaged.msd == pytest.approx(msd_steady_state(bar, model).msd, rel=1e-9)
    assert abs(own.msd - averaged.msd) > 1e-6 * own.msd
