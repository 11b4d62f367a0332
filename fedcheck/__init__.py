"""fedcheck: numerical checks of the theorems of a family of federated-learning papers.

The console script ``fedcheck`` lives in :mod:`fedcheck.cli`; the toolkit itself is the packages
``theory`` (closed forms), ``reference_impl`` (simulations), ``verify`` (claims and checks) and
``reports`` (HTML/JSON/figures).
"""
