"""soac.emit: the files soac emit writes, byte for byte."""

import filecmp
import os

import pytest

import soac
from conftest import run_soac, source

PENDULUM = source("examples", "robots", "double_pendulum_simple.urdf")


def test_files_are_soac_emits(tmp_path):
    robot = soac.Robot(PENDULUM)
    paths = soac.emit(robot, tmp_path / "py", name="pend", sources=2)
    run_soac("emit", "--robot", PENDULUM, "--out", str(tmp_path / "cli"), "--name", "pend", "--sources", "2")
    names = sorted(os.listdir(tmp_path / "cli"))
    assert names == ["pend.hpp", "pend_1.cpp", "pend_2.cpp"]
    assert paths == [str(tmp_path / "py" / n) for n in names]  # the header first
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "py", tmp_path / "cli", names, shallow=False)
    assert (mismatch, errors) == ([], [])


def test_kernel_file_and_default_name(tmp_path):
    kernels = tmp_path / "k.soa"
    kernels.write_text("kernel fd(q, qd, T) = calM^-1 (T - C);\n")
    paths = soac.emit(PENDULUM, tmp_path / "out", kernels=kernels, sources=1)
    assert [os.path.basename(p) for p in paths] == ["robot_2dof_planar.hpp", "robot_2dof_planar.cpp"]
    assert "fd(const double* q, const double* qd, const double* T" in open(paths[0]).read()


def test_bad_name_writes_nothing(tmp_path):
    with pytest.raises(soac.Error, match="name 'int'"):
        soac.emit(PENDULUM, tmp_path / "out", name="int")
    assert not (tmp_path / "out").exists()
