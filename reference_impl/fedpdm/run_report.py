"""One FedPDM-DP run (or a reconstructed DP baseline) from checked settings, as ``fedcheck run fedpdm`` and the Python
API run it ("FedPDM-DP", Algorithm 1, eqs. (18)-(25); docs/papers/fedpdm.md).

The problem of a data source (:func:`fedpdm_run_problem`), the run's privacy block (:func:`privacy_fedpdm`: the
accounting of :func:`reference_impl.fedpdm.account_run`; :func:`privacy_baseline`: dp-accounting's per-client totals
under the independent-rounds model, :func:`account_clients`), why a finite run did not learn
(:func:`learning_notes`) and the run's JSON document (:func:`fedpdm_run_document`).
"""

from __future__ import annotations

import math
import re

__all__ = ["BASELINE_MODEL", "account_clients", "fedpdm_run_document", "fedpdm_run_problem", "history_factor",
           "learning_notes", "privacy_baseline", "privacy_fedpdm", "problem_sizes"]

#: How the baselines' per-client totals are labelled: dp-accounting's accountants compose the rounds as
#: independent Poisson-subsampled Gaussian releases, which a client that keeps state between rounds voids.
BASELINE_MODEL = "independent-rounds model (not a bound with kept state)"


def _clean(exc: BaseException) -> str:
    """A message on one line without numpy reprs (``np.float64(-1.0)`` -> ``-1.0``)."""
    text = re.sub(r"np\.(?:float|int|uint|bool_?)\w*\(([^()]*)\)", r"\1", str(exc))
    return " ".join(re.sub(r"array\(([^()]*)\)", r"\1", text).split())


def problem_sizes(source: str, N: int, *, n: int | None = None, d: int | None = None, n_train: int | None = None,
                  n_test: int | None = None, arrays: dict | None = None) -> dict:
    """``{"N", "n", "n_features", "n_classes", "n_test", "train"}`` of the problem :func:`fedpdm_run_problem` builds,
    before it is built: clients, samples per client, features (with the bias), classes, test images, and the training
    images available to split (None where ``n`` or ``n_train`` is chosen); ``arrays``: the MNIST ``.npz``'s."""
    if source == "nc":
        return dict(N=N, n=n, n_features=d, n_classes=1, n_test=0, train=None)
    if source == "mnist_like":
        return dict(N=N, n=n_train // N, n_features=28 * 28 + 1, n_classes=10, n_test=n_test, train=None)
    if source == "digits":
        from reference_impl.datasets import load_digits_images

        X_train, _, X_test, _ = load_digits_images()      # scikit-learn's bundled 8x8 digits (small)
        train, features, tests = X_train.shape[0], X_train.shape[1] + 1, X_test.shape[0]
    else:
        x = arrays["x_train"]
        train, tests = x.shape[0], arrays["x_test"].shape[0]
        features = (int(math.prod(x.shape[1:])) if x.ndim >= 2 else 1) + 1
    return dict(N=N, n=train // N, n_features=features, n_classes=10, n_test=tests, train=train)


def fedpdm_run_problem(source: str, rng, *, N: int, beta: float, gamma: float, n: int | None = None,
                       d: int | None = None, n_train: int | None = None, n_test: int | None = None,
                       path: str | None = None):
    """The FedPDM problem of ``source``: 'nc' (synthetic l1-logistic, ``n`` samples of ``d`` features per client),
    'digits' (scikit-learn's 8x8 digits, loss (25)), 'mnist_like' (synthetic MNIST-shaped, ``n_train``/``n_test``
    images) or 'mnist_npz' (the Keras-layout MNIST ``.npz`` at ``path``), split IID over ``N`` clients by ``rng``;
    ``beta``, ``gamma`` the weights of (24)."""
    from reference_impl.fedpdm.problem import digits_problem, instance_nc, mnist_like_problem, mnist_npz_problem

    common = dict(beta=beta, gamma=gamma)
    if source == "nc":
        return instance_nc(rng, N=N, n=n, d=d, **common)
    if source == "digits":
        return digits_problem(rng, N=N, **common)
    if source == "mnist_like":
        return mnist_like_problem(rng, N=N, n_train=n_train, n_test=n_test, **common)
    return mnist_npz_problem(path, rng, N=N, **common)


def account_clients(counts, z: float, q: float, delta: float, *, pld: bool = True) -> dict:
    """Per-client (epsilon, delta) at the realised counts: dp-accounting RDP for every distinct count, PLD for the max.

    Each participation is ``PoissonSampledDpEvent(q, GaussianDpEvent(z))`` (the seed's moments-accountant model).
    """
    import dp_accounting
    from dp_accounting import pld as dpa_pld
    from dp_accounting import rdp as dpa_rdp

    event = dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z))
    rdp_by_count = {}
    for n in sorted(set(int(c) for c in counts)):
        if n == 0:
            rdp_by_count[n] = 0.0
            continue
        acc = dpa_rdp.RdpAccountant()
        acc.compose(event, n)
        rdp_by_count[n] = float(acc.get_epsilon(delta))
    n_max = int(max(counts))
    out = {"epsilon_rdp_per_client": [rdp_by_count[int(c)] for c in counts], "max_count": n_max,
           "epsilon_rdp_max_client": rdp_by_count[n_max]}
    if pld and n_max > 0:
        acc = dpa_pld.PLDAccountant(value_discretization_interval=1e-3)
        acc.compose(event, n_max)
        out["epsilon_pld_max_client"] = float(acc.get_epsilon(delta))
    return out


def history_factor(result, config) -> dict:
    """History factor kappa of the busiest client's last upload (run 0), from its actual eta/Q sequence, and what the
    noise calibration means for the totals."""
    import numpy as np

    from theory.privacy.history import history_factors_fedpdm

    busiest = int(np.argmax(result.participation_counts[0]))
    rounds = np.flatnonzero(result.participation[0, :, busiest])
    Qs = [config.Q_max] * rounds.size if config.noise_Q == "cap" else [int(q) for q in result.Q[0, rounds, busiest]]
    try:
        kappa = float(history_factors_fedpdm(result.etas[rounds], Qs, config.rho, local_start=config.local_start)[-1])
    except ValueError as exc:  # (19) itself overflows (eta rho > 2)
        return {"history_factor_busiest_client": None, "history_factor_status": f"not computable: {exc}"}
    if not math.isfinite(kappa):
        status = "kappa overflows (warm start with (1 - eta rho)^Q <= -1/3)"
    elif config.sensitivity_model == "history":
        status = ("noise calibrated to kappa s: each upload is (epsilon, delta)-DP given the released history, but the "
                  "paper's subsampled totals do not hold for it (fedcheck claim fedpdm.theorem2_history_subsampled); "
                  "the history_gaussian model accounts it without subsampling amplification")
    else:
        status = ("noise calibrated to s of (19): given the released history an upload's sensitivity is kappa s; the "
                  "history_gaussian model accounts kappa s, the paper's accountant assumes kappa = 1")
    return {"history_factor_busiest_client": kappa if math.isfinite(kappa) else None,
            "history_factor_status": status}


def privacy_fedpdm(problem, config, result) -> dict:
    """The ``privacy`` block of a FedPDM-DP run: :func:`reference_impl.fedpdm.account_run` under
    ``config.privacy_model`` (run 0), and beside a history_gaussian account the paper's numbers under ``paper``."""
    from reference_impl.fedpdm.accounting import account_run

    try:
        privacy = account_run(problem, config, result).to_json()
    except ValueError as exc:  # a history factor or a sensitivity (19) of the schedule leaves the double range
        counts = [int(c) for c in result.participation_counts[0]]
        return {"model": config.privacy_model, "is_bound": False,
                "status": f"not a bound: the totals are not computable ({_clean(exc)})", "delta": config.delta,
                "q": config.q(problem), "participations": counts, "epsilon_per_client": [None] * len(counts),
                "epsilon_max": None, "worst_client": None, "pT": config.K / problem.N * config.rounds}
    privacy["pT"] = config.K / problem.N * config.rounds
    if config.privacy_model == "history_gaussian" and config.noise == "dp":
        paper = account_run(problem, config, result, model="paper").to_json()
        privacy["paper"] = {"label": "the paper's accountant (Theorem 2, eq. (20)): not a bound for Algorithm 1 as run",
                            **{k: paper[k] for k in ("model", "is_bound", "status", "q", "epsilon_per_client",
                                                     "epsilon_max", "worst_client")}}
    if config.noise == "dp":
        privacy.update(history_factor(result, config))
    return privacy


def privacy_baseline(problem, config, baseline, result) -> dict:
    """The ``privacy`` block of a baseline: dp-accounting's per-client totals under the independent-rounds model."""
    counts = result.participation_counts[0]
    steps = baseline.local_steps or config.Q_max
    q = steps * config.batch_size / problem.n
    privacy: dict = {"model": "independent_rounds", "label": BASELINE_MODEL, "is_bound": False, "delta": config.delta,
                     "q": q, "participations": [int(c) for c in counts], "pT": config.K / problem.N * config.rounds,
                     "accountant": "Poisson-subsampled Gaussian, dp-accounting"}
    if config.noise != "dp":
        privacy["status"] = f"algorithm.noise = {config.noise!r}: no DP accounting"
    elif q >= 1.0:
        privacy["status"] = "q = Q_max b/|D_i| >= 1: the subsampled accountant does not apply"
    else:
        scaffold = baseline.name == "scaffold"
        privacy.update(account_clients(counts, result.z * (2.0 if scaffold else 1.0) ** -0.5, q, config.delta))
        privacy["status"] = (f"{BASELINE_MODEL}: each round a Poisson-subsampled Gaussian, rounds independent"
                             + (" (SCAFFOLD releases two Gaussians per round: accounted as one at z/sqrt(2))"
                                if scaffold else ""))
    return privacy


def learning_notes(curves: dict, sigma_max: list, config, n_classes: int) -> list[str]:
    """Why a finite run did not learn, in words (the status says only whether the numbers are finite)."""
    notes = []
    loss = curves.get("loss") or []
    if len(loss) >= 2 and all(x is not None and math.isfinite(x) for x in (loss[0], loss[-1])) and loss[-1] > loss[0]:
        noisy = [x for x in sigma_max if math.isfinite(x)]
        cause = (f"the privacy noise dominates the updates (largest sigma {max(noisy):.3g} per coordinate and upload)"
                 if config.noise != "none" and noisy and max(noisy) > 0 else
                 "the step size is too large for this problem (try a smaller algorithm.eta0)")
        notes.append(f"the training loss rose from {loss[0]:.3g} to {loss[-1]:.3g}: {cause}; compare with "
                     f"algorithm.noise = 'none', or allow a larger epsilon")
    accuracy = curves.get("accuracy") or []
    if accuracy and accuracy[-1] is not None and n_classes > 1 and accuracy[-1] <= 1.5 / n_classes:
        notes.append(f"the test accuracy {100 * accuracy[-1]:.3g} % is no better than guessing among the "
                     f"{n_classes} classes ({100 / n_classes:.3g} %): the model has not learned")
    return notes


def fedpdm_run_document(problem, config, baseline, rng, *, runs: int, seed: int, source: str) -> dict:
    """Run FedPDM-DP (``baseline`` None) or the reconstructed ``baseline`` and return ``{"arm", "rounds", "runs",
    "seed", "problem", "curves", "noise", "privacy", "notes", "status"}``: curves are means over runs for t = 0..T
    (``loss`` = F(x_0^t) of (24), ``accuracy`` on the test set or None, ``stationarity`` = P of (21) for FedPDM);
    ``problem.smoothness`` the certified bracket of the smoothness constant (``L_lower``, ``L_smooth``,
    ``converged``, ``route``); ``noise`` the noise multiplier z and the largest per-round sigma; ``privacy`` of
    :func:`privacy_fedpdm` or :func:`privacy_baseline`; ``notes`` why a finite run did not learn, in words; ``status``
    "ok" or what is not finite. ValueError from the records names their field."""
    import numpy as np

    from reference_impl.fedpdm.algorithm import run_fedpdm
    from reference_impl.fedpdm.baselines import run_baseline
    from reference_impl.fedpdm.objective import accuracy, global_objective, stationarity_measure
    from theory.fedpdm.convergence import theorem3_conditions

    observers = {"loss": lambda st: global_objective(problem, st.x0),
                 "accuracy": lambda st: accuracy(problem, st.x0)}
    arm = "fedpdm" if baseline is None else baseline.name
    if baseline is None:
        observers["stationarity"] = lambda st: stationarity_measure(problem, st.x, st.x0, st.lam, config.rho)["P"]
        result = run_fedpdm(problem, config, rng, runs=runs, observers=observers)
    else:
        result = run_baseline(problem, config, baseline, rng, runs=runs, observers=observers)
    status, curves = [], {}
    for name, values in result.observations.items():
        if name == "accuracy" and problem.test_features is None:
            curves[name] = None
            continue
        curves[name] = [float(x) for x in np.mean(values, axis=1)]
        if not all(math.isfinite(x) for x in curves[name]):
            status.append(f"curves.{name}: non-finite values (divergence, e.g. eta rho > 2) are null")
    from reference_impl.divergence import diverging

    loss = curves.get("loss")
    why = diverging(loss, db=False, name="the training loss") if loss and all(map(math.isfinite, loss)) else None
    if why is not None:
        status.append(f"diverging: {why}")
    sigma_max = [float(x) for x in result.sigma.max(axis=(0, 2))]
    if not all(math.isfinite(x) for x in sigma_max):
        status.append("noise.sigma_max_per_round: overflow of (19) (eta rho > 2) is null")
    privacy = (privacy_fedpdm(problem, config, result) if baseline is None else
               privacy_baseline(problem, config, baseline, result))
    bracket = problem.smoothness
    return {"arm": arm, "rounds": config.rounds, "runs": runs, "seed": seed,
            "problem": {"source": source, "N": problem.N, "n": problem.n, "d": problem.d,
                        "L_smooth": problem.L_smooth, "G": result.G,
                        "smoothness": {"L_lower": bracket.L_lower, "L_smooth": bracket.L_smooth,
                                       "converged": bracket.converged, "route": bracket.route},
                        "theorem3_conditions": theorem3_conditions(problem.L_smooth, config.rho)},
            "curves": curves, "noise": {"mode": config.noise, "z": result.z, "sigma_max_per_round": sigma_max},
            "privacy": privacy, "notes": learning_notes(curves, sigma_max, config, problem.n_classes),
            "status": "; ".join(status) or "ok"}


