"""soac.Robot: what soac model prints, the numbering as data, and the loaders' errors."""

import pathlib

import numpy as np
import pytest

import soac
from conftest import PANDA, TALOS, run_soac, soac_error, source


def test_str_is_soac_model(panda):
    assert str(panda) == run_soac("model", "--robot", PANDA)


def test_floating_with_tips_is_soac_model():
    tips = ["left_sole_link", "right_sole_link"]
    robot = soac.Robot.from_urdf(TALOS, floating=True, tips=tips)
    args = ["model", "--robot", TALOS, "--floating"] + [a for t in tips for a in ("--tip", t)]
    assert str(robot) == run_soac(*args)
    assert robot.tips == tips
    assert robot.bodies[-1].type == "free" and robot.bodies[-1].joint == "root_joint"


def test_arms_and_random_tree_are_soac_model():
    with pytest.warns(UserWarning):  # baxter's grippers have mimic joints
        baxter = soac.Robot(source("examples", "robots", "baxter.urdf"))
    assert str(baxter) == run_soac("model", "--robot", source("examples", "robots", "baxter.urdf"))
    tree = soac.Robot.random_tree(12, seed=3, floating=True)
    assert str(tree) == run_soac("model", "--random-tree", "12:3", "--floating")
    assert tree.path is None and tree.source == "random tree (seed 3, 12 bodies)"


def test_numbering_as_data(panda):
    assert (panda.nq, panda.nv, panda.n) == (9, 9, 9)
    assert panda.joints == [b.joint for b in sorted(panda.bodies, key=lambda b: b.v)]
    for b in panda.bodies:
        assert b.parent == -1 or b.parent > b.index  # tip to base
        assert all(panda.bodies[c].parent == b.index for c in b.children)
    assert panda.tips == ["panda_hand_tcp"]
    tcp = [f for f in panda.frames if f.name == "panda_hand_tcp"][0]
    assert tcp.body_link == "panda_link7" and tcp.R.shape == (3, 3) and tcp.p.shape == (3,)
    assert panda.world_links == ["panda_link0"]
    assert panda.mimic_joints == [("panda_finger_joint2", "panda_finger_joint1")]
    assert np.array_equal(panda.gravity, [0, 0, -9.81])
    assert np.array_equal(panda.neutral_configuration(), np.zeros(9))


def test_mimic_joints_warn():
    with pytest.warns(UserWarning, match="mimic joints treated as independent: panda_finger_joint2"):
        soac.Robot(PANDA)


def test_gravity():
    moon = soac.Robot(TALOS, gravity=(0, 0, -1.62))
    assert np.array_equal(moon.gravity, [0, 0, -1.62])
    with pytest.raises(soac.Error, match="gravity"):
        soac.Robot(TALOS, gravity=(0, 0))


def test_random_state_is_soac_evals(panda):
    state = panda.random_state(7)
    printed = run_soac("eval", "qd", "--robot", PANDA, "--seed", "7")
    for name in ("q", "qd", "qdd", "f0"):
        line = [l for l in printed.splitlines() if l.strip().startswith(name + ":")][0]
        assert np.array_equal(state[name], [float(x) for x in line.split(":")[1].split()])


@pytest.mark.parametrize(
    "urdf", ["cycle.urdf", "missing_child_link.urdf", "negative_mass.urdf", "xml_syntax.urdf", "massless_leaf.urdf"]
)
def test_bad_urdf_raises_soacs_message(urdf):
    path = source("tests", "data", "urdf", urdf)
    with pytest.raises(soac.Error) as e:
        soac.Robot(path)
    assert str(e.value) == soac_error("model", "--robot", path)
    assert isinstance(e.value, ValueError)


def test_missing_file():
    with pytest.raises(soac.Error, match="no-such.urdf"):
        soac.Robot("no-such.urdf")


def test_unknown_tip_names_robot_and_frame():
    with pytest.raises(soac.Error) as e:
        soac.Robot(TALOS, tips=["left_sole_link", "nope"])
    assert str(e.value) == f"{TALOS}: tips 'nope': no link or frame of that name"
    # soac's message, the option named as the argument is
    assert str(e.value) == soac_error("model", "--robot", TALOS, "--tip", "nope").replace("--tip", "tips")


def test_path_like():
    robot = soac.Robot(pathlib.Path(TALOS))
    assert robot.path == TALOS and robot.nv == 32
