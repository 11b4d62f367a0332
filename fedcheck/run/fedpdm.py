"""``fedcheck run fedpdm CONFIG.toml``: FedPDM-DP (seed 001, Algorithm 1) or a reconstructed DP baseline.

See ``docs/papers/fedpdm.md``. ``--json`` prints ``{"arm", "rounds", "runs", "seed", "problem", "curves", "noise",
"privacy", "notes", "status"}``: curves are means over runs for t = 0..T (``loss`` = F(x_0^t) of (24), ``accuracy`` on
the test set or null, ``stationarity`` = P of (21) for FedPDM); ``problem.smoothness`` the certified bracket of the
smoothness constant (``L_lower``, ``L_smooth``, ``converged``, ``route``); ``noise`` the noise multiplier z and the
largest per-round sigma; ``notes`` why a finite run did not learn, in words.

``privacy`` of FedPDM-DP is :func:`reference_impl.fedpdm.account_run` under ``algorithm.privacy_model`` for run 0
(``model``, ``is_bound``, ``status``, ``delta``, ``q``, ``participations``, ``epsilon_per_client``, ``epsilon_max``,
``worst_client``, ``mu_per_client``): by default ``history_gaussian``, a proven bound for the algorithm as run;
beside it ``paper``, the paper's subsampled accountant, labelled as not a bound (the client keeps its state across
rounds: fedcheck claim ``fedpdm.theorem2_carryover``). A baseline's ``privacy`` is dp-accounting's per-client totals
(RDP for every client, PLD for the busiest; Poisson-subsampled Gaussian at q = E b/|D_i|) under the
independent-rounds model, labelled as such. Non-finite values are null and ``status`` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from fedcheck.run._api import ConfigError, Cost, Field, Option, Schema, Section, read_npz
from fedcheck.run._output import fmt_bracket
from fedcheck.run._schema import clean_message

NAME = "fedpdm"
TITLE = "FedPDM-DP (or a DP baseline) from a TOML configuration"

SOURCES = ("nc", "digits", "mnist_like", "mnist_npz")
ARMS = ("fedpdm", "fedavg", "fedprox", "scaffold")
#: Noise multipliers beyond this are refused before dp-accounting sees them (its RDP orders overflow there).
MAX_NOISE_MULTIPLIER = 1e6
#: Smallest delta accepted: a normal double (subnormal deltas break the accountants' logarithms).
MIN_DELTA = 1e-300
MNIST_KEYS = ("x_train", "y_train", "x_test", "y_test")
#: The accounting models of ``algorithm.privacy_model`` (reference_impl.fedpdm.PRIVACY_MODELS).
PRIVACY_MODELS = ("history_gaussian", "paper")
#: How the baselines' per-client totals are labelled: dp-accounting's accountants compose the rounds as
#: independent Poisson-subsampled Gaussian releases, which a client that keeps state between rounds voids.
BASELINE_MODEL = "independent-rounds model (not a bound with kept state)"


def _one_of(key, kinds) -> str:
    return f"{key} = {kinds[0]!r}" if len(kinds) == 1 else f"{key} is " + " or ".join(repr(k) for k in kinds)


def _src(*kinds):
    return dict(applies=lambda v: v["problem.source"] in kinds, when=_one_of("problem.source", kinds))


_DP = dict(applies=lambda v: v["algorithm.noise"] == "dp", when="algorithm.noise = 'dp'")

SCHEMA = Schema(sections=(
    Section(name="problem", doc="The data and the objective (24).", fields=(
        Field(name="source", kind="choice", choices=SOURCES, default="nc",
              doc="'nc' (synthetic l1-logistic), 'digits' (scikit-learn's 8x8 digits, loss (25)), 'mnist_like' "
                  "(synthetic MNIST-shaped data) or 'mnist_npz' (your Keras-layout MNIST .npz)"),
        Field(name="path", kind="str", required=True, doc="the MNIST .npz (x_train, y_train, x_test, y_test), "
                                                          "relative to the config", **_src("mnist_npz")),
        Field(name="N", kind="int", lo=1, default=lambda v: 10 if v["problem.source"] in ("nc", "digits") else 100,
              doc="clients; the training set is split IID into N equal parts (remainder dropped)"),
        Field(name="n", kind="int", lo=1, default=60, doc="samples per client", **_src("nc")),
        Field(name="d", kind="int", lo=1, default=20, doc="features", **_src("nc")),
        Field(name="n_train", kind="int", lo=lambda v: v["problem.N"], lo_text="problem.N", default=60_000,
              doc="training images", **_src("mnist_like")),
        Field(name="n_test", kind="int", lo=1, default=10_000, doc="test images", **_src("mnist_like")),
        Field(name="beta", kind="real", lo=0.0, default=lambda v: 0.1 if v["problem.source"] == "nc" else 1e-2,
              doc="weight of the non-convex term beta sum X^2/(1 + X^2)"),
        Field(name="gamma", kind="real", lo=0.0, default=lambda v: 0.01 if v["problem.source"] == "nc" else 1e-4,
              doc="l1 weight of h = gamma ||X||_1"),
        Field(name="data_seed", kind="int", lo=0, default=0, doc="seed of the split (and of the synthetic data)"),
    )),
    Section(name="algorithm", doc="Algorithm 1's inputs and its noise.", fields=(
        Field(name="K", kind="int", lo=1, hi=lambda v: v["problem.N"], hi_text="problem.N", required=True,
              doc="clients sampled per round t >= 1"),
        Field(name="rounds", kind="int", lo=1, required=True, option="--rounds", doc="rounds T"),
        Field(name="batch_size", kind="int", lo=1, required=True, doc="batch size b"),
        Field(name="batch_rule", kind="choice", choices=("disjoint", "fresh"), default="disjoint",
              doc="'disjoint' (one permutation per round; Q_max b <= |D_i|) or 'fresh' (each step its own batch)"),
        Field(name="rho", kind="real", lo=0.0, lo_open=True, required=True, doc="penalty rho (Theorem 3: rho > 4L)"),
        Field(name="eta0", kind="real", lo=0.0, lo_open=True, required=True, doc="step-size scale eta0"),
        Field(name="eta_schedule", kind="choice", choices=("inv_sqrt", "constant"), default="inv_sqrt",
              doc="eta^t = eta0/sqrt(1 + t) ('inv_sqrt') or eta0 ('constant')"),
        Field(name="nu", kind="real", lo=0.0, required=True, doc="stopping threshold of (11) on ||g||^2 (0: always "
                                                                 "Q_max steps)"),
        Field(name="Q_max", kind="int", lo=1, required=True, doc="cap on the local steps"),
        Field(name="local_start", kind="choice", choices=("warm", "global"), default="warm",
              doc="x_i^{t,0}: 'warm' (x_i^t) or 'global' (x_0^t)"),
        Field(name="init", kind="choice", choices=("zeros", "normal"), default="zeros",
              doc="x_0^0 = 0, or N(0, init_scale^2 I)"),
        Field(name="init_scale", kind="real", lo=0.0, default=0.0, applies=lambda v: v["algorithm.init"] == "normal",
              when="algorithm.init = 'normal'", doc="standard deviation of the normal start"),
        Field(name="first_round_all", kind="bool", default=True, doc="S_0 = [N] (every client in round 0)"),
        Field(name="noise", kind="choice", choices=("dp", "none", "fixed"), default="dp",
              doc="'dp' (sigma = z s of (18)-(19)), 'none' (no noise) or 'fixed' (sigma on every upload)"),
        Field(name="sigma", kind="real", lo=0.0, default=0.0, applies=lambda v: v["algorithm.noise"] == "fixed",
              when="algorithm.noise = 'fixed'", doc="per-coordinate noise standard deviation"),
        Field(name="dp_calibration", kind="choice", choices=("per_round_eps", "target_total_eps_bound",
                                                             "target_total_eps"),
              default="per_round_eps", doc="'per_round_eps': z = sqrt(2 ln(1.25/delta))/epsilon (18); "
                                           "'target_total_eps_bound': the smallest z for which every client's "
                                           "history_gaussian total (a bound for the algorithm as run) is "
                                           "epsilon_total at delta (needs nu = 0 or Q_max = 1); "
                                           "'target_total_eps': the smallest z whose total under the paper's "
                                           "subsampled accountant at the busiest client's realised participation "
                                           "count is epsilon_total (NOT a bound for the algorithm as run)", **_DP),
        Field(name="epsilon", kind="real", lo=0.0, lo_open=True, default=1.0,
              applies=lambda v: v["algorithm.noise"] == "dp" and v["algorithm.dp_calibration"] == "per_round_eps",
              when="algorithm.noise = 'dp' and dp_calibration = 'per_round_eps'", doc="per-round epsilon"),
        Field(name="epsilon_total", kind="real", lo=0.0, lo_open=True, default=7.0,
              applies=lambda v: v["algorithm.noise"] == "dp" and v["algorithm.dp_calibration"] in (
                  "target_total_eps", "target_total_eps_bound"),
              when="algorithm.noise = 'dp' and dp_calibration is 'target_total_eps_bound' or 'target_total_eps'",
              doc="target total epsilon at delta"),
        Field(name="delta", kind="real", lo=MIN_DELTA, hi=1.0, hi_open=True, default=1e-5,
              doc="per-round delta and the accounting target", **_DP),
        Field(name="noise_Q", kind="choice", choices=("adaptive", "cap"), default="cap",
              doc="Q in (19): the realised Q_i^t ('adaptive') or Q_max ('cap')", **_DP),
        Field(name="G", kind="real", lo=0.0, lo_open=True,
              doc="the gradient bound of A3 (default: the certified max ||a|| + (3 sqrt 3/8) beta sqrt d)", **_DP),
        Field(name="prox_threshold_factor", kind="real", lo=0.0, default=1.0,
              doc="threshold factor x gamma/rho of the proximal step (1: the seed's (13))"),
        Field(name="sensitivity_model", kind="choice", choices=("eq19", "history"), default="eq19",
              doc="'eq19': sigma = z s; 'history': sigma = z kappa_n s with the client's history factor "
                  "(needs noise_Q = 'cap')", **_DP),
        Field(name="privacy_model", kind="choice", choices=PRIVACY_MODELS, default="history_gaussian",
              applies=lambda v: v.raw("arm.name", "fedpdm") == "fedpdm", when="arm.name = 'fedpdm'",
              doc="how the run's privacy totals are accounted: 'history_gaussian' (a proven bound for Algorithm 1 as "
                  "run: each upload a Gaussian mechanism of sensitivity kappa_n s_n given the released history, "
                  "composed exactly, no subsampling amplification; a bound only with a fixed number of local steps, "
                  "nu = 0 or Q_max = 1) or 'paper' (Theorem 2's subsampled accountant, reported as NOT a bound: the "
                  "client keeps (x_i, lambda_i) across rounds)"),
    )),
    Section(name="arm", doc="FedPDM-DP or a reconstructed DP baseline.", fields=(
        Field(name="name", kind="choice", choices=ARMS, default="fedpdm",
              doc="'fedpdm' or a reconstructed baseline 'fedavg', 'fedprox', 'scaffold'"),
        Field(name="local_steps", kind="int", lo=1, applies=lambda v: v["arm.name"] != "fedpdm",
              when="arm.name is a baseline", doc="E local SGD steps (default Q_max)"),
        Field(name="eta_cap", kind="real", lo=0.0, lo_open=True, default=0.1,
              applies=lambda v: v["arm.name"] != "fedpdm", when="arm.name is a baseline",
              doc="the eta^t schedule capped at this value"),
        Field(name="mu", kind="real", lo=0.0, default=0.1, applies=lambda v: v["arm.name"] == "fedprox",
              when="arm.name = 'fedprox'", doc="FedProx's proximal weight"),
    )),
))

OPTIONS = (
    Option(flag="--rounds", field="algorithm.rounds", doc="rounds T"),
    Option(flag="--runs", default=1, doc="Monte-Carlo runs"),
    Option(flag="--seed", default=0, lo=0, metavar="S", doc="root seed"),
)

_CONFIG_FIELDS = ("K", "rounds", "batch_size", "batch_rule", "rho", "eta0", "eta_schedule", "nu", "Q_max",
                  "local_start", "init", "init_scale", "first_round_all", "noise", "sigma", "dp_calibration", "epsilon",
                  "epsilon_total", "delta", "noise_Q", "G", "prox_threshold_factor", "sensitivity_model",
                  "privacy_model")


@dataclass(frozen=True, kw_only=True)
class Setup:
    """A validated FedPDM run (the data not yet built)."""

    v: Any
    config: Any
    baseline: Any
    arrays: dict | None
    path: str | None
    N: int
    n: int
    n_features: int
    n_classes: int
    n_test: int
    runs: int
    seed: int


def _sizes(v, arrays) -> tuple[int, int, int, int, int]:
    """(N, n, n_features, n_classes, n_test) of the problem the fields describe."""
    src, N = v["problem.source"], v["problem.N"]
    if src == "nc":
        return N, v["problem.n"], v["problem.d"], 1, 0
    if src == "mnist_like":
        return N, v["problem.n_train"] // N, 28 * 28 + 1, 10, v["problem.n_test"]
    if src == "digits":
        from reference_impl.datasets import load_digits_images

        X_train, _, X_test, _ = load_digits_images()      # scikit-learn's bundled 8x8 digits (small)
        train = X_train.shape[0]
        if N > train:
            raise ConfigError(f"problem.N must be an integer in [1, {train}] (the digits' training images), got {N}")
        return N, train // N, X_train.shape[1] + 1, 10, X_test.shape[0]
    x = arrays["x_train"]
    train = x.shape[0]
    if N > train:
        raise ConfigError(f"problem.N must be an integer in [1, {train}] (the training images of problem.path), "
                          f"got {N}")
    pixels = int(math.prod(x.shape[1:])) if x.ndim >= 2 else 1
    return N, train // N, pixels + 1, 10, arrays["x_test"].shape[0]


def _check_mnist(path, arrays) -> None:
    from fedcheck._files import real_array

    missing = [k for k in MNIST_KEYS if k not in arrays]
    if missing:
        raise ConfigError(f"problem.path {str(path)!r} must hold arrays {', '.join(MNIST_KEYS)}; missing "
                          f"{', '.join(missing)}")
    for split in ("train", "test"):
        x, y = arrays[f"x_{split}"], arrays[f"y_{split}"]
        real_array(x, f"problem.path {str(path)!r} array 'x_{split}'")
        if x.ndim < 2 or y.reshape(-1).shape[0] != x.shape[0]:
            raise ConfigError(f"problem.path {str(path)!r}: x_{split} must be (n, ...) images with one label each in "
                              f"y_{split}, got shapes {x.shape} and {y.shape}")
        if x.shape[0] == 0:
            raise ConfigError(f"problem.path {str(path)!r}: x_{split} holds no image")
        labels = y.reshape(-1)
        if labels.dtype.kind not in "iu" and not (labels.dtype.kind == "f" and bool(
                (labels == labels.round()).all())):
            raise ConfigError(f"problem.path {str(path)!r}: y_{split} must hold integer labels 0..9")
        if labels.size and (labels.min() < 0 or labels.max() > 9):
            raise ConfigError(f"problem.path {str(path)!r}: y_{split} must hold labels in 0..9, got "
                              f"{float(labels.min()) if labels.min() < 0 else float(labels.max())!r}")


def load(v) -> Setup:
    from reference_impl.fedpdm import BaselineConfig, FedPDMConfig

    arrays = path = None
    if v["problem.source"] == "mnist_npz":
        path, arrays = read_npz(v, "problem.path")
        _check_mnist(path, arrays)
    N, n, nf, classes, n_test = _sizes(v, arrays)
    kwargs = {k: v[f"algorithm.{k}"] for k in _CONFIG_FIELDS if v[f"algorithm.{k}"] is not None}
    with SCHEMA.blame("algorithm"):
        config = FedPDMConfig(**kwargs)
    with SCHEMA.blame("algorithm", K="algorithm.K", batch_size="algorithm.batch_size"):
        config.validate_for(SimpleNamespace(N=N, n=n))
    if config.noise == "dp" and config.dp_calibration == "per_round_eps":
        z = math.sqrt(2.0 * math.log(1.25 / config.delta)) / config.epsilon
        if not z <= MAX_NOISE_MULTIPLIER:
            raise ConfigError(f"algorithm.epsilon: the noise multiplier z = sqrt(2 ln(1.25/delta))/epsilon = {z:.3g} "
                              f"of (18) is above {MAX_NOISE_MULTIPLIER:g}, where the accountants overflow (epsilon = "
                              f"{config.epsilon:g}, delta = {config.delta:g}); use a larger epsilon")
    baseline = None
    if v["arm.name"] != "fedpdm":
        with SCHEMA.blame("arm"):
            baseline = BaselineConfig(name=v["arm.name"], local_steps=v["arm.local_steps"], eta_cap=v["arm.eta_cap"],
                                      mu=v["arm.mu"] if v["arm.mu"] is not None else 0.1)
    return Setup(v=v, config=config, baseline=baseline, arrays=arrays, path=None if path is None else str(path), N=N,
                 n=n, n_features=nf, n_classes=classes, n_test=n_test, runs=v.options["runs"], seed=v.options["seed"])


def estimate(s: Setup) -> list[Cost]:
    """The data, the smoothness bracket (:func:`reference_impl.fedpdm.estimate_smoothness_cost`), the schedule, the
    state and the rounds."""
    from reference_impl.fedpdm import estimate_smoothness_cost

    c, N, n, nf, m = s.config, s.N, s.n, s.n_features, s.n_classes
    smooth = estimate_smoothness_cost(N, n, nf, m)
    d = nf * m
    src = s.v["problem.source"]
    data_field = {"nc": "problem.n", "digits": "problem.N", "mnist_like": "problem.n_train",
                  "mnist_npz": "problem.path"}[src]
    data = float(N) * n * nf
    if src == "mnist_like":
        data = float(s.v["problem.n_train"] + s.n_test) * (nf - 1)
    T, R = c.rounds, s.runs
    rounds_label = s.v.label("algorithm.rounds")
    per_round = float(c.K) * c.Q_max * c.batch_size * d * 4 + (float(N) * n + s.n_test) * d * 2 + N * d * 4
    return [
        Cost(phase="the data", field=data_field, memory=data * 2, work=data * 10),
        Cost(phase="the certified smoothness bracket of L (estimate_smoothness_cost, every client's rows in one "
                   "class at worst)", field="problem.d" if src == "nc" else data_field,
             memory=smooth.peak_elements, work=smooth.work),
        Cost(phase="the participation schedule runs x rounds x N", field=rounds_label, memory=3.0 * R * T * N,
             work=float(R) * T * N * 30),
        Cost(phase="the state runs x N x d", field="argument --runs", memory=4.0 * R * N * d),
        Cost(phase="the work runs x rounds x (local steps + observers)", field=rounds_label,
             work=float(R) * T * per_round, steps=float(T) * (c.Q_max + 4)),
    ]


def _problem(s: Setup):
    import numpy as np

    from reference_impl import fedpdm as fp

    v = s.v
    src = v["problem.source"]
    rng = np.random.default_rng(v["problem.data_seed"])
    common = dict(beta=v["problem.beta"], gamma=v["problem.gamma"])
    with SCHEMA.blame("problem"):
        if src == "nc":
            return fp.instance_nc(rng, N=s.N, n=v["problem.n"], d=v["problem.d"], **common)
        if src == "digits":
            return fp.digits_problem(rng, N=s.N, **common)
        if src == "mnist_like":
            return fp.mnist_like_problem(rng, N=s.N, n_train=v["problem.n_train"], n_test=v["problem.n_test"],
                                         **common)
    try:
        return fp.mnist_npz_problem(s.path, rng, N=s.N, **common)
    except ValueError as exc:
        raise ConfigError(f"problem.path {s.path!r}: {clean_message(exc)}") from None


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


def _history_factor(result, config) -> dict:
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


def _privacy_fedpdm(problem, config, result) -> dict:
    """The ``privacy`` block of a FedPDM-DP run: :func:`reference_impl.fedpdm.account_run` under
    ``config.privacy_model`` (run 0), and beside a history_gaussian account the paper's numbers under ``paper``."""
    from reference_impl.fedpdm import account_run

    try:
        privacy = account_run(problem, config, result).to_json()
    except ValueError as exc:  # a history factor or a sensitivity (19) of the schedule leaves the double range
        counts = [int(c) for c in result.participation_counts[0]]
        return {"model": config.privacy_model, "is_bound": False,
                "status": f"not a bound: the totals are not computable ({clean_message(exc)})", "delta": config.delta,
                "q": config.q(problem), "participations": counts, "epsilon_per_client": [None] * len(counts),
                "epsilon_max": None, "worst_client": None, "pT": config.K / problem.N * config.rounds}
    privacy["pT"] = config.K / problem.N * config.rounds
    if config.privacy_model == "history_gaussian" and config.noise == "dp":
        paper = account_run(problem, config, result, model="paper").to_json()
        privacy["paper"] = {"label": "the paper's accountant (Theorem 2, eq. (20)): not a bound for Algorithm 1 as run",
                            **{k: paper[k] for k in ("model", "is_bound", "status", "q", "epsilon_per_client",
                                                     "epsilon_max", "worst_client")}}
    if config.noise == "dp":
        privacy.update(_history_factor(result, config))
    return privacy


def _privacy_baseline(problem, config, baseline, result) -> dict:
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


def _learning_notes(curves: dict, sigma_max: list, config, n_classes: int) -> list[str]:
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


def run(s: Setup, rng) -> dict:
    import numpy as np

    from reference_impl import fedpdm as fp
    from theory.fedpdm.convergence import theorem3_conditions

    problem, config = _problem(s), s.config
    observers = {"loss": lambda st: fp.global_objective(problem, st.x0),
                 "accuracy": lambda st: fp.accuracy(problem, st.x0)}
    arm = s.v["arm.name"]
    with SCHEMA.blame("algorithm"):
        if arm == "fedpdm":
            observers["stationarity"] = lambda st: fp.stationarity_measure(problem, st.x, st.x0, st.lam,
                                                                           config.rho)["P"]
            result = fp.run_fedpdm(problem, config, rng, runs=s.runs, observers=observers)
        else:
            result = fp.run_baseline(problem, config, s.baseline, rng, runs=s.runs, observers=observers)
    status, curves = [], {}
    for name, values in result.observations.items():
        if name == "accuracy" and problem.test_features is None:
            curves[name] = None
            continue
        curves[name] = [float(x) for x in np.mean(values, axis=1)]
        if not all(math.isfinite(x) for x in curves[name]):
            status.append(f"curves.{name}: non-finite values (divergence, e.g. eta rho > 2) are null")
    sigma_max = [float(x) for x in result.sigma.max(axis=(0, 2))]
    if not all(math.isfinite(x) for x in sigma_max):
        status.append("noise.sigma_max_per_round: overflow of (19) (eta rho > 2) is null")
    with SCHEMA.blame("algorithm"):
        privacy = (_privacy_fedpdm(problem, config, result) if arm == "fedpdm" else
                   _privacy_baseline(problem, config, s.baseline, result))
    bracket = problem.smoothness
    return {"arm": arm, "rounds": config.rounds, "runs": s.runs, "seed": s.seed,
            "problem": {"source": s.v["problem.source"], "N": problem.N, "n": problem.n, "d": problem.d,
                        "L_smooth": problem.L_smooth, "G": result.G,
                        "smoothness": {"L_lower": bracket.L_lower, "L_smooth": bracket.L_smooth,
                                       "converged": bracket.converged, "route": bracket.route},
                        "theorem3_conditions": theorem3_conditions(problem.L_smooth, config.rho)},
            "curves": curves, "noise": {"mode": config.noise, "z": result.z, "sigma_max_per_round": sigma_max},
            "privacy": privacy, "notes": _learning_notes(curves, sigma_max, config, problem.n_classes),
            "status": "; ".join(status) or "ok"}


def summarize(s: Setup, r: dict):
    loss, p, pr = r["curves"]["loss"], r["privacy"], r["problem"]
    rows = [("training loss F(x_0)", f"{_g(loss[0])} -> {_g(loss[-1])}")]
    if r["curves"].get("accuracy"):
        rows.append(("test accuracy", r["curves"]["accuracy"][-1]))
    sm = pr["smoothness"]
    shown = fmt_bracket(sm["L_lower"], sm["L_smooth"])
    rows.append(("smoothness L (certified bracket)", shown + (" (both ends)" if not shown.startswith("[") else "")
                 + ("" if sm["converged"] else "; not converged: the upper end is still certified")))
    rows.append((f"noise multiplier z ({r['noise']['mode']})", r["noise"]["z"]))
    if p.get("model") == "independent_rounds":
        if "epsilon_rdp_max_client" in p:
            rows += [("busiest client's participations", f"{p['max_count']} (pT = {p['pT']:.3g})"),
                     (f"its epsilon at delta = {p['delta']:g}: RDP, PLD",
                      [p["epsilon_rdp_max_client"], p.get("epsilon_pld_max_client")]),
                     ("privacy model", BASELINE_MODEL)]
        else:
            rows.append(("privacy", p["status"]))
    else:
        bound = "a bound" if p["is_bound"] else "NOT a bound"
        why = p["status"].split(": ", 1)[1] if not p["is_bound"] and ": " in p["status"] else ""
        rows.append((f"privacy ({p['model']})", bound + (f" ({why})" if why else "")))
        if p["epsilon_max"] is not None:
            worst = p["worst_client"]
            rows.append((f"epsilon_max at delta = {p['delta']:g}",
                         f"{_g(p['epsilon_max'])} (client {worst}, {p['participations'][worst]} participations)"))
        if "paper" in p and p["paper"]["epsilon_max"] is not None:
            rows.append(("the paper's accountant (NOT a bound)", f"epsilon_max {_g(p['paper']['epsilon_max'])}"))
    for note in r.get("notes", []):
        rows.append(("note", note))
    if r["status"] != "ok":
        rows.append(("status", r["status"]))
    rows.append(("curves and per-client privacy", "use --json"))
    return (f"{r['arm']} on {pr['source']}: N = {pr['N']}, |D_i| = {pr['n']}, d = {pr['d']}, T = {r['rounds']}, "
            f"{r['runs']} run(s), seed {r['seed']}"), rows


def _g(x) -> str:
    return "not finite" if x is None or not math.isfinite(x) else f"{x:.4g}"


def figures(s: Setup, r: dict) -> list:
    """``--plot``: the global loss and (when recorded) the test accuracy per round, mean over the runs."""
    from fedcheck._plot import figure_spec, series

    titles = {"loss": ("global objective (loss)", "loss"), "accuracy": ("test accuracy", "accuracy")}
    out = []
    for name, (title, ylabel) in titles.items():
        values = r["curves"].get(name)
        if values:
            out.append(figure_spec(f"fedpdm_{name}", f"{r['arm']}: {title} ({s.runs} run(s))", "round t", ylabel,
                                   [series(f"{name}, mean over runs", range(len(values)), values)]))
    return out
