"""Keep dp-accounting's absl warnings off the user's terminal while fedcheck calls it.

dp-accounting logs one absl ``WARNING`` line per Rényi order it cannot use (a negative RDP value from rounding at a
huge noise multiplier, a fractional order whose series does not converge); one accountant call can print dozens of
lines that say nothing the caller does not already handle (fedcheck validates its inputs and reports non-finite
totals itself). :func:`quiet_dp_accounting` raises the ``absl`` logger's threshold to ERROR for the duration of a
``with`` block and restores it afterwards; errors still reach the terminal.
"""

from __future__ import annotations

import contextlib
import logging

__all__ = ["quiet_dp_accounting"]


@contextlib.contextmanager
def quiet_dp_accounting():
    """Context manager: absl warnings (dp-accounting's) are dropped inside the block, errors are kept.

    Examples
    --------
    >>> import logging
    >>> with quiet_dp_accounting():
    ...     logging.getLogger("absl").getEffectiveLevel() >= logging.ERROR
    True
    """
    logger = logging.getLogger("absl")
    previous = logger.level
    logger.setLevel(max(logging.ERROR, previous))
    try:
        yield
    finally:
        logger.setLevel(previous)
