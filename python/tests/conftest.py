"""Fixtures of the module's tests: the soac command line and the C++ reference program are
what the module is held to (python/CMakeLists.txt sets the environment; docs/python.md)."""

import os
import subprocess
import warnings

import pytest

import soac

SOURCE_DIR = os.environ.get("SOAC_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SOAC = os.environ.get("SOAC")
REFERENCE = os.environ.get("SOAC_REFERENCE")


def source(*parts):
    return os.path.join(SOURCE_DIR, *parts)


PANDA = source("examples", "robots", "panda.urdf")
TALOS = source("examples", "robots", "talos_reduced.urdf")


def run_soac(*args, check=True):
    """soac's stdout; with check=False the CompletedProcess."""
    if not SOAC:
        pytest.skip("SOAC (the soac executable) is not set: run the tests through ctest")
    done = subprocess.run([SOAC, *args], capture_output=True, text=True, cwd=SOURCE_DIR)
    if check:
        assert done.returncode == 0, done.stderr
        return done.stdout
    return done


def soac_error(*args):
    """The message of soac's error for these arguments: its first stderr line, as soac.Error carries it."""
    done = run_soac(*args, check=False)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    line = [l for l in done.stderr.splitlines() if not l.startswith("soac: warning:")][0]
    return line.removeprefix("soac: error: ")


@pytest.fixture(scope="session")
def panda():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its mimic joint (test_robot checks the warning)
        return soac.Robot(PANDA)


@pytest.fixture(scope="session")
def talos():
    return soac.Robot(TALOS, floating=True)
