"""fedcheck: numerical checks of the theorems of a family of federated-learning papers.

The console script ``fedcheck`` lives in :mod:`fedcheck.cli` (``python -m fedcheck`` runs it too); the toolkit
itself is the packages ``theory`` (closed forms), ``reference_impl`` (simulations), ``verify`` (claims and checks)
and ``reports`` (HTML/JSON/figures).
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("fedcheck")
except _metadata.PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
