"""fedcheck's public Python API: a small, stable surface over the toolkit (walk-through in ``docs/api.md``).

* :func:`load_config` -- a TOML configuration (the files ``fedcheck run`` reads) -> the validated instance;
* :func:`msd` -- PAO-Fed's mean-square analysis of an instance (rho(F), the certified threshold, MSD_inf);
* :func:`account`, :func:`calibrate` -- zCDP accounting of a noise schedule and its calibration to (epsilon, delta);
* :func:`run` -- the paper's reference algorithm on an instance;
* :func:`check` -- every claim of the paper decided on the instance (what ``fedcheck check`` prints);
* :func:`run_claim` -- one registered claim's check, as ``fedcheck report`` runs it;
* :func:`example` -- the path of a shipped example configuration.

The records they return print briefly (no arrays): :class:`UserInstance`, :class:`InstanceCheck`,
:class:`ClaimOutcome`, :class:`Hypothesis`, :class:`CheckResult`, :class:`MeanSquareAnalysis`,
:class:`PrivacyAccount`, :class:`RunResult`.

Examples
--------
>>> from fedcheck import api
>>> inst = api.load_config(api.example("paofed_reference.toml"))
>>> inst.paper
'paofed'
>>> api.check(inst, simulate=False).exit_status
0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theory.msd.routes import MeanSquareAnalysis
from theory.privacy.accounting import PrivacyAccount
from verify.instance import ClaimOutcome, Hypothesis, InstanceCheck, UserInstance
from verify.records import CheckResult

__all__ = ["CheckResult", "ClaimOutcome", "Hypothesis", "InstanceCheck", "MeanSquareAnalysis", "PrivacyAccount",
           "RunResult", "UserInstance", "account", "calibrate", "check", "example", "load_config", "msd", "run",
           "run_claim"]

_EXAMPLES = Path(__file__).resolve().parent / "examples"


def example(name: str) -> Path:
    """The path of a shipped example configuration (``fedcheck/examples/<name>``).

    >>> example("zcdp_nfl.toml").name
    'zcdp_nfl.toml'
    """
    path = _EXAMPLES / name
    if not path.is_file():
        shipped = ", ".join(sorted(p.name for p in _EXAMPLES.glob("*.toml")))
        raise ValueError(f"name must be a shipped example ({shipped}), got {name!r}")
    return path


def load_config(path, paper: str | None = None) -> UserInstance:
    """The validated instance of a configuration file (the run layer's loaded set-up and its lower-layer records).

    ``paper``: the slug when the file does not declare it (``paper = "<slug>"`` at the top of the file) and its
    sections do not tell; a bad field raises :class:`fedcheck._errors.ConfigError` (a ``ValueError``) naming it.
    """
    from fedcheck.check import load_instance

    return load_instance(path, paper)


def _paofed_instance(instance):
    from theory.msd.instance import PAOFedInstance

    if isinstance(instance, PAOFedInstance):
        return instance
    if isinstance(instance, UserInstance) and instance.paper == "paofed" and instance.parts.get("instance") is not None:
        return instance.parts["instance"]
    raise ValueError(f"instance must be a PAOFedInstance or a loaded PAO-Fed configuration on linear data, got "
                     f"{instance!r}")


def msd(instance, model: str = "exact", *, route: str = "auto") -> MeanSquareAnalysis:
    """PAO-Fed's mean-square analysis of ``model`` (``"exact"`` or ``"seed"``) by the cheapest exact route.

    ``instance``: a :class:`theory.msd.PAOFedInstance` or a loaded PAO-Fed configuration. Returns rho(F) at the
    instance's mu, the certified threshold bracket and MSD_inf (see :func:`theory.msd.routes.mean_square_analysis`).
    """
    from theory.msd.routes import mean_square_analysis

    return mean_square_analysis(_paofed_instance(instance), model, route=route)


def account(rho_per_round, delta: float, *, accountants: bool = False) -> PrivacyAccount:
    """Total zCDP of Gaussian rounds and epsilon at ``delta`` (Bun-Steinke, CKS, exact Gaussian; with
    ``accountants`` also dp-accounting's RDP and PLD). See :func:`theory.privacy.accounting.account_rounds`."""
    from theory.privacy.accounting import account_rounds

    return account_rounds(rho_per_round, delta, accountants=accountants)


def calibrate(epsilon: float, delta: float, rounds: int, sensitivity: float, *, variance_decay: float = 1.0,
              method: str = "exact") -> tuple[float, float]:
    """The smallest first-round noise variance meeting (epsilon, delta) over ``rounds`` rounds, and the epsilon it
    achieves (never above the target). See :func:`theory.privacy.accounting.calibrate_variance_first`."""
    from theory.privacy.accounting import calibrate_variance_first

    return calibrate_variance_first(epsilon, delta, rounds, sensitivity, variance_decay, method)


@dataclass(frozen=True, kw_only=True)
class RunResult:
    """What :func:`run` returns: the paper and the run's JSON document (``fedcheck run <slug> --json``)."""

    paper: str
    document: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:  # brief: the keys, list lengths and scalars, never the curves
        def short(v):
            if isinstance(v, list):
                return f"<{len(v)} values>"
            if isinstance(v, dict):
                return f"<{len(v)} keys>"
            return f"{v:.6g}" if isinstance(v, float) else repr(v)

        return f"RunResult(paper={self.paper!r}, " + ", ".join(f"{k}={short(v)}" for k, v in self.document.items()) \
            + ")"


def run(instance: UserInstance, rng) -> RunResult:
    """The paper's reference algorithm on a loaded configuration, with randomness from ``rng``
    (a :class:`numpy.random.Generator`); the document is ``fedcheck run <slug> --json``'s."""
    import numpy as np

    from fedcheck.check import SLUGS
    from fedcheck.run import plugin

    if not isinstance(instance, UserInstance) or "setup" not in instance.parts:
        raise ValueError(f"instance must be a configuration loaded by load_config, got {instance!r}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    document = plugin(SLUGS[instance.paper]).run(instance.parts["setup"], rng)
    return RunResult(paper=instance.paper, document={k: v for k, v in document.items() if not k.startswith("_")})


def check(instance: UserInstance, *, simulate: bool = True, seed: int = 0) -> InstanceCheck:
    """Every claim of the instance's paper decided on it (``fedcheck check``): see :mod:`verify.instance`."""
    from verify.instance import CheckOptions, check_instance

    return check_instance(instance, CheckOptions(simulate=simulate, seed=seed))


def run_claim(claim_id: str, profile: str = "ci", *, seed: int = 0) -> CheckResult:
    """One registered claim's check at ``profile`` (``"ci"`` or ``"thorough"``), as ``fedcheck report`` runs it
    (an exception becomes an ``error`` verdict carrying its traceback)."""
    from verify.records import CheckContext
    from verify.registry import get_claim
    from verify.runner import run_claim as _run_claim

    return _run_claim(get_claim(claim_id), CheckContext(profile=profile, seed=seed))
