r"""The seeds of an experiment's replicates: one function, :func:`replicate_seed`, for every design.

Replicate :math:`i` of a design fixes the instance, the data and every random draw of all its arms (common random
numbers), so its seeds depend only on the design's seed *key*, the root seed of the run and :math:`i` (and, where a
design draws a fresh instance per grid point, the point's index): never on the number of replicates, the stage,
the claim or the executor. Later stages extend earlier ones, and ``fedcheck report --only`` reproduces every
number.

Three derivations are in use; each is kept exactly, so that no number moves (``scheme``):

``"spawn"`` (the default)
    The key's *family sequence* is ``SeedSequence([root_seed, *key])`` (a string key contributes its UTF-8 bytes:
    the sequence a check gets from ``CheckContext.seed_sequence(key)``); replicate :math:`i` is its child
    :math:`i` (``spawn_key=(i,)``), stream :math:`s` of the replicate its grandchild :math:`(i, s)` (the
    ``spawn(k)[s]`` of the child). With a grid-point index :math:`p` the child is :math:`i\cdot` :data:`POINT_STRIDE`
    :math:` + p`. Without a replicate: the family sequence itself (e.g. one stream per block of replicates).
``"root-list"``
    ``SeedSequence([R, i, s])`` with :math:`R` the first 32-bit word of the family sequence: the integer-root
    convention of :func:`reference_impl.npfl_rl.simulate_replicates`, so that ``fedcheck run npfl-rl`` reproduces the
    numbers.
``"key-list"``
    ``SeedSequence([*key, root_seed, i])`` (integer key; without a replicate ``[*key, root_seed]``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["POINT_STRIDE", "SCHEMES", "replicate_seed"]

#: The derivations :func:`replicate_seed` offers.
SCHEMES = ("spawn", "root-list", "key-list")
#: Child index of replicate i at grid point p under ``"spawn"``: i * POINT_STRIDE + p (0 <= p < POINT_STRIDE).
POINT_STRIDE = 100


def _index(name: str, value, *, below: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0 or (
            below is not None and value >= below):
        limit = f"[0, {below})" if below is not None else "[0, inf)"
        raise ValueError(f"{name} must be an integer in {limit}, got {value!r}")
    return int(value)


def _entropy(key) -> list[int]:
    if isinstance(key, str) and key:
        return list(key.encode())
    if isinstance(key, tuple) and key and all(not isinstance(k, bool) and isinstance(k, (int, np.integer))
                                              and k >= 0 for k in key):
        return [int(k) for k in key]
    raise ValueError(f"key must be a non-empty string or a non-empty tuple of integers >= 0, got {key!r}")


def replicate_seed(key: str | tuple[int, ...], root_seed: int, replicate: int | None = None, *,
                   stream: int | None = None, point: int | None = None,
                   scheme: str = "spawn") -> np.random.SeedSequence:
    """The seed sequence of replicate ``replicate`` (stream ``stream``, grid point ``point``) of a design.

    Parameters
    ----------
    key : str or tuple of int
        The design's seed key (its family of replicates; every claim on the design sees the same replicates).
    root_seed : int
        The run's root seed (``ctx.seed``), >= 0.
    replicate : int, optional
        The replicate index i >= 0; None: the key's family sequence (``"spawn"``, ``"key-list"``).
    stream : int, optional
        A stream of the replicate (e.g. 0 for the data, 1 for the algorithm's draws).
    point : int, optional
        A grid point's index in [0, :data:`POINT_STRIDE`) for a design that draws a fresh instance per point
        (``"spawn"`` only).
    scheme : {"spawn", "root-list", "key-list"}
        The derivation (module notes).

    Returns
    -------
    numpy.random.SeedSequence
        A fresh sequence (``default_rng(seq)``, ``seq.spawn(k)`` and ``seq.generate_state(1)`` are then the same at
        every call).

    Examples
    --------
    >>> data, algorithm = replicate_seed("toy", 0, 3).spawn(2)
    >>> bool((replicate_seed("toy", 0, 3, stream=1).generate_state(2) == algorithm.generate_state(2)).all())
    True
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    entropy = _entropy(key)
    root_seed = _index("root_seed", root_seed)
    replicate = None if replicate is None else _index("replicate", replicate)
    stream = None if stream is None else _index("stream", stream)
    if point is not None and scheme != "spawn":
        raise ValueError(f"point is only for scheme 'spawn', got scheme {scheme!r}")
    if scheme == "spawn":
        family = [root_seed, *entropy]
        if replicate is None:
            if point is not None or stream is not None:
                raise ValueError("point and stream need a replicate")
            return np.random.SeedSequence(family)
        child = replicate if point is None else replicate * POINT_STRIDE + _index("point", point, below=POINT_STRIDE)
        return np.random.SeedSequence(family, spawn_key=(child,) if stream is None else (child, stream))
    if scheme == "root-list":
        if replicate is None or stream is None:
            raise ValueError("scheme 'root-list' needs a replicate and a stream")
        root = int(np.random.SeedSequence([root_seed, *entropy]).generate_state(1)[0])
        return np.random.SeedSequence([root, replicate, stream])
    if not isinstance(key, tuple):
        raise ValueError(f"scheme 'key-list' needs an integer key, got {key!r}")
    if stream is not None:
        raise ValueError("scheme 'key-list' has no streams")
    return np.random.SeedSequence([*entropy, root_seed] + ([] if replicate is None else [replicate]))
