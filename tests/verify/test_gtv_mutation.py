"""Mutation tests of the GTV checks: a slightly wrong algorithm or bound must turn each check into a refutation."""


from theory.gtv import dual_update
from verify.gtv import algorithm1, theorem2
from verify.gtv.paper_sbm import evaluate_paper_sbm
from verify.records import CheckContext, Verdict

CI = CheckContext(profile="ci", seed=0)


def _du_ignoring_lam_a(inst, v, sigma):
    """The seed's (25) applied to the MOCHA update (erratum E3, docs/papers/gtv.md#erratum-e3): u = v / (1 + sigma), no
    lam A_e; other penalties 0.9 x DU."""
    if inst.penalty == "mocha":
        return v / (1.0 + sigma)[:, None]
    return 0.9 * dual_update(inst, v, sigma)


def test_algorithm1_check_refutes_a_wrong_dual_update():
    """A DU with the wrong scaling converges to a non-optimal point: objective excess / KKT residual beyond bound."""
    result = algorithm1.check_algorithm1(CI, dual_update_fn=_du_ignoring_lam_a)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["kkt_node"] > result.counterexample["kkt_bound"] or \
        result.counterexample["relative_excess"] > result.counterexample["solver_tol"]


def test_single_instance_mutation_of_mocha_is_caught():
    p = {"penalty": "mocha", "loss": "squared", "seed": 3, "m": 6, "lam": 0.3, "size": 6}
    assert algorithm1.evaluate_convergence(p).holds
    assert not algorithm1.evaluate_convergence(p, dual_update_fn=_du_ignoring_lam_a).holds


def test_theorem2_check_refutes_a_bound_below_d1():
    """0.9 lam |dC| / alpha is below the attained D1 (docs/papers/gtv.md#derived-d1) deviation of the chains:
    refuted."""
    result = theorem2.check_theorem2_sharper(CI, bound_factor=0.9)
    assert result.verdict is Verdict.REFUTED, result.summary
    assert result.counterexample["kind"] == "chain"


def test_kkt_25_reproduces():
    result = algorithm1.check_kkt_25(CI)
    assert result.verdict is Verdict.REFUTED
    assert not algorithm1._reproduce_kkt_25(result.counterexample).holds


def test_paper_sbm_certificate_fails_when_clusters_are_not_separated():
    """With p_out = p_in there are no clusters: internal edges saturate and the certificate must fail."""
    e = evaluate_paper_sbm(1, settings={"sizes": (15, 15), "d": 15, "m": 3, "p_out": 0.5})
    assert not e.holds
    assert e.measured >= 1 - 1e-6 or not e.parameters["violates_35"]
