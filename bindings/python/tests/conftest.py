"""Shared by the tests: the package under test is the installed wheel, never the source tree."""

import os
import pathlib

import pytest

import lockstep

ROOT = pathlib.Path(__file__).resolve().parents[3]


def pytest_configure(config):
    installed = pathlib.Path(lockstep.__file__).resolve()
    if "site-packages" not in installed.parts:
        raise pytest.UsageError(f"lockstep imported from {installed}, not an installed wheel")


@pytest.fixture(scope="session")
def lockstep_bin():
    """The CLI whose bytes the package must give (LOCKSTEP_BIN, or the workspace's debug build)."""
    path = pathlib.Path(os.environ.get("LOCKSTEP_BIN", ROOT / "target" / "debug" / "lockstep"))
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing: cargo build -p lockstep-cli, or set LOCKSTEP_BIN")
    return path


@pytest.fixture(scope="session")
def root():
    return ROOT
