"""Packed symmetric storage and the in-place pieces of the classes route (theory.msd.classes_solver / _operator)."""

import numpy as np
import pytest

from theory.msd import PAOFedInstance, analysis_moments
from theory.msd.classes import class_grouping, classes_msd_steady_state, compress_classes, expand_classes
from theory.msd.classes_operator import ClassLayout, apply_F_classes, class_unknowns
from theory.msd.classes_preconditioner import StiffPartSolver
from theory.msd.classes_solver import PackedClasses
from theory.msd.instance import toeplitz_covariances
from verify.tolerance import GMRES_RTOL, MSD_AGREEMENT_RTOL

#: a class of three, a class of two and a singleton (exercises the singleton fold)
MIXED = np.array([0, 1, 0, 2, 1, 0])
#: sums of a few thousand products of O(1) numbers: a few hundred ulps
SUM_RTOL = 256 * np.finfo(float).eps


def _instance(labels=MIXED, D=3, l_max=2, selection="window"):
    rho = np.array([0.3, -0.6, 0.5])[labels]
    return PAOFedInstance(K=labels.size, D=D, l_max=l_max, m=1, selection=selection,
                          p=np.array([0.8, 0.3, 0.5])[labels], delta=0.3, alpha=0.5 ** np.arange(l_max + 1),
                          sigma2_eta=np.array([0.01, 0.02, 0.03])[labels], R=toeplitz_covariances(rho, D),
                          w_star=np.ones(D), mu=0.1)


def _symmetric_state(m, g, rng):
    n = class_unknowns(m.l_max, g.C, m.D)[1]
    S = expand_classes(m, rng.standard_normal(n), g)
    return compress_classes(m, S + S.T, g)


def test_pack_round_trip_and_inner_product():
    m = analysis_moments(_instance())
    g = class_grouping(m)
    lay = ClassLayout(m, g)
    pk = PackedClasses(lay)
    rng = np.random.default_rng(0)
    u, v = _symmetric_state(m, g, rng), _symmetric_state(m, g, rng)
    pu, pv = pk.pack(*lay.split(u), pk.empty()), pk.pack(*lay.split(v), pk.empty())
    assert pu.size < u.size                                   # about half: the upper block triangle only
    back = np.full(lay.n, np.nan)
    pk.unpack(pu, *lay.split(back))
    assert np.array_equal(back, u)
    assert pk.dot(pu, pv) == pytest.approx(float(u @ v), rel=SUM_RTOL)
    assert pk.norm(pu) == pytest.approx(float(np.linalg.norm(u)), rel=SUM_RTOL)
    acc = pu.copy()
    pk.add(*lay.split(v), acc)
    pk.subtract(*lay.split(v), acc)
    assert np.allclose(acc, pu, rtol=0.0, atol=SUM_RTOL * np.max(np.abs(pu)))


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_operator_and_preconditioner_keep_symmetry(model):
    """F and the stiff-part solve map symmetric states to symmetric states (what the packed solve relies on)."""
    m = analysis_moments(_instance())
    g = class_grouping(m)
    lay = ClassLayout(m, g)
    v = _symmetric_state(m, g, np.random.default_rng(1))
    F = expand_classes(m, apply_F_classes(m, v, g, model), g)
    assert np.max(np.abs(F - F.T)) <= SUM_RTOL * np.max(np.abs(F))
    w = v.copy()
    StiffPartSolver(lay, model, m.mu)(*lay.split(w))
    P = expand_classes(m, w, g)
    assert np.max(np.abs(P - P.T)) <= SUM_RTOL * np.max(np.abs(P))


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_packed_bicgstab_equals_dense(model):
    inst = _instance(D=4, l_max=2)
    dense = classes_msd_steady_state(inst, model, method="dense")
    kry = classes_msd_steady_state(inst, model, method="bicgstab", rtol=GMRES_RTOL)
    assert kry.iterations > 0 and kry.residual <= 10 * GMRES_RTOL
    assert kry.msd == pytest.approx(dense.msd, rel=MSD_AGREEMENT_RTOL)
    g = class_grouping(inst)
    Cd, Ck = expand_classes(inst, dense.state, g), expand_classes(inst, kry.state, g)
    assert np.max(np.abs(Ck - Cd)) <= MSD_AGREEMENT_RTOL * np.max(np.abs(Cd))


def _rff_groups(D=8, per=4, l_max=3, mu=0.004):
    """Four availability groups of ``per`` clients with RFF covariances per group (ridge 1e-2, nearly singular), the
    paper's participation rates, a small step: the consensus states decay at about 2 mu lambda_min = 8e-5."""
    from theory.msd.classes_rff import rff_group_covariances

    labels = np.repeat(np.arange(4), per)
    R, s2 = rff_group_covariances(D, 4, np.random.default_rng(0), ridge=1e-2)
    return PAOFedInstance(K=labels.size, D=D, l_max=l_max, m=1, selection="window",
                          p=np.array([0.25, 0.1, 0.025, 0.005])[labels], delta=0.2, alpha=0.2 ** np.arange(l_max + 1),
                          sigma2_eta=s2[labels], R=R[labels], w_star=np.ones(D) / np.sqrt(D), mu=mu)


@pytest.mark.parametrize("model", ["seed", "exact"])
def test_the_consensus_correction_cuts_iterations_not_the_answer(model):
    """At a small step on nearly singular covariances the stiff-part solve alone leaves the slow consensus states to
    BiCGSTAB (947-1096 iterations here); with the coarse correction it takes 143-185, to the same MSD within the
    solves' tolerance (each answer checked by its own recomputed residual)."""
    inst = _rff_groups()
    plain = classes_msd_steady_state(inst, model, method="bicgstab", rtol=GMRES_RTOL, coarse=False)
    fast = classes_msd_steady_state(inst, model, method="bicgstab", rtol=GMRES_RTOL)
    assert fast.residual <= 10 * GMRES_RTOL and plain.residual <= 10 * GMRES_RTOL
    assert 3 * fast.iterations < plain.iterations
    assert fast.msd == pytest.approx(plain.msd, rel=MSD_AGREEMENT_RTOL)
