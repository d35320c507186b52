# lit configuration: command-line behaviour and golden text, LLVM lit/FileCheck style.
# Each .test file carries its own RUN and CHECK lines. Paths come from lit.site.cfg.py,
# which CMake writes into the build tree.
import os
import lit.formats

config.name = "soac"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.soac_build_dir, "tests", "lit-out")

config.substitutions.append(("%soac", config.soac_path))
# The build's C++ compiler and clang++-16: the generated code must compile with both.
config.substitutions.append(("%clangxx", config.clangxx_path))
config.substitutions.append(("%cxx", config.cxx_path))
# The unit test whose case goldens.sh runs for the lowered-program goldens.
config.substitutions.append(("%test_lower", config.test_lower_path))
config.substitutions.append(("%robots", os.path.join(config.soac_source_dir, "examples", "robots")))
config.substitutions.append(("%src", config.soac_source_dir))
config.substitutions.append(("%data", os.path.join(config.soac_source_dir, "tests", "data")))
config.substitutions.append(("%golden", os.path.join(config.soac_source_dir, "tests", "golden")))
# %exit N CMD...: run CMD and require exit status N (lit's `not` only knows non-zero).
config.substitutions.append(("%exit", os.path.join(os.path.dirname(__file__), "expect-exit.sh")))
config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environment.get("PATH", "")])
if getattr(config, "soac_with_llvm", "OFF") in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("llvm-jit")
