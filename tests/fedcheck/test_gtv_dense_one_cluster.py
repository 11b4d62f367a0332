"""`run gtv` with the dense generator and one cluster: n_inter's default does not apply and is not in the way; given
explicitly it is refused as not applicable."""

import subprocess
import sys


def _run(tmp_path, text):
    path = tmp_path / "one.toml"
    path.write_text(text)
    return subprocess.run([sys.executable, "-m", "fedcheck", "run", "gtv", str(path), "--iterations", "5"],
                          capture_output=True, text=True, timeout=300)


def test_one_dense_cluster_runs(tmp_path):
    done = _run(tmp_path, "[graph]\ngenerator = 'dense'\nN = 6\nk = 1\neps = 0.5\n")
    assert done.returncode == 0, done.stderr


def test_n_inter_with_one_cluster_is_refused(tmp_path):
    done = _run(tmp_path, "[graph]\ngenerator = 'dense'\nN = 6\nk = 1\neps = 0.5\nn_inter = 0\n")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "graph.n_inter does not apply here" in done.stderr
