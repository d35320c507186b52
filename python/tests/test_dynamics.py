"""soac.compile: every kernel's values bit for bit those of the C++ API (the reference program
built with these tests runs pipeline::Dynamics alone and prints %a), a batch bit for bit the
loop over its states, and errors naming the kernel."""

import subprocess
import threading

import numpy as np
import pytest

import soac
from conftest import PANDA, REFERENCE, TALOS, source

STANDARD = [
    "inverse_dynamics",
    "mass_matrix",
    "forward_dynamics",
    "mass_matrix_inverse",
    "jacobian",
    "lambda",
    "tip_force_correction",
]


def reference(urdf, backend, runs, *options):
    """The C++ API's outputs, bit for bit, for each (kernel, rows) of `runs` (each row: one
    state's inputs concatenated), from one run of the reference program."""
    if not REFERENCE:
        pytest.skip("SOAC_REFERENCE (soa_python_reference) is not set: run the tests through ctest")
    text = "".join(
        kernel + " " + " ".join(float(x).hex() for x in row) + "\n" for kernel, rows in runs for row in rows
    )
    done = subprocess.run([REFERENCE, urdf, backend, *options], input=text, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = iter(done.stdout.splitlines())
    return [np.array([[float.fromhex(x) for x in next(lines).split()] for _ in rows]) for _, rows in runs]


def states(robot, dyn, kernel, count, seed=1):
    """Random inputs for `kernel`: q, qd, qdd, f0 of random states (unit quaternions), T uniform."""
    rng = np.random.default_rng(seed)
    inputs = {name: [] for name, _ in dyn.inputs(kernel)}
    for i in range(count):
        s = robot.random_state(seed * 1000 + i)
        s["T"] = rng.uniform(-1, 1, robot.nv)
        for name in inputs:
            inputs[name].append(s[name])
    return {name: np.array(v) for name, v in inputs.items()}


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def per_state(out):
    """A (B, ...) output as one row per state, column-major within it (the C++ API's layout)."""
    return np.array([np.ravel(o, order="F") for o in out])


@pytest.fixture(scope="module", params=["jit", "runtime"])
def panda_dynamics(request, panda):
    if request.param == "jit" and not soac.has_jit:
        pytest.skip("soac was built without LLVM")
    return soac.compile(panda, backend=request.param)


@pytest.fixture(scope="module")
def standard_inputs(panda, panda_dynamics):
    """Per kernel: random inputs for 6 states, and the C++ API's outputs for them."""
    inputs = {kernel: states(panda, panda_dynamics, kernel, 6) for kernel in STANDARD}
    runs = [(kernel, np.hstack(list(v.values()))) for kernel, v in inputs.items()]
    outputs = reference(PANDA, panda_dynamics.backend, runs)
    return {kernel: (inputs[kernel], out) for kernel, out in zip(STANDARD, outputs)}


@pytest.mark.parametrize("kernel", STANDARD)
def test_kernels_are_the_cpp_apis_bit_for_bit(panda_dynamics, standard_inputs, kernel):
    inputs, expected = standard_inputs[kernel]
    out = getattr(panda_dynamics, kernel)(*inputs.values())
    assert np.array_equal(bits(per_state(out)), bits(expected))


@pytest.mark.parametrize("kernel", STANDARD)
def test_batch_is_the_loop_bit_for_bit(panda, panda_dynamics, kernel):
    dyn = panda_dynamics
    inputs = states(panda, dyn, kernel, 5, seed=2)
    batch = getattr(dyn, kernel)(**inputs)
    assert batch.shape == (5,) + dyn.output_shape(kernel)
    for b in range(5):
        one = dyn.run(kernel, *(v[b] for v in inputs.values()))
        assert one.shape == dyn.output_shape(kernel)
        assert np.array_equal(bits(batch[b]), bits(one))


def test_shapes_and_layout(panda, panda_dynamics):
    dyn = panda_dynamics
    assert dyn.kernels == STANDARD
    assert dyn.inputs("forward_dynamics") == [("q", 9), ("qd", 9), ("T", 9)]
    assert dyn.inputs("tip_force_correction") == [("q", 9), ("f0", 6)]
    assert dyn.output_shape("forward_dynamics") == (9,)
    assert dyn.output_shape("jacobian") == (6, 9) and dyn.output_shape("lambda") == (6, 6)
    q = panda.random_state(3)["q"]
    M = dyn.mass_matrix(q)
    assert M.shape == (9, 9) and np.array_equal(M, M.T)
    J = dyn.jacobian(q)
    assert J.shape == (6, 9)
    # J calM^-1 J* from the kernels agrees with the lambda kernel
    assert np.allclose(J @ dyn.mass_matrix_inverse(q) @ J.T, dyn.lambda_(q), rtol=1e-12, atol=1e-12)
    assert np.array_equal(dyn.lambda_(q), getattr(dyn, "lambda")(q))
    assert "calM^-1 (T - C)" in dyn.forward_dynamics.__doc__
    assert dyn.expression("lambda") == "J calM^-1 J*"


def test_shared_inputs_broadcast_over_the_batch(panda, panda_dynamics):
    dyn = panda_dynamics
    inputs = states(panda, dyn, "forward_dynamics", 4, seed=3)
    T = inputs["T"][0]
    batch = dyn.forward_dynamics(inputs["q"], inputs["qd"], T)  # one T for every state
    for b in range(4):
        assert np.array_equal(bits(batch[b]), bits(dyn.forward_dynamics(inputs["q"][b], inputs["qd"][b], T)))
    empty = dyn.forward_dynamics(np.zeros((0, 9)), np.zeros((0, 9)), T)
    assert empty.shape == (0, 9)


def test_inputs_converted(panda, panda_dynamics):
    dyn = panda_dynamics
    s = panda.random_state(4)
    q32 = s["q"].astype(np.float32)
    strided = np.repeat(s["qd"], 2)[::2]  # not contiguous
    got = dyn.forward_dynamics(list(q32), strided, T=np.arange(9))
    want = dyn.forward_dynamics(q32.astype(np.float64), s["qd"].copy(), np.arange(9.0))
    assert np.array_equal(bits(got), bits(want))


def test_threads_share_a_dynamics(panda, panda_dynamics):
    dyn = panda_dynamics
    inputs = states(panda, dyn, "forward_dynamics", 200, seed=5)
    want = dyn.forward_dynamics(**inputs)
    results = [None] * 4

    def work(i):
        results[i] = dyn.forward_dynamics(**inputs)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(bits(r), bits(want)) for r in results)


def test_floating_base_jit(talos):
    if not soac.has_jit:
        pytest.skip("soac was built without LLVM")
    dyn = soac.compile(talos, ["forward_dynamics", "jacobian"])
    assert dyn.kernels == ["forward_dynamics", "jacobian"]
    inputs = states(talos, dyn, "forward_dynamics", 3)
    assert inputs["q"].shape == (3, 39)
    out = dyn.forward_dynamics(**inputs)
    # The reference compiles the whole standard set: what several kernels share is compiled
    # once there, and computes the same bits.
    [expected] = reference(TALOS, "jit", [("forward_dynamics", np.hstack(list(inputs.values())))], "--floating")
    assert np.array_equal(bits(out), bits(expected))


def test_derivative_kernels(panda):
    dyn = soac.compile(panda, backend="runtime", derivatives=True)
    kernel = "forward_dynamics_derivatives"
    assert dyn.output_shape(kernel) == (9, 18)
    inputs = states(panda, dyn, kernel, 2)
    out = dyn.run(kernel, **inputs)
    [expected] = reference(PANDA, "runtime", [(kernel, np.hstack(list(inputs.values())))], "--derivatives")
    assert np.array_equal(bits(per_state(out)), bits(expected))


def test_errors_name_the_kernel(panda, panda_dynamics):
    dyn = panda_dynamics
    q = np.zeros(9)
    with pytest.raises(soac.Error, match=r"^kernel 'forward_dynamics': input 'qd' has shape \(8,\), the robot needs \(9,\) or \(batch, 9\)$"):
        dyn.forward_dynamics(q, np.zeros(8), q)
    with pytest.raises(soac.Error, match=r"^kernel 'forward_dynamics': input 'T' has 3 states, an earlier input 2$"):
        dyn.forward_dynamics(np.zeros((2, 9)), q, np.zeros((3, 9)))
    with pytest.raises(TypeError, match=r"missing input 'T'"):
        dyn.forward_dynamics(q, q)
    with pytest.raises(TypeError, match=r"has no input 'tau'"):
        dyn.forward_dynamics(q, q, tau=q)
    with pytest.raises(TypeError, match=r"input 'q' given twice"):
        dyn.forward_dynamics(q, q, q, q=q)
    with pytest.raises(soac.Error, match=r"^no kernel 'nope' \(kernels: inverse_dynamics, mass_matrix, "):
        dyn.run("nope", q)
    with pytest.raises(soac.Error, match=r"^no kernel 'nope' \(kernels: inverse_dynamics, .*, mass_matrix_derivative"):
        soac.compile(panda, ["forward_dynamics", "nope"])
    with pytest.raises(soac.Error, match=r"^backend 'gpu': expected 'jit'"):
        soac.compile(panda, backend="gpu")


def test_kernel_selection(panda, tmp_path):
    assert soac.compile(panda, "mass_matrix", backend="runtime").kernels == ["mass_matrix"]
    mine = tmp_path / "mine.soa"
    mine.write_text("kernel bias(q, qd) = C;\n")
    dyn = soac.compile(panda, mine, backend="runtime")
    assert dyn.kernels == ["bias"] and dyn.inputs("bias") == [("q", 9), ("qd", 9)]
    q = panda.random_state(2)["q"]
    # the runtime's sweeps and the interpreter's: two implementations, equal to rounding
    assert np.allclose(dyn.bias(q, np.zeros(9)), soac.evaluate("C", panda, {"q": q}).dense, rtol=1e-12, atol=1e-12)


def test_kernel_files_that_hold_frames(panda, tmp_path):
    """A kernel file's `weld FRAME;` holds the frame as soac's commands do (it is the tip):
    the same numbers as the robot given welds=, and errors at the declaration."""
    held = tmp_path / "held.soa"
    held.write_text(
        "weld panda_hand_tcp: x, y, z;\n"
        "kernel cfd(q, qd, T) = calM^-1 (T - C - J* (J calM^-1 J*)^-1 (J calM^-1 (T - C) + B* phi* abar));\n"
    )
    dyn = soac.compile(panda, held, backend="runtime")
    assert dyn.kernels == ["cfd"] and dyn.robot.tips == ["panda_hand_tcp"]
    with pytest.warns(UserWarning, match="mimic joints"):
        welded_panda = soac.Robot(PANDA, welds=["panda_hand_tcp:x,y,z"])
    welded = soac.compile(welded_panda, backend="runtime")
    s = panda.random_state(4)
    T = np.linspace(-5.0, 5.0, 9)
    assert np.array_equal(dyn.cfd(s["q"], s["qd"], T), welded.constrained_forward_dynamics(s["q"], s["qd"], T))
    assert "holding" in str(dyn.robot) and "holding" not in str(panda)  # the robot given is left as it was
    with pytest.raises(soac.Error, match=r"held.soa:1:6: error: .*holds frames already"):
        soac.compile(welded_panda, held)
    bad = tmp_path / "bad.soa"
    bad.write_text("weld nope;\nkernel fd(q, qd, T) = calM^-1 (T - C);\n")
    with pytest.raises(soac.Error, match=r"bad.soa:1:6: error: weld 'nope': .*no link or frame of that name"):
        soac.compile(panda, bad)
    out = tmp_path / "out"
    soac.emit(panda, out, kernels=held, name="held_panda", sources=1)
    assert "held by a constraint with the world in x,y,z" in (out / "held_panda.hpp").read_text()


def test_welds_add_the_constrained_kernels():
    """Talos standing on both soles (soac's --weld): the held frames are the tips, the
    constrained kernels join the standard ones, and what they compute satisfies the equations
    of motion T = calM qdd + C + J* f (inverse dynamics and the Jacobian of the same robot)."""
    robot = soac.Robot(TALOS, floating=True, welds=["left_sole_link", "right_sole_link"])
    assert robot.tips == ["left_sole_link", "right_sole_link"]
    dyn = soac.compile(robot, backend="runtime")
    assert dyn.kernels[-3:] == ["constrained_forward_dynamics", "constraint_forces", "operational_space_inertia"]
    s = robot.random_state(3)
    T = np.linspace(-20.0, 20.0, robot.nv)
    qdd = dyn.constrained_forward_dynamics(s["q"], s["qd"], T)
    f = dyn.constraint_forces(s["q"], s["qd"], T)
    assert f.shape == (12,)
    residual = dyn.inverse_dynamics(s["q"], s["qd"], qdd) + dyn.jacobian(s["q"]).T @ f - T
    assert np.abs(residual).max() < 1e-9 * max(1.0, np.abs(f).max())
    # Lambda, the soles' operational-space inertia, inverts J calM^-1 J* (both soles fully held).
    Lambda = dyn.operational_space_inertia(s["q"])
    assert Lambda.shape == (12, 12)
    assert np.abs(Lambda @ dyn.lambda_(s["q"]) - np.eye(12)).max() < 1e-9
    with pytest.raises(soac.Error, match=r"nope"):
        soac.Robot(TALOS, floating=True, welds=["nope"])
    with pytest.raises(soac.Error, match=r"^tips names the tips, but welds, contacts and grasps hold frames"):
        soac.Robot(TALOS, floating=True, tips=["left_sole_link"], contacts=["right_sole_link"])


def test_compliant_grasps():
    """Baxter holding the bar by springs and dampers (soac's --grasp): grasp_forces and
    compliant_forward_dynamics join the standard kernels, and the motion satisfies the
    equations of motion with the springs' forces as the tips' (T = calM qdd + C + J* fg)."""
    with pytest.warns(UserWarning, match="mimic joints"):
        robot = soac.Robot(
            source("examples", "robots", "baxter.urdf"),
            object=source("examples", "robots", "bar.urdf"),
            grasps=["bar_left=left_gripper:2e4,50,200,1", "bar_right=right_gripper:2e4,50,200,1"],
        )
    assert robot.tips == ["bar_left", "left_gripper", "bar_right", "right_gripper"]
    dyn = soac.compile(robot, backend="runtime")
    assert dyn.kernels[-2:] == ["grasp_forces", "compliant_forward_dynamics"]
    s = robot.random_state(4)
    T = np.linspace(-5.0, 5.0, robot.nv)
    fg = dyn.grasp_forces(s["q"], s["qd"])
    assert fg.shape == (24,) and np.abs(fg).max() > 1.0
    qdd = dyn.compliant_forward_dynamics(s["q"], s["qd"], T)
    residual = dyn.inverse_dynamics(s["q"], s["qd"], qdd) + dyn.jacobian(s["q"]).T @ fg - T
    assert np.abs(residual).max() < 1e-9 * max(1.0, np.abs(fg).max())
    with pytest.raises(soac.Error, match=r"grasps 'bar_left=bar_left:1,1,1,1': frame 'bar_left' cannot grasp itself"):
        soac.Robot(
            source("examples", "robots", "baxter.urdf"),
            object=source("examples", "robots", "bar.urdf"),
            grasps=["bar_left=bar_left:1,1,1,1"],
        )


def test_a_held_object():
    """Baxter carrying a bar (soac's --object, its grasp frames welded to the grippers): the
    bar's free-flyer comes last in q and qd, and the constrained kernels satisfy the equations
    of motion of robot and bar together."""
    with pytest.warns(UserWarning, match="mimic joints"):  # Baxter's grippers
        robot = soac.Robot(
            source("examples", "robots", "baxter.urdf"),
            object=source("examples", "robots", "bar.urdf"),
            welds=["bar_left=left_gripper", "bar_right=right_gripper"],
        )
        baxter = soac.Robot(source("examples", "robots", "baxter.urdf"))
    assert (robot.nq, robot.nv) == (baxter.nq + 7, baxter.nv + 6)
    dyn = soac.compile(robot, backend="runtime")
    s = robot.random_state(2)
    T = np.zeros(robot.nv)
    qdd = dyn.constrained_forward_dynamics(s["q"], s["qd"], T)
    f = dyn.constraint_forces(s["q"], s["qd"], T)
    residual = dyn.inverse_dynamics(s["q"], s["qd"], qdd) + dyn.jacobian(s["q"]).T @ f - T
    assert np.abs(residual).max() < 1e-9 * max(1.0, np.abs(f).max())
