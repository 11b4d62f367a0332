"""theory.pgfl.stability keeps its own ARNOLDI_TOL (theory never imports verify): it must stay verify's value."""

from theory.pgfl.stability import ARNOLDI_TOL as THEORY_ARNOLDI_TOL
from verify.tolerance import ARNOLDI_TOL


def test_the_theory_arnoldi_tolerance_is_verify_s():
    assert THEORY_ARNOLDI_TOL == ARNOLDI_TOL
