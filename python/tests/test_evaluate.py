"""soac.evaluate: soac eval's values, dense and by sweeps, for a random or a given state."""

import numpy as np
import pytest

import soac
from conftest import PANDA, TALOS, run_soac, source


def printed_eval(*args):
    """soac eval --precision 17: (state dict, dense, sweeps) as printed (17 digits read back exactly)."""
    out = run_soac("eval", *args, "--precision", "17").splitlines()
    state = {}
    for line in out:
        name, _, values = line.strip().partition(":")
        if name in ("q", "qd", "qdd", "T", "f0") and line.startswith("  "):
            state[name] = np.array([float(x) for x in values.split()])

    def matrix(title):
        at = next(i for i, l in enumerate(out) if l.startswith(title + " ("))
        rows = int(out[at].split("(")[1].split(" x ")[0])
        return np.array([[float(x) for x in l.split()] for l in out[at + 1 : at + 1 + rows]])

    return state, matrix("dense"), matrix("sweeps")


@pytest.mark.parametrize("expression", ["calM^-1 (T - C)", "J calM^-1 J*", "H phi M phi* H*"])
def test_random_state_is_soac_evals(panda, expression):
    e = soac.evaluate(expression, panda, seed=5)
    state, dense, sweeps = printed_eval(expression, "--robot", PANDA, "--seed", "5")
    for name, value in state.items():
        assert np.array_equal(e.state[name], value), name
    if dense.shape[1] == 1:
        dense, sweeps = dense[:, 0], sweeps[:, 0]
    assert np.array_equal(e.dense, dense) and np.array_equal(e.sweeps, sweeps)
    assert e.max_abs_diff < 1e-9


def test_given_state_is_soac_evals_state_file(panda):
    # T given, qdd follows from the equations of motion: as soac eval --state torques.state
    q = [0, -0.5, 0, -2, 0, 1.5, 0.8, 0.02, 0.02]
    qd = [0.1, 0.2, 0, -0.3, 0, 0, 0, 0, 0]
    T = [1, -2, 3, -4, 5, -6, 7, 0.5, -0.5]
    e = soac.evaluate("calM^-1 (T - C)", panda, {"q": q, "qd": qd, "T": np.array(T)})
    state, dense, _ = printed_eval("calM^-1 (T - C)", "--robot", PANDA, "--state", source("tests", "data", "state", "torques.state"))
    assert np.array_equal(e.state["qdd"], state["qdd"]) and np.array_equal(e.state["T"], T)
    assert np.array_equal(e.dense, dense[:, 0])
    assert np.allclose(e.dense, e.state["qdd"], rtol=0, atol=1e-9)
    # nothing given: neutral configuration, at rest
    rest = soac.evaluate("qd", panda, {})
    assert np.array_equal(rest.state["q"], np.zeros(9)) and np.array_equal(rest.dense, np.zeros(9))


def test_bad_state_raises(panda, talos):
    with pytest.raises(soac.Error, match=r"^state: qd has 3 values, the robot needs 9$"):
        soac.evaluate("qd", panda, {"qd": [1, 2, 3]})
    with pytest.raises(soac.Error, match=r"^state: unknown vector 'v' \(expected q, qd, qdd, T or f0\)$"):
        soac.evaluate("qd", panda, {"v": [1]})
    with pytest.raises(soac.Error, match=r"^state: q\[2\] = nan is not a finite number$"):
        soac.evaluate("qd", panda, {"q": [0, 0, np.nan, 0, 0, 0, 0, 0, 0]})
    q = talos.neutral_configuration()
    q[6] = 2.0  # the free-flyer's quaternion w
    with pytest.raises(soac.Error, match=r"^state: q: the quaternion of joint 'root_joint' \(values 4 to 7\) has norm 2"):
        soac.evaluate("qd", talos, {"q": q})


def test_expression_errors(panda):
    with pytest.raises(soac.Error, match=r"^<expression>:1:1: error: cannot multiply H"):
        soac.evaluate("H H", panda)


def test_floating_robot(talos):
    e = soac.evaluate("calM", talos, seed=2)
    state, dense, sweeps = printed_eval("calM", "--robot", TALOS, "--floating", "--seed", "2")
    assert e.dense.shape == (talos.nv, talos.nv) and np.array_equal(e.dense, dense)
    assert np.array_equal(e.state["q"], state["q"])
