#!/usr/bin/env python3
"""JIT forward dynamics on a batch of states, called once from Python, against the same loop
in C++ over the same compiled kernels, in one run (docs/performance.md, "Python").

    PYTHONPATH=build/python /usr/bin/python3 benchmarks/python_batch.py [--robot URDF] [--floating]
        [--states 10000] [--repeats 21] [--backend jit|runtime] [--kernel forward_dynamics]

The Python side is `dyn.forward_dynamics(Q, QD, T)` on (states, n) arrays: the numpy
conversion, the output's allocation and the loop over the states in C++ (GIL released, one
Dynamics::Data). The C++ side is Dynamics._benchmark_loop, the module's function for this
measurement only: the same loop over the same Dynamics on inputs concatenated beforehand, with
no numpy in it. The two are interleaved, repeat by repeat, and their medians compared; the
outputs must agree bit for bit. The issue's target: Python no more than 1.2x the C++ loop.
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np

import soac

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default=os.path.normpath(os.path.join(HERE, "..", "examples", "robots", "panda.urdf")))
    parser.add_argument("--floating", action="store_true")
    parser.add_argument("--states", type=int, default=10000)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--backend", default="jit", choices=["jit", "runtime"])
    parser.add_argument("--kernel", default="forward_dynamics")
    args = parser.parse_args()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mimic joints
        robot = soac.Robot(args.robot, floating=args.floating)
    dyn = soac.compile(robot, [args.kernel], backend=args.backend)
    rng = np.random.default_rng(1)
    columns = {name: [] for name, _ in dyn.inputs(args.kernel)}
    for i in range(args.states):
        state = robot.random_state(i + 1)  # q, qd, qdd, f0 as soac draws them
        state["T"] = rng.uniform(-1, 1, robot.nv)
        for name in columns:
            columns[name].append(state[name])
    inputs = [np.array(v) for v in columns.values()]
    concatenated = np.ascontiguousarray(np.hstack(inputs))
    kernel = getattr(dyn, args.kernel)

    kernel(*inputs)  # warm up: first touches of the code and the pages
    dyn._benchmark_loop(args.kernel, concatenated, 1)
    python, cpp = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = kernel(*inputs)
        python.append(time.perf_counter() - start)
        seconds, loop_out = dyn._benchmark_loop(args.kernel, concatenated, 1)
        cpp.append(seconds[0])
    # Matrices are column-major within a state on both sides.
    flat = np.array([np.ravel(o, order="F") for o in out]) if out.ndim == 3 else out
    same = np.array_equal(flat.view(np.uint64), loop_out.view(np.uint64))

    # The same states one Python call each (no batch), for scale: the cost a batch saves.
    count = min(args.states, 2000)
    start = time.perf_counter()
    for b in range(count):
        kernel(*(x[b] for x in inputs))
    per_call = (time.perf_counter() - start) / count

    py_ms, cpp_ms = statistics.median(python) * 1e3, statistics.median(cpp) * 1e3
    ratio = py_ms / cpp_ms
    load = os.getloadavg()
    print(f"soac {soac.__version__}, {dyn.backend} {args.kernel} on {robot.describe()}")
    print(f"{args.states} states, median of {args.repeats} interleaved repeats; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} CPUs)")
    print(f"  Python, one batched call:  {py_ms:8.3f} ms  ({py_ms * 1e6 / args.states:7.1f} ns per state)")
    print(f"  C++ loop, same Dynamics:   {cpp_ms:8.3f} ms  ({cpp_ms * 1e6 / args.states:7.1f} ns per state)")
    print(f"  ratio Python / C++:        {ratio:8.3f}x  (target <= 1.2x: {'met' if ratio <= 1.2 else 'NOT met'})")
    print(f"  Python, one call per state: {per_call * 1e9:7.0f} ns per state ({count} states)")
    print(f"  outputs bit for bit equal: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
