"""Former module of ``fedcheck msd``: kept for callers outside ``fedcheck/``; use :mod:`fedcheck.msd`."""

from fedcheck.msd import msd_report

__all__ = ["msd_report"]
