# The ctest test consumer_install: install soac from its build tree into a fresh prefix, then
# build and run two projects against that prefix alone -- tests/consumer (find_package(soac),
# soac_generate, soac::soac) and examples/simulate as its README builds it, found through
# find_package(soac) -- and check what they print and that the generated code was optimised
# although the consumer set no build type.
#
#   cmake -DSOAC_BUILD_DIR=<soac build> -DSOAC_SOURCE_DIR=<soac source> -DWORK_DIR=<scratch>
#         -DCLANGXX=<clang++-16> [-DLAUNCHER=ccache] -P run.cmake
foreach(var SOAC_BUILD_DIR SOAC_SOURCE_DIR WORK_DIR CLANGXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run("install" ${CMAKE_COMMAND} --install ${SOAC_BUILD_DIR} --prefix ${prefix})
foreach(file bin/soac share/soac/identities.soa include/soac/pipeline/dynamics.hpp include/soac/model/robot.hpp
             lib/cmake/soac/soacConfig.cmake lib/cmake/soac/soacConfigVersion.cmake lib/cmake/soac/soac.cmake)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "install: ${prefix}/${file} is missing")
  endif()
endforeach()

run("installed soac --version" ${prefix}/bin/soac --version)
message(STATUS "${output}")
# The installed soac needs no source tree: its identity library is built in.
run("installed soac derive" ${CMAKE_COMMAND} -E env --unset=SOAC_LIBRARY ${prefix}/bin/soac derive "calM^-1 (T - C)")
if(NOT output MATCHES "1\\. MINV")
  message(FATAL_ERROR "the installed soac did not rewrite with its built-in library:\n${output}")
endif()

# Only the prefix, never the build tree: soac_generate must use the installed soac (checked
# below in the build rules).
set(configure_args -DCMAKE_PREFIX_PATH=${prefix})
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

set(consumer ${WORK_DIR}/consumer)
# No build type, even if the environment sets one (CMAKE_BUILD_TYPE is read from it).
run("configure tests/consumer" ${CMAKE_COMMAND} -S ${SOAC_SOURCE_DIR}/tests/consumer -B ${consumer} ${configure_args}
    -DCMAKE_BUILD_TYPE=)
run("build tests/consumer" ${CMAKE_COMMAND} --build ${consumer} -j2)
file(READ ${consumer}/CMakeFiles/pendulum_dynamics.dir/build.make rules)
string(FIND "${rules}" "${prefix}/bin/soac" uses_installed)
if(uses_installed EQUAL -1)
  message(FATAL_ERROR "soac_generate did not run the installed ${prefix}/bin/soac")
endif()
file(READ ${consumer}/compile_commands.json commands)
string(REGEX MATCH "\"command\": \"[^\"]*pendulum_1\\.cpp\"" generated_command "${commands}")
if(NOT generated_command)
  message(FATAL_ERROR "no compile command for the generated pendulum_1.cpp in ${consumer}/compile_commands.json")
endif()
if(NOT generated_command MATCHES " -O2 ")
  message(FATAL_ERROR "the generated code was compiled without -O2 (no CMAKE_BUILD_TYPE):\n${generated_command}")
endif()
if(NOT generated_command MATCHES " -march=x86-64 ")
  message(FATAL_ERROR "COMPILE_OPTIONS did not reach the generated code's compile command:\n${generated_command}")
endif()
message(STATUS "generated code compiled with -O2 and COMPILE_OPTIONS: ${generated_command}")
run("run the consumer" ${consumer}/consumer)
message(STATUS "${output}")
if(NOT output MATCHES "consumer: generated and run-time dynamics agree")
  message(FATAL_ERROR "the consumer did not report agreement")
endif()

# The same project configured with clang++-16: soac_generate() gives the generated code
# -ffp-contract=fast (g++'s default) before COMPILE_OPTIONS. One generated library is built.
set(clang_consumer ${WORK_DIR}/consumer-clang)
run("configure tests/consumer with clang++-16" ${CMAKE_COMMAND} -S ${SOAC_SOURCE_DIR}/tests/consumer -B ${clang_consumer}
    ${configure_args} -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_COMPILER=${CLANGXX})
run("build tests/consumer's pendulum_dynamics with clang++-16" ${CMAKE_COMMAND} --build ${clang_consumer} -j2
    --target pendulum_dynamics)
file(READ ${clang_consumer}/compile_commands.json commands)
string(REGEX MATCH "\"command\": \"[^\"]*pendulum_1\\.cpp\"" generated_command "${commands}")
if(NOT generated_command MATCHES " -ffp-contract=fast.* -march=x86-64 ")
  message(FATAL_ERROR "clang++: the generated code was compiled without -ffp-contract=fast before COMPILE_OPTIONS:\n${generated_command}")
endif()
message(STATUS "clang++: generated code compiled with -ffp-contract=fast: ${generated_command}")

# examples/simulate as its README builds it, with the installed soac.
set(simulate ${WORK_DIR}/simulate)
run("configure examples/simulate" ${CMAKE_COMMAND} -S ${SOAC_SOURCE_DIR}/examples/simulate -B ${simulate} ${configure_args})
string(FIND "${output}" "from ${prefix}/" uses_installed)
if(uses_installed EQUAL -1)
  message(FATAL_ERROR "examples/simulate did not use the installed soac:\n${output}")
endif()
run("build examples/simulate" ${CMAKE_COMMAND} --build ${simulate} -j2)
run("run examples/simulate" ${simulate}/simulate)
message(STATUS "${output}")
if(NOT output MATCHES "energy conserved")
  message(FATAL_ERROR "examples/simulate did not report energy conserved")
endif()
run("run examples/simulate's humanoid" ${simulate}/humanoid)
message(STATUS "${output}")
if(NOT output MATCHES "dynamics consistent")
  message(FATAL_ERROR "examples/simulate's humanoid did not report consistent dynamics")
endif()
