"""PAO-Fed MSD with a different R_k for every client at the paper's scale: the refusal and the class-mean estimate.

Run: .venv/bin/python benchmarks/bench_paofed_msd_per_client.py [--D 200] [--mu 0.004] [--ridge 1e-2] [--seed 2026]
[--write DIR]
Writes the instance of fedcheck/examples/paofed_paper_groups.toml (K = 256 in the paper's four availability groups of
64, l_max = 10, window selection) whose clients each have their own RFF covariance and noise variance
(theory.msd.classes_rff.rff_client_covariances, docs/papers/paofed.md#choice-data, plus ``--ridge`` I) into a
temporary directory, then times, as whole processes, ``fedcheck msd CONFIG --json`` (refused: no exact route fits)
and ``fedcheck msd CONFIG --method class-mean --json`` (the uncertified estimate, docs/msd.md#per-client), and prints
wall time, CPU time of the process and its children, and the answers.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_paofed_msd_groups import GROUP_P  # benchmarks/ (scripts run from this folder's path)

from theory.msd.classes_rff import rff_client_covariances


def write_config(folder: Path, D: int, mu: float, ridge: float, seed: int) -> Path:
    """The ``[instance]`` of fedcheck/examples/paofed_paper_groups.toml (m = max(1, D // 50), window selection, delta =
    0.2, alpha_l = 0.2^l) with per-client lists: the groups' p, and each client's own RFF covariance and noise."""
    R, s2 = rff_client_covariances(D, 256, np.random.default_rng(seed), ridge=ridge)
    np.save(folder / "R.npy", R)
    w = np.random.default_rng(D).standard_normal(D)
    path = folder / "per_client.toml"
    path.write_text(f"[instance]\nK = 256\nD = {D}\nl_max = 10\nm = {max(1, D // 50)}\nselection = \"window\"\n"
                    f"delta = 0.2\nalpha = {(0.2 ** np.arange(11)).tolist()}\nmu = {mu!r}\n"
                    f"w_star = {(w / np.linalg.norm(w)).tolist()}\np = {np.repeat(GROUP_P, 64).tolist()}\n"
                    f"sigma2_eta = {s2.tolist()}\nR_npy = \"R.npy\"\n")
    return path


def timed(args: list[str]) -> tuple[int, float, float, str, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return proc.returncode, wall, cpu, proc.stdout, proc.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--D", type=int, default=200)
    ap.add_argument("--mu", type=float, default=0.004)
    ap.add_argument("--ridge", type=float, default=1e-2)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--write", type=Path, metavar="DIR", help="only write the configuration (per_client.toml, R.npy) "
                    "into DIR, a new or empty folder, and print its path (e.g. for --simulate RUNS --plot FILE)")
    args = ap.parse_args()
    if args.write is not None:
        if args.write.exists() and any(args.write.iterdir()):
            ap.error(f"argument --write: {args.write} is not empty (nothing is overwritten)")
        args.write.mkdir(parents=True, exist_ok=True)
        print(write_config(args.write, args.D, args.mu, args.ridge, args.seed))
        return
    fedcheck = str(Path(sys.executable).with_name("fedcheck"))
    with tempfile.TemporaryDirectory() as tmp:
        config = write_config(Path(tmp), args.D, args.mu, args.ridge, args.seed)
        rc, wall, cpu, _, err = timed([fedcheck, "msd", str(config), "--json", "--quiet"])
        print(f"fedcheck msd (auto): exit {rc} in {wall:.1f} s wall, {cpu:.1f} CPU-s: {err.strip()[:160]}...")
        rc, wall, cpu, out, err = timed([fedcheck, "msd", str(config), "--method", "class-mean", "--json", "--quiet"])
        if rc != 0:
            print(f"fedcheck msd --method class-mean: exit {rc}: {err.strip()}")
            return
        report = json.loads(out)
        models = ", ".join(f"{m} {e['msd_db']:.3f} dB (residual {e['residual']:.1e}, {e['solver']})"
                           for m, e in report["models"].items())
        print(f"fedcheck msd --method class-mean: {wall:.1f} s wall, {cpu:.1f} CPU-s (process and children), peak RSS "
              f"of the largest child {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1e6:.2f} GB; "
              f"spread {report['class_mean_estimate']['spread']:.3g}; {models}")


if __name__ == "__main__":
    main()
