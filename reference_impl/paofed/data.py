r"""Data for the PAO-Fed experiments (SIM-E, docs/papers/paofed.md#choice-simulators): RFF map, the synthetic model
of docs/papers/paofed.md#choice-data, CalCOFI.

* :func:`draw_rff_map`, :func:`rff_features` -- the choice (docs/papers/paofed.md#choices) Gaussian-kernel random
  Fourier features of docs/papers/paofed.md#choice-rff: :math:`z(x) = \sqrt{2/D}\,\cos(Vx + b)`, :math:`V_{ij} \sim N(0,
  \sigma_\kappa^{-2})`,
  :math:`b_i \sim U[0, 2\pi)`, one map per Monte-Carlo run shared by the server and all clients.
* :func:`rff_calibration` -- reports :math:`\max_k \lambda_{max}(R_k)` for a bandwidth (the seed's only
  quantitative hint is 1.02, seed 004 lines 1093 / 2807).
* :class:`SyntheticRFFData` -- the nonlinear data of Ch. (4.35) / P4 (39) with AR(1)
  inputs (docs/papers/paofed.md#choice-data), the test set and the MSE-test metric of Ch. (4.36).
* :class:`StreamData` -- data streamed from fixed arrays (CalCOFI, or the offline CalCOFI-like generator
  :func:`calcofi_like`); :func:`load_calcofi_bottle` reads the real ``bottle.csv`` from a path the user
  gives (nothing is downloaded).

Every data source has ``K``, ``D``, ``metric_name``, ``start(rng, runs)``, ``draw(state, rng, n, has_data)``
and ``metric(state, w)``, the interface :func:`reference_impl.paofed.run_paofed` uses. ``draw`` consumes
arrays of a fixed shape at every iteration (common random numbers across algorithms).

References
----------
.. [1] seed 004_180cd372987d137b.txt, Ch. 4.4.1 (lines 1078-1101): eqs. (4.35)-(4.36), RFF dimension,
   AR inputs, data and availability groups; Ch. 4.4.4 (lines 1140-1148): CalCOFI.
.. [2] docs/papers/paofed.md#choice-rff, docs/papers/paofed.md#choice-data (the choices (docs/papers/paofed.md#choices):
       kernel, bandwidth, test set, arrival law).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

from theory._validate import readonly

__all__ = [
    "CALCOFI_FEATURES",
    "CALCOFI_TARGET",
    "RFFCalibration",
    "StreamData",
    "SyntheticRFFData",
    "calcofi_like",
    "draw_rff_map",
    "load_calcofi_bottle",
    "nonlinear_target",
    "rff_calibration",
    "rff_features",
]

#: Columns of the Kaggle CalCOFI bottle.csv used as inputs (choice (docs/papers/paofed.md#choices): depth, temperature,
#: O2 saturation, potential density; the seed names "temperature, ... O2 saturation, etc.", line 1142) and the target.
CALCOFI_FEATURES = ("Depthm", "T_degC", "O2Sat", "STheta")
CALCOFI_TARGET = "Salnty"
_ORDERS = {"literal": (0, 1, 4, 3), "consecutive": (0, 1, 2, 3)}


def _check_range(name: str, value, lower: float, upper: float) -> tuple[float, float]:
    lo, hi = (float(v) for v in value)
    if not (lower <= lo <= hi <= upper):
        raise ValueError(f"{name} must be a pair lo <= hi within [{lower}, {upper}], got {value!r}")
    return lo, hi


def draw_rff_map(rng: np.random.Generator, runs: int, D: int, L: int, sigma_kappa: float):
    r"""One RFF map per run: :math:`V` (runs, D, L) with entries :math:`N(0, \sigma_\kappa^{-2})`, :math:`b` (runs, D)
    ~ U[0, 2pi)."""
    if not (isinstance(sigma_kappa, (int, float)) and math.isfinite(sigma_kappa) and sigma_kappa > 0):
        raise ValueError(f"sigma_kappa must be a finite real in (0, inf), got {sigma_kappa!r}")
    V = rng.standard_normal((runs, D, L)) / sigma_kappa
    b = rng.uniform(0.0, 2.0 * np.pi, size=(runs, D))
    return V, b


def rff_features(x: np.ndarray, V: np.ndarray, b: np.ndarray) -> np.ndarray:
    r""":math:`z(x) = \sqrt{2/D}\cos(Vx + b)` for x of shape (R, N, L) and a per-run map: (R, N, D).

    :math:`z(x)^T z(x') \approx \exp(-\lVert x - x'\rVert^2/(2\sigma_\kappa^2))` (Rahimi-Recht), so
    :math:`\lVert z\rVert^2 \le 2` and :math:`E\lVert z\rVert^2 \approx 1`.

    >>> rng = np.random.default_rng(0)
    >>> V, b = draw_rff_map(rng, 1, 4000, 2, 1.0)
    >>> x = np.array([[[0.0, 0.0], [0.5, 0.0]]])
    >>> z = rff_features(x, V, b)
    >>> bool(abs(float(z[0, 0] @ z[0, 1]) - np.exp(-0.125)) < 0.05)
    True
    """
    D = V.shape[1]
    return math.sqrt(2.0 / D) * np.cos(np.matmul(x, np.swapaxes(V, 1, 2)) + b[:, None, :])


def _features_with_data(x: np.ndarray, V: np.ndarray, b: np.ndarray, has_data: np.ndarray) -> np.ndarray:
    """:func:`rff_features` of the clients with a sample (bit for bit), zero for the others (whose regressors are
    never used): the cosines of their rows only, gathered by flat index and formed in place."""
    arg = np.matmul(x, np.swapaxes(V, 1, 2))
    R, K, D = arg.shape
    index = np.flatnonzero(has_data)
    rows = np.take(arg.reshape(R * K, D), index, axis=0)
    rows += b[0] if R == 1 else np.take(b, index // K, axis=0)
    np.cos(rows, out=rows)
    rows *= math.sqrt(2.0 / D)
    z = np.zeros((R * K, D))
    z[index] = rows
    return z.reshape(R, K, D)


def nonlinear_target(x: np.ndarray, bracket: str = "classical") -> np.ndarray:
    r"""f of Ch. (4.35) / P4 (39) on inputs (..., 4) (x[1..4] of the seed = x[..., 0..3]).

    ``classical`` (choice, docs/papers/paofed.md#choices, erratum E16 (docs/papers/paofed.md#erratum-e16)):
    :math:`\sqrt{x_1^2 + \sin^2(\pi x_4)} + (0.8 - 0.5 e^{-x_2^2}) x_3`; ``literal``: :math:`\sqrt{x_1^2 + \sin^2(\pi
    x_4)} + 0.8 - 0.5 e^{-x_2^2} x_3`.
    """
    x1, x2, x3, x4 = (x[..., i] for i in range(4))
    root = np.sqrt(x1**2 + np.sin(np.pi * x4) ** 2)
    if bracket == "classical":
        return root + (0.8 - 0.5 * np.exp(-(x2**2))) * x3
    if bracket == "literal":
        return root + 0.8 - 0.5 * np.exp(-(x2**2)) * x3
    raise ValueError(f"bracket must be 'classical' or 'literal', got {bracket!r}")


# --------------------------------------------------------------------------------------------------
# The synthetic data model of docs/papers/paofed.md#choice-data
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SyntheticRFFData:
    r"""Nonlinear streaming data of docs/papers/paofed.md#choice-data in the RFF space, with the MSE-test metric of Ch.
    (4.36).

    Per run and client (choice (docs/papers/paofed.md#choices): drawn once per Monte-Carlo run): :math:`\theta_k \sim
    U(0.2, 0.9)`,
    :math:`\mu_k \sim U(-0.2, 0.2)`, :math:`\sigma^2_{u,k} \sim U(0.2, 1.2)`,
    :math:`\sigma^2_{\eta,k} \sim U(0.005, 0.03)`. Inputs :math:`x_n = \theta_k x_{n-1} + \sqrt{1-\theta_k^2}u_n`,
    :math:`u_n \sim N(\mu_k, \sigma^2_{u,k})`, started from the stationary law; the regression vector is
    :math:`[x_n, x_{n-1}, x_{n-4}, x_{n-3}]` (``input_order = "literal"``,
    erratum E17 (docs/papers/paofed.md#erratum-e17)) or
    :math:`[x_n, \dots, x_{n-3}]` (``"consecutive"``); :math:`y = f(x) + \eta` (:func:`nonlinear_target`).

    Attributes
    ----------
    K, D : int
    sigma_kappa : float
        RFF bandwidth (choice 5: :math:`\max_k\lambda_{max}(R_k) \approx 1.02`, see :func:`rff_calibration`).
    test_size : int
        T test pairs per run, each from a uniformly chosen client's stationary AR process (choice 500).
    input_order : {"literal", "consecutive"}
    bracket : {"classical", "literal"}
    ar_clock : {"sample", "iteration"}
        choice the AR process of a client advances once per sample it receives (its training stream,
        default) or once per iteration (a process observed at the iterations a sample arrives).
    theta_range, mean_range, var_range, noise_range : (float, float)
        The uniform laws above.
    """

    K: int
    D: int = 200
    sigma_kappa: float = 5.0
    test_size: int = 500
    input_order: str = "literal"
    bracket: str = "classical"
    ar_clock: str = "sample"
    theta_range: tuple = (0.2, 0.9)
    mean_range: tuple = (-0.2, 0.2)
    var_range: tuple = (0.2, 1.2)
    noise_range: tuple = (0.005, 0.03)
    metric_name: str = field(default="mse_test", init=False)

    def __post_init__(self) -> None:
        for name in ("K", "D", "test_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not (isinstance(self.sigma_kappa, (int, float)) and math.isfinite(self.sigma_kappa)
                and self.sigma_kappa > 0):
            raise ValueError(f"sigma_kappa must be a finite real in (0, inf), got {self.sigma_kappa!r}")
        if self.input_order not in _ORDERS:
            raise ValueError(f"input_order must be 'literal' or 'consecutive', got {self.input_order!r}")
        if self.bracket not in ("classical", "literal"):
            raise ValueError(f"bracket must be 'classical' or 'literal', got {self.bracket!r}")
        if self.ar_clock not in ("sample", "iteration"):
            raise ValueError(f"ar_clock must be 'sample' or 'iteration', got {self.ar_clock!r}")
        object.__setattr__(self, "theta_range",
                           _check_range("theta_range", self.theta_range, -1.0 + 1e-12, 1.0 - 1e-12))
        object.__setattr__(self, "mean_range", _check_range("mean_range", self.mean_range, -math.inf, math.inf))
        object.__setattr__(self, "var_range", _check_range("var_range", self.var_range, 0.0, math.inf))
        object.__setattr__(self, "noise_range", _check_range("noise_range", self.noise_range, 0.0, math.inf))
        object.__setattr__(self, "sigma_kappa", float(self.sigma_kappa))

    def client_parameters(self, rng: np.random.Generator, shape: tuple) -> dict:
        """theta, mean, var (of u) and noise variance, each of the given shape."""
        return {"theta": rng.uniform(*self.theta_range, size=shape), "mean": rng.uniform(*self.mean_range, size=shape),
                "var": rng.uniform(*self.var_range, size=shape), "noise": rng.uniform(*self.noise_range, size=shape)}

    @staticmethod
    def stationary_lags(rng: np.random.Generator, params: dict) -> np.ndarray:
        """Five consecutive AR values [x_n, ..., x_{n-4}] from the stationary law, shape params' shape + (5,)."""
        th, mu, var = params["theta"], params["mean"], params["var"]
        scale = np.sqrt(1.0 - th**2)
        x = mu * np.sqrt((1.0 + th) / (1.0 - th)) + np.sqrt(var) * rng.standard_normal(th.shape)
        seq = [x]
        for _ in range(4):
            x = th * x + scale * (mu + np.sqrt(var) * rng.standard_normal(th.shape))
            seq.append(x)
        return np.stack(seq[::-1], axis=-1)

    def inputs(self, lags: np.ndarray) -> np.ndarray:
        """The regression vector x (..., 4) from the lags [x_n, ..., x_{n-4}]."""
        return lags[..., list(_ORDERS[self.input_order])]

    def start(self, rng: np.random.Generator, runs: int) -> dict:
        params = self.client_parameters(rng, (runs, self.K))
        V, b = draw_rff_map(rng, runs, self.D, 4, self.sigma_kappa)
        lags = self.stationary_lags(rng, params)
        # Test set: T pairs per run, each from a uniformly chosen client's stationary process.
        who = rng.integers(self.K, size=(runs, self.test_size))
        test_params = {k: np.take_along_axis(v, who, axis=1) for k, v in params.items()}
        x_test = self.inputs(self.stationary_lags(rng, test_params))
        y_test = nonlinear_target(x_test, self.bracket) + np.sqrt(test_params["noise"]) * rng.standard_normal(who.shape)
        return {"params": params, "V": V, "b": b, "lags": lags, "Z_test": rff_features(x_test, V, b), "y_test": y_test}

    def draw(self, state: dict, rng: np.random.Generator, n: int, has_data: np.ndarray):
        """(z, y) of the next sample of every client, (R, K, D) and (R, K); the AR state advances per the clock."""
        p = state["params"]
        shape = has_data.shape
        u = p["mean"] + np.sqrt(p["var"]) * rng.standard_normal(shape)
        noise = np.sqrt(p["noise"]) * rng.standard_normal(shape)
        lags = state["lags"]
        new = p["theta"] * lags[..., 0] + np.sqrt(1.0 - p["theta"] ** 2) * u
        shifted = np.concatenate([new[..., None], lags[..., :4]], axis=-1)
        advance = has_data if self.ar_clock == "sample" else np.ones(shape, dtype=bool)
        state["lags"] = lags = np.where(advance[..., None], shifted, lags)
        x = self.inputs(lags)
        return _features_with_data(x, state["V"], state["b"], has_data), nonlinear_target(x, self.bracket) + noise

    def metric(self, state: dict, w: np.ndarray) -> np.ndarray:
        """MSE-test per run, (R,): :math:`\\lVert y_{test} - Z_{test}^T w\\rVert^2 / T` (Ch. (4.36))."""
        resid = state["y_test"] - np.einsum("rtd,rd->rt", state["Z_test"], w)
        return np.mean(resid**2, axis=1)


@dataclass(frozen=True, kw_only=True)
class RFFCalibration:
    """Result of :func:`rff_calibration`: eigenvalue summary of the client correlation matrices R_k."""

    sigma_kappa: float
    lambda_max: np.ndarray      # (K,): lambda_max(R_k)
    lambda_min: np.ndarray      # (K,)
    trace: np.ndarray           # (K,): tr R_k
    samples: int

    @property
    def max_lambda(self) -> float:
        """max_k lambda_max(R_k): the seed's "max_{k,i} lambda_i(R_k) = 1.02"."""
        return float(np.max(self.lambda_max))

    @property
    def mean_trace(self) -> float:
        return float(np.mean(self.trace))


def rff_calibration(sigma_kappa: float, rng: np.random.Generator, *, K: int = 40, samples: int = 6000, D: int = 200,
                    input_order: str = "literal", chunk: int = 500) -> RFFCalibration:
    r"""Estimate :math:`R_k = E[z z^T]` of docs/papers/paofed.md#choice-data inputs under one RFF map and report its
    eigenvalues.

    ``samples`` consecutive inputs per client (stationary start, iteration clock), one RFF map, client
    parameters as in :class:`SyntheticRFFData`. docs/papers/paofed.md#choice-rff table (40 clients, 6000 samples,
    literal order):
    :math:`\max_k\lambda_{max}(R_k)` = 0.29, 0.60, 0.81, 0.96, 1.04, 1.03 for :math:`\sigma_\kappa` = 0.5, 1,
    2, 3, 5, 10; the seed's value is 1.02. Memory is bounded by accumulating ``chunk`` samples at a time.
    """
    for name, v in (("K", K), ("samples", samples), ("D", D), ("chunk", chunk)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    model = SyntheticRFFData(K=K, D=D, sigma_kappa=sigma_kappa, input_order=input_order)
    params = model.client_parameters(rng, (1, K))
    V, b = draw_rff_map(rng, 1, D, 4, float(sigma_kappa))
    lags = model.stationary_lags(rng, params)
    th, mu, var = (params[k][0] for k in ("theta", "mean", "var"))
    # The AR sequence x_{-4}, ..., x_{samples-1} of every client: x_t = theta x_{t-1} + innov_t (a first-order
    # recursive filter, run per client; construction only).
    seq = np.empty((K, samples + 4))
    seq[:, :5] = lags[0, :, ::-1]
    innov = np.sqrt(1.0 - th**2)[:, None] * (
        mu[:, None] + np.sqrt(var)[:, None] * rng.standard_normal((K, samples - 1)))
    for k in range(K):
        seq[k, 5:] = lfilter([1.0], [1.0, -th[k]], innov[k], zi=[th[k] * seq[k, 4]])[0]
    acc = np.zeros((K, D, D))
    for lo in range(0, samples, chunk):
        hi = min(lo + chunk, samples)
        lagged = np.stack([seq[:, 4 - j + lo: 4 - j + hi] for j in range(5)], axis=-1)   # (K, size, 5): x_n..x_{n-4}
        z = rff_features(model.inputs(lagged).reshape(1, -1, 4), V, b).reshape(K, hi - lo, D)
        acc += np.matmul(z.transpose(0, 2, 1), z)
    eig = np.linalg.eigvalsh(acc / samples)
    return RFFCalibration(sigma_kappa=float(sigma_kappa), lambda_max=readonly(eig[:, -1], np.float64),
                          lambda_min=readonly(eig[:, 0], np.float64),
                          trace=readonly(eig.sum(axis=1), np.float64), samples=int(samples))


# --------------------------------------------------------------------------------------------------
# Streams from arrays: CalCOFI and its offline substitute
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StreamData:
    r"""Clients stream fixed samples in order (wrapping around when exhausted); RFF features; MSE-test.

    Build with :meth:`from_arrays`. ``X_clients[k, :counts[k]]`` is client k's stream; the held-out test set
    is shared by all runs, the RFF map is drawn per run.
    """

    X_clients: np.ndarray      # (K, N_max, L)
    y_clients: np.ndarray      # (K, N_max)
    counts: np.ndarray         # (K,)
    X_test: np.ndarray         # (T, L)
    y_test: np.ndarray         # (T,)
    D: int = 200
    sigma_kappa: float = 5.0
    metric_name: str = field(default="mse_test", init=False)

    def __post_init__(self) -> None:
        X = np.asarray(self.X_clients, dtype=np.float64)
        y = np.asarray(self.y_clients, dtype=np.float64)
        counts = np.asarray(self.counts)
        if X.ndim != 3 or y.shape != X.shape[:2] or counts.shape != (X.shape[0],):
            raise ValueError(f"X_clients (K, N, L), y_clients (K, N) and counts (K,) must agree, got {X.shape}, "
                             f"{y.shape}, {counts.shape}")
        if not np.issubdtype(counts.dtype, np.integer) or np.any(counts < 1) or np.any(counts > X.shape[1]):
            raise ValueError(f"counts must be integers in [1, {X.shape[1]}]")
        Xt, yt = np.asarray(self.X_test, dtype=np.float64), np.asarray(self.y_test, dtype=np.float64)
        if Xt.ndim != 2 or Xt.shape[1] != X.shape[2] or yt.shape != (Xt.shape[0],) or Xt.shape[0] < 1:
            raise ValueError(f"X_test must be (T >= 1, L = {X.shape[2]}) and y_test (T,), got {Xt.shape}, {yt.shape}")
        if isinstance(self.D, bool) or not isinstance(self.D, (int, np.integer)) or self.D < 1:
            raise ValueError(f"D must be an integer >= 1, got {self.D!r}")
        for name, a in (("X_clients", X), ("y_clients", y), ("X_test", Xt), ("y_test", yt)):
            object.__setattr__(self, name, readonly(a, np.float64))
        object.__setattr__(self, "counts", readonly(counts, np.int64))

    @property
    def K(self) -> int:
        return self.X_clients.shape[0]

    @classmethod
    def from_arrays(cls, X, y, *, K: int, rng: np.random.Generator, group_sizes=(500, 1000, 1500, 2000),
                    test_size: int = 500, D: int = 200, sigma_kappa: float = 5.0, sort_by: int | None = 0,
                    standardise: bool = True) -> StreamData:
        r"""Split (X, y) into a test set and K client streams with group-dependent sizes
        (choices (docs/papers/paofed.md#choices) of docs/papers/paofed.md#experiments).

        ``test_size`` random samples are held out. The rest is ordered by feature ``sort_by`` (non-IID:
        neighbouring clients see neighbouring regions of input space; ``None`` keeps a random order) and cut
        into K contiguous streams whose sizes are proportional to ``group_sizes`` (client k in group
        :math:`\lfloor k G/K\rfloor`). With ``standardise``, features and target are centred and scaled by
        training statistics.
        """
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if X.ndim != 2 or y.shape != (X.shape[0],):
            raise ValueError(f"X must be (n, L) and y (n,), got {X.shape} and {y.shape}")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite")
        if isinstance(K, bool) or not isinstance(K, (int, np.integer)) or K < 1:
            raise ValueError(f"K must be an integer >= 1, got {K!r}")
        if X.shape[0] < test_size + K:
            raise ValueError(f"X must hold at least test_size + K = {test_size + K} samples, got {X.shape[0]}")
        perm = rng.permutation(X.shape[0])
        test, train = perm[:test_size], perm[test_size:]
        if sort_by is not None:
            train = train[np.argsort(X[train, sort_by], kind="stable")]
        if standardise:
            mx, sx = X[train].mean(axis=0), X[train].std(axis=0)
            my, sy = y[train].mean(), y[train].std()
            X = (X - mx) / np.where(sx > 0, sx, 1.0)
            y = (y - my) / (sy if sy > 0 else 1.0)
        sizes = np.asarray(group_sizes, dtype=np.float64)
        share = sizes[np.arange(K) * sizes.size // K]
        bounds = np.round(np.concatenate([[0.0], np.cumsum(share)]) / share.sum() * train.size).astype(int)
        counts = np.diff(bounds)
        if np.any(counts < 1):
            raise ValueError(f"X holds too few samples for K = {K} non-empty client streams")
        Xc = np.zeros((K, int(counts.max()), X.shape[1]))
        yc = np.zeros((K, int(counts.max())))
        for k in range(K):                                   # construction only, not a simulation loop
            idx = train[bounds[k]:bounds[k + 1]]
            Xc[k, : counts[k]], yc[k, : counts[k]] = X[idx], y[idx]
        return cls(X_clients=Xc, y_clients=yc, counts=counts, X_test=X[test], y_test=y[test], D=D,
                   sigma_kappa=sigma_kappa)

    def start(self, rng: np.random.Generator, runs: int) -> dict:
        V, b = draw_rff_map(rng, runs, self.D, self.X_clients.shape[2], float(self.sigma_kappa))
        Xt = np.broadcast_to(self.X_test, (runs,) + self.X_test.shape)
        return {"V": V, "b": b, "next": np.zeros((runs, self.K), dtype=np.int64), "Z_test": rff_features(Xt, V, b)}

    def draw(self, state: dict, rng: np.random.Generator, n: int, has_data: np.ndarray):
        idx = state["next"] % self.counts
        k = np.arange(self.K)[None, :]
        x, y = self.X_clients[k, idx], self.y_clients[k, idx]
        state["next"] = state["next"] + has_data
        return _features_with_data(x, state["V"], state["b"], has_data), y

    def metric(self, state: dict, w: np.ndarray) -> np.ndarray:
        resid = self.y_test[None, :] - np.einsum("rtd,rd->rt", state["Z_test"], w)
        return np.mean(resid**2, axis=1)


def load_calcofi_bottle(path, *, features=CALCOFI_FEATURES, target: str = CALCOFI_TARGET,
                        max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read (X, y) from the CalCOFI ``bottle.csv`` (Kaggle "CalCOFI, over 60 years of oceanographic data").

    Rows with a missing or non-numeric value in any used column are dropped. ``max_rows`` limits the rows
    read (after the header). Raises ValueError naming the path or the missing column.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must name an existing bottle.csv file, got {str(path)!r}")
    columns = (*features, target)
    X, y = [], []
    with path.open(newline="", encoding="latin-1") as fh:
        reader = csv.reader(fh)
        try:
            header = [h.strip() for h in next(reader)]
        except StopIteration:
            raise ValueError(f"path {str(path)!r} is empty (no header)") from None
        missing = [c for c in columns if c not in header]
        if missing:
            raise ValueError(f"column {missing[0]!r} is not in {str(path)!r} (needed: {', '.join(columns)})")
        where = [header.index(c) for c in columns]
        for i, row in enumerate(reader):
            if max_rows is not None and i >= max_rows:
                break
            try:
                values = [float(row[j]) for j in where]
            except (ValueError, IndexError):
                continue
            if all(math.isfinite(v) for v in values):
                X.append(values[:-1])
                y.append(values[-1])
    if not y:
        raise ValueError(f"no complete row with columns {', '.join(columns)} in {str(path)!r}")
    return np.array(X), np.array(y)


def calcofi_like(rng: np.random.Generator, n_samples: int = 80_000) -> tuple[np.ndarray, np.ndarray]:
    r"""Offline CalCOFI-like samples: columns (depth m, temperature C, O2 saturation %, sigma-theta) -> salinity.

    choice (docs/papers/paofed.md#choices) (docs/papers/paofed.md#experiments, no download available): a fixed smooth
    nonlinear surrogate of California-Current profiles, not an oceanographic model. Depth :math:`d \sim` Exp(mean 150 m)
    capped at 1000 m; per-sample surface temperature :math:`T_0 \sim U(12, 20)`, thermocline
    :math:`T = 4 + (T_0 - 4)e^{-d/120} + N(0, 0.5^2)`; salinity
    :math:`S = 33.3 + 0.9(1 - e^{-d/250}) + 0.04\,(T_0 - 16) + 0.15\sin(d/80) + N(0, 0.03^2)`;
    :math:`\sigma_\theta` from the simplified equation of state
    :math:`28.14 - 0.0735T - 0.00469T^2 + (0.802 - 0.002T)(S - 35)`;
    O2 saturation :math:`100 e^{-d/300}(1 + 0.05\,N(0,1))` clipped to [1, 130]. Salinity is thus a nonlinear
    function of the four inputs (through the equation of state) plus a small residual.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}")
    n = int(n_samples)
    depth = np.minimum(rng.exponential(150.0, n), 1000.0)
    t0 = rng.uniform(12.0, 20.0, n)
    temp = 4.0 + (t0 - 4.0) * np.exp(-depth / 120.0) + 0.5 * rng.standard_normal(n)
    sal = (33.3 + 0.9 * (1.0 - np.exp(-depth / 250.0)) + 0.04 * (t0 - 16.0) + 0.15 * np.sin(depth / 80.0)
           + 0.03 * rng.standard_normal(n))
    sigma = 28.14 - 0.0735 * temp - 0.00469 * temp**2 + (0.802 - 0.002 * temp) * (sal - 35.0)
    o2 = np.clip(100.0 * np.exp(-depth / 300.0) * (1.0 + 0.05 * rng.standard_normal(n)), 1.0, 130.0)
    return np.column_stack([depth, temp, o2, sigma]), sal
