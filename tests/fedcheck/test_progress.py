"""Progress on stderr: only on a terminal, only for work expected to take a few seconds, never with --quiet."""

from __future__ import annotations

import io
import time

import pytest

from fedcheck.run._output import Progress


class _Terminal(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("tty", "quiet", "expected", "shown"), [
    (True, False, 10.0, True),
    (True, True, 10.0, False),    # --quiet
    (False, False, 10.0, False),  # stderr is a file or a pipe
    (True, False, 0.5, False),    # quick: no progress line
])
def test_progress_is_shown_only_where_it_helps(monkeypatch, tty, quiet, expected, shown):
    stream = _Terminal(tty)
    monkeypatch.setattr("sys.stderr", stream)
    with Progress("fedcheck run x", expected, quiet=quiet) as progress:
        if progress.enabled:
            time.sleep(1.3)
    assert progress.enabled is shown
    text = stream.getvalue()
    assert ("fedcheck run x: running for" in text) is shown
    assert text == "" or text.endswith("\r\x1b[K")  # the line is erased at the end


def test_privacy_account_with_many_distinct_rounds_expects_seconds(monkeypatch, capsys):
    """A long schedule (20,000 distinct rounds: about 6 s of dp-accounting) turns the progress line on; --quiet
    turns it off."""
    import fedcheck.privacy as privacy

    seen = []
    monkeypatch.setattr(privacy, "_progress", lambda label, seconds, quiet: seen.append((seconds, quiet)) or
                        Progress(label, 0.0, quiet=True))
    monkeypatch.setattr("theory.privacy.accounting.epsilon_rdp_accountant", lambda rhos, delta: 1.0)
    monkeypatch.setattr("theory.privacy.accounting.epsilon_pld_accountant", lambda rhos, delta: 1.0)
    from fedcheck import cli

    args = ["privacy", "account", "--rounds", "20000", "--delta", "1e-5", "--sensitivity", "1", "--variance-first",
            "100", "--variance-decay", "0.9999"]
    assert cli.main(args) == 0 and cli.main([*args, "--quiet"]) == 0
    capsys.readouterr()
    assert seen[0][0] >= 3.0 and seen[0][1] is False and seen[1][1] is True
