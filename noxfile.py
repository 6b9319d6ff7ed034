"""Developer targets (`pip install nox`), each in a virtual environment nox keeps between runs.

    nox                # lint, type, fast
    nox -s fast        # the tests not marked slow
    nox -s full        # every test: the README's (and CI's) test command
    nox -s lint        # ruff check, ruff format --check, the layer contract
    nox -s type        # mypy over the package, through shim/ (see [tool.mypy] in pyproject.toml)

.ci/run runs the same commands (lint, type and the layer check, then the full suite) in the
environment CI installs, without nox.
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "type", "fast"]
nox.options.reuse_venv = "yes"  # installing numpy and friends again on every run costs minutes


# the README's (and .ci/run's) test extras: with fewer, the TF1 differential, Ray cluster and image
# codec tests skip
TEST_EXTRAS = ".[test,examples,tf1,ray,image]"


def _tests(session: nox.Session, select: str = "") -> None:
    """The README's two pytest runs, of the tests ``select`` (a marker expression) picks: two
    pytest-xdist workers for those not marked timing, then the timing ones alone."""
    session.install("-e", TEST_EXTRAS)
    both = f"({select}) and " if select else ""
    parallel = ["-n", "2", "--dist", "loadgroup", "-m", f"{both}not timing"]
    session.run("python", "-m", "pytest", "-q", *parallel, *session.posargs)
    session.run("python", "-m", "pytest", "-q", "-m", f"{both}timing", *session.posargs)


@nox.session
def fast(session: nox.Session) -> None:
    """The suite without the tests marked slow (soak, Ray cluster, the digits training)."""
    _tests(session, "not slow")


@nox.session
def full(session: nox.Session) -> None:
    """Every test, as CI runs them."""
    _tests(session)


@nox.session
def lint(session: nox.Session) -> None:
    """The lint gate: ruff's rules, ruff's formatting, and the import layers of docs/design.md section 2."""
    session.install("-e", ".[lint]")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("python", "scripts/check_layers.py")


@nox.session(name="type")
def type_check(session: nox.Session) -> None:
    """The type gate: mypy with the settings in pyproject.toml."""
    session.install("-e", ".[lint]")
    session.run("mypy")
