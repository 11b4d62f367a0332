"""Mean and mean-square analysis of PAO-Fed: expectations, the block-Kronecker 𝓕, MSD, stability.

Modules: :mod:`~theory.msd.instance` (the analysis instance), :mod:`~theory.msd.block` (bvec, Tracy-Singh
product), :mod:`~theory.msd.expectations` (c_k, beta moments, E[A_e], E[B_e], the mean matrix),
:mod:`~theory.msd.naive` (explicit Q_A, Q_B, F; dense, N <= 100), :mod:`~theory.msd.structured`
(matrix-free (S1)/(S2), rho(F) by Arnoldi), :mod:`~theory.msd.diagonal` (exact scalar reduction for
diagonal R_k, seed model), :mod:`~theory.msd.white` (white R_k, both models: N_b^2 problems),
:mod:`~theory.msd.grouped` (white R_k and exchangeable client classes: per-class blocks),
:mod:`~theory.msd.routes` (route choice, certified thresholds), :mod:`~theory.msd.stability` (paper bounds, exact
thresholds).
"""

from theory.msd.block import block_kron, bvec, bvec_inverse
from theory.msd.diagonal import ScalarProblem, diagonal_msd_steady_state, diagonal_msd_transient, scalar_problems
from theory.msd.expectations import (
    AnalysisMoments,
    analysis_moments,
    beta_moments,
    block_index,
    expected_A,
    expected_B,
    expected_server_weight,
    mean_matrix,
    mean_operator,
    nonempty_group_probability,
    poisson_binomial_pmf,
    source_blocks,
)
from theory.msd.instance import PAOFedInstance, reference_instance, selection_second_moment
from theory.msd.naive import (
    NAIVE_MAX_N,
    f_matrix,
    middle_factor,
    msd_steady_state_naive,
    msd_transient_naive,
    noise_vector_h,
    qa_matrix,
    qb_matrix,
    r4_gaussian,
    spectral_radius_naive,
)
from theory.msd.per_client import ClassMeanEstimate, class_mean_instance, class_mean_msd_estimate, class_mean_spread
from theory.msd.stability import (
    ThresholdBracket,
    mean_square_threshold,
    mean_threshold,
    paper_mean_bound,
    paper_mean_square_bound,
    spectral_radius_M,
    threshold_bracket,
)
from theory.msd.structured import (
    MODELS,
    SteadyState,
    apply_A,
    apply_B,
    apply_F,
    apply_R,
    initial_covariance,
    msd_steady_state,
    msd_transient,
    noise_covariance,
    spectral_radius_F,
)

__all__ = [
    "MODELS",
    "NAIVE_MAX_N",
    "AnalysisMoments",
    "ClassMeanEstimate",
    "PAOFedInstance",
    "ScalarProblem",
    "SteadyState",
    "ThresholdBracket",
    "analysis_moments",
    "apply_A",
    "apply_B",
    "apply_F",
    "apply_R",
    "beta_moments",
    "block_index",
    "block_kron",
    "bvec",
    "bvec_inverse",
    "class_mean_instance",
    "class_mean_msd_estimate",
    "class_mean_spread",
    "diagonal_msd_steady_state",
    "diagonal_msd_transient",
    "expected_A",
    "expected_B",
    "expected_server_weight",
    "f_matrix",
    "initial_covariance",
    "mean_matrix",
    "mean_operator",
    "mean_square_threshold",
    "mean_threshold",
    "middle_factor",
    "msd_steady_state",
    "msd_steady_state_naive",
    "msd_transient",
    "msd_transient_naive",
    "noise_covariance",
    "noise_vector_h",
    "nonempty_group_probability",
    "paper_mean_bound",
    "paper_mean_square_bound",
    "poisson_binomial_pmf",
    "qa_matrix",
    "qb_matrix",
    "r4_gaussian",
    "reference_instance",
    "scalar_problems",
    "selection_second_moment",
    "source_blocks",
    "spectral_radius_F",
    "spectral_radius_M",
    "spectral_radius_naive",
    "threshold_bracket",
]
