r"""The experiment harness: every paired-arm experiment claim, declared once and decided by one rule.

An *experiment* is a set of arms (algorithm + setting) simulated on the same replicates with common random
numbers: replicate :math:`i` fixes the instance, the data and every random draw for all arms. Its statements are
orderings or equivalences of the median paired difference of a read-out, decided by exact sign tests over staged
replicates and a grid of the choices the paper does not report (:data:`DECISION_RULE`).

The audit's rules are enforced here, not remembered per paper: a declaration must declare the choices the paper
leaves unsaid (a grid, or a reason there is none) and the kind of each read-out; an ordering needs an effect beyond
its kind's practical margin (:mod:`~verify.harness.margins`); a verdict whose direction flips across the grid is
"depends on" the choice; a comparison with a reconstructed baseline decides neither way.

One concern per module:

* :mod:`~verify.harness.sign_test` -- exact sign-test bounds, p-values and the replicates that would decide;
* :mod:`~verify.harness.statements` -- :class:`Statement` (``below`` / ``above`` / ``within``) and the evidence on one;
* :mod:`~verify.harness.seeding` -- :func:`replicate_seed`, the seeds of replicate ``i`` of a design;
* :mod:`~verify.harness.design` -- :class:`Design`: how arms are simulated, read out, staged and batched;
* :mod:`~verify.harness.store` -- the bounded arm store and :func:`simulate_arms`;
* :mod:`~verify.harness.family` -- :class:`Family`: the declared members that share a family-wise alpha;
* :mod:`~verify.harness.margins` -- :data:`READOUT_KINDS`: the practical margin of each kind of read-out, justified;
* :mod:`~verify.harness.decision` -- :func:`decide`, the rule over stages and grid, and the reproduction;
* :mod:`~verify.harness.declaration` -- :func:`experiment`: one declaration gives the claim, its check and its
  reproduction;
* :mod:`~verify.harness.figures` -- :func:`curve_figure`;
* :mod:`~verify.harness.catalog` -- the experiments declared in this process.

The harness holds no paper specifics and imports no paper module (nor :mod:`verify.registry`, which imports them).
"""

from verify.harness.catalog import declared
from verify.harness.decision import DECISION_RULE, decide, evaluate_statement, prefetch, reproduce_experiment
from verify.harness.declaration import (
    BASELINE_SOURCES,
    Baseline,
    DataFile,
    Experiment,
    experiment,
    reconstructed_reason,
)
from verify.harness.design import Design, Pinned
from verify.harness.family import FAMILY_ALPHA, Family, validate_families
from verify.harness.figures import curve_figure
from verify.harness.margins import READOUT_KINDS, ReadoutKind, practical_margin
from verify.harness.seeding import replicate_seed
from verify.harness.sign_test import needed_replicates, sign_bounds
from verify.harness.statements import (
    Statement,
    StatementOutcome,
    Term,
    above,
    below,
    decide_statement,
    swapped,
    within,
)
from verify.harness.store import clear_store, simulate_arms

__all__ = [
    "BASELINE_SOURCES",
    "DECISION_RULE",
    "FAMILY_ALPHA",
    "Baseline",
    "DataFile",
    "Design",
    "Experiment",
    "Family",
    "Pinned",
    "READOUT_KINDS",
    "ReadoutKind",
    "Statement",
    "StatementOutcome",
    "Term",
    "above",
    "below",
    "clear_store",
    "curve_figure",
    "decide",
    "decide_statement",
    "declared",
    "evaluate_statement",
    "experiment",
    "needed_replicates",
    "practical_margin",
    "prefetch",
    "reconstructed_reason",
    "replicate_seed",
    "reproduce_experiment",
    "sign_bounds",
    "simulate_arms",
    "swapped",
    "validate_families",
    "within",
]
