# The ctest test python_install: the Python package alone installed from a build tree into a
# fresh prefix (cmake --install --component python), then imported from there in a clean
# environment and used once.
#
#   cmake -DBUILD_DIR=<soac build> -DWORK_DIR=<scratch> -DPYTHON=<python3> -DSITE=<relative
#         package folder> -DSOURCE_DIR=<soac source> [-DASAN_RUNTIME=<libasan.so>] -P install.cmake
#
# ASAN_RUNTIME: the module was built with AddressSanitizer, whose runtime python3 then loads first.
foreach(var BUILD_DIR WORK_DIR PYTHON SITE SOURCE_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} --component python
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install --component python failed (${rc}):\n${out}")
endif()
file(GLOB modules ${prefix}/${SITE}/soac/_soac*.so)
if(NOT modules OR NOT EXISTS ${prefix}/${SITE}/soac/__init__.py)
  message(FATAL_ERROR "the package is not in ${prefix}/${SITE}/soac:\n${out}")
endif()

# Only the prefix on the path, from outside the source tree and the build tree.
set(check [=[
import os, sys, soac
where = os.path.dirname(soac.__file__)
assert where.startswith(sys.argv[1]), f"soac imported from {where}, not from the prefix {sys.argv[1]}"
panda = soac.Robot(os.path.join(sys.argv[2], "examples/robots/panda.urdf"))
d = soac.derive("calM^-1 (T - C)")
fd = soac.compile(panda, ["forward_dynamics"], backend="runtime")
qdd = fd.forward_dynamics(panda.neutral_configuration(), [0.0] * 9, [0.0] * 9)
print(f"installed soac {soac.__version__} from {where}: {d.rules[0]}, qdd {qdd.shape}")
]=])
set(env PYTHONPATH=${prefix}/${SITE} PYTHONDONTWRITEBYTECODE=1)
if(ASAN_RUNTIME)
  list(APPEND env LD_PRELOAD=${ASAN_RUNTIME} ASAN_OPTIONS=detect_leaks=0)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=SOAC_LIBRARY
                        ${CMAKE_COMMAND} -E env ${env} ${PYTHON} -W ignore -c "${check}" ${prefix} ${SOURCE_DIR}
                WORKING_DIRECTORY ${WORK_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "importing the installed soac failed (${rc}):\n${out}")
endif()
message(STATUS "${out}")
