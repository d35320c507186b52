# soac_generate(<target> ROBOT <file.urdf> [KERNELS <file.soa>] [NAME <stem>]
#               [FLOATING] [DERIVATIVES] [TIPS <link>... | [WELDS <link>[=<link>][:<dirs>]...] [CONTACTS <link>...]]
#               [OBJECT <object.urdf>] [GRASPS <link>=<link>:<kt>,<kr>,<dt>,<dr>...]
#               [GRAVITY <x> <y> <z> | GRAVITY "x,y,z"]
#               [COMPILE_OPTIONS <option>...] [OPTIMIZE <level> | OPTIMIZE OFF]
#               [SOURCES <n>] [EMIT_OPTIONS <soac emit option>...])
#
# Runs `soac emit` at build time and makes <target>, a static library of the robot's
# generated dynamics: <stem>.hpp (namespace soa_gen::<stem>) and the sources <stem>_1.cpp
# ... <stem>_<n>.cpp (<stem>.cpp when n is 1), which compile in parallel. Without
# KERNELS the standard kernels are generated (inverse and forward dynamics, mass matrix and
# its inverse, Jacobian, Lambda, tip-force correction). The code is regenerated whenever
# soac (and with it its built-in identity library), the URDF or the kernel file changes.
#
#   FLOATING          a free-flyer joint above the URDF root link (soac emit --floating)
#   DERIVATIVES       also inverse_dynamics_derivatives, forward_dynamics_derivatives,
#                     mass_matrix_derivative, coriolis_matrix and christoffel (soac emit
#                     --derivatives; docs/mathematics.md)
#   TIPS              tip frames for B, J and f0 (soac emit --tip ...)
#   WELDS             frames welded to the world (soac emit --weld ...), each holding all six
#                     directions or those of `link:dirs` (e.g. `foot:x,y,z,rz`), or to another
#                     frame (`link=other`, `link=other:dirs`: a loop, a grasp); with
#   CONTACTS          point contacts with the world (soac emit --contact ...), they are the
#                     tips, and constrained_forward_dynamics, constraint_forces and
#                     operational_space_inertia are generated too
#   OBJECT            a free body the robot holds (soac emit --object): its URDF, given a
#                     free-flyer, last in q and qd; weld its frames to the robot's (WELDS)
#   GRASPS            compliant grasps (soac emit --grasp ...): a spring and damper between
#                     two frames, stiffness kt N/m, kr N m/rad and damping dt N s/m, dr
#                     N m s/rad; both frames become tips, and grasp_forces and
#                     compliant_forward_dynamics are generated too
#   GRAVITY           gravity in m/s^2, world axes (soac emit --gravity x,y,z); default
#                     0,0,-9.81
#   COMPILE_OPTIONS   extra options for compiling the generated source, e.g.
#                     `COMPILE_OPTIONS -march=native` (the generated code is long
#                     straight-line arithmetic and gains most from the target's ISA); with
#                     clang++ the generated source gets -ffp-contract=fast first, g++'s
#                     default (FMAs where the ISA has them), which `-ffp-contract=off` here undoes
#   SOURCES           how many source files to write (soac emit --sources); default 4,
#                     balanced by operation count
#   EMIT_OPTIONS      further options for soac emit, e.g. `EMIT_OPTIONS --part-ops 1000`
#   OPTIMIZE          the generated source is compiled at -O2 unless the build type sets
#                     optimisation itself (Release, RelWithDebInfo, MinSizeRel): also with
#                     no CMAKE_BUILD_TYPE and in Debug builds, where unoptimised dynamics
#                     would be tens of times slower. `OPTIMIZE 3` picks another level,
#                     `OPTIMIZE OFF` leaves the build type's flags alone.
#
# The generated header includes <Eigen/Core> for its fixed-size overloads unless
# SOA_GEN_NO_EIGEN is defined: soac_generate() links Eigen3::Eigen when it is there (or
# find_package(Eigen3) finds it), and otherwise defines SOA_GEN_NO_EIGEN for <target> and
# its users, leaving the plain-array functions and the extern "C" entry points.
#
# soac itself is the `soac` target when soac is part of the build (add_subdirectory), the
# installed executable next to the package when soac came from find_package(soac)
# (soac::compiler), or else SOAC_EXECUTABLE / the PATH.
function(soac_generate target)
  cmake_parse_arguments(SG "FLOATING;DERIVATIVES" "ROBOT;KERNELS;NAME;OPTIMIZE;SOURCES;OBJECT" "TIPS;WELDS;CONTACTS;GRASPS;GRAVITY;COMPILE_OPTIONS;EMIT_OPTIONS" ${ARGN})
  if(SG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "soac_generate(${target}): unknown arguments: ${SG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT SG_ROBOT)
    message(FATAL_ERROR "soac_generate(${target}): ROBOT <file.urdf> is required")
  endif()
  get_filename_component(robot "${SG_ROBOT}" ABSOLUTE)
  set(stem "${SG_NAME}")
  if(NOT stem)
    set(stem "${target}")
  endif()

  if(TARGET soac)
    set(soac_command $<TARGET_FILE:soac>)
    set(soac_depends soac)
  elseif(TARGET soac::compiler)
    set(soac_command $<TARGET_FILE:soac::compiler>)
    set(soac_depends $<TARGET_FILE:soac::compiler>)
  else()
    find_program(SOAC_EXECUTABLE soac REQUIRED)
    set(soac_command ${SOAC_EXECUTABLE})
    set(soac_depends ${SOAC_EXECUTABLE})
  endif()

  set(args emit)
  set(depends ${robot} ${soac_depends})
  if(SG_KERNELS)
    get_filename_component(kernels "${SG_KERNELS}" ABSOLUTE)
    list(APPEND args ${kernels})
    list(APPEND depends ${kernels})
  endif()
  list(APPEND args --robot ${robot} --name ${stem})
  if(SG_FLOATING)
    list(APPEND args --floating)
  endif()
  if(SG_DERIVATIVES)
    list(APPEND args --derivatives)
  endif()
  foreach(tip IN LISTS SG_TIPS)
    list(APPEND args --tip ${tip})
  endforeach()
  foreach(weld IN LISTS SG_WELDS)
    list(APPEND args --weld ${weld})
  endforeach()
  foreach(contact IN LISTS SG_CONTACTS)
    list(APPEND args --contact ${contact})
  endforeach()
  foreach(grasp IN LISTS SG_GRASPS)
    list(APPEND args --grasp ${grasp})
  endforeach()
  if(SG_OBJECT)
    get_filename_component(object "${SG_OBJECT}" ABSOLUTE)
    list(APPEND args --object ${object})
    list(APPEND depends ${object})
  endif()
  if(DEFINED SG_GRAVITY)
    # Three values, or one "x,y,z": soac checks the numbers.
    string(REPLACE ";" "," gravity "${SG_GRAVITY}")
    list(APPEND args --gravity ${gravity})
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_generated)
  list(APPEND args --out ${out_dir})
  if(NOT DEFINED SG_SOURCES)
    set(SG_SOURCES 4)
  endif()
  if(NOT SG_SOURCES MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "soac_generate(${target}): SOURCES ${SG_SOURCES} is not a positive number")
  endif()
  list(APPEND args --sources ${SG_SOURCES} ${SG_EMIT_OPTIONS})
  if(SG_SOURCES EQUAL 1)
    set(sources ${out_dir}/${stem}.cpp)
  else()
    set(sources)
    foreach(i RANGE 1 ${SG_SOURCES})
      list(APPEND sources ${out_dir}/${stem}_${i}.cpp)
    endforeach()
  endif()

  add_custom_command(
    OUTPUT ${out_dir}/${stem}.hpp ${sources}
    COMMAND ${soac_command} ${args}
    DEPENDS ${depends}
    COMMENT "soac: generating ${stem} dynamics for ${SG_ROBOT}"
    VERBATIM)
  add_library(${target} STATIC ${sources} ${out_dir}/${stem}.hpp)
  target_include_directories(${target} PUBLIC ${out_dir})
  target_compile_features(${target} PUBLIC cxx_std_17)

  if(NOT DEFINED SG_OPTIMIZE)
    set(SG_OPTIMIZE 2)
  endif()
  if(NOT SG_OPTIMIZE STREQUAL "OFF")
    # After the build type's flags on the command line, so it wins over Debug's -O0.
    target_compile_options(${target} PRIVATE
        $<$<NOT:$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>:-O${SG_OPTIMIZE}>)
  endif()
  # clang++ fuses a multiplication and an addition into an FMA only within one expression
  # (-ffp-contract=on), and the generated code is one operation per statement: built for a
  # CPU with FMA it would run 1.1-1.3x slower than g++'s build, whose default for C++ is
  # -ffp-contract=fast (docs/performance.md, "A/B"). Before COMPILE_OPTIONS, which can undo it.
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -ffp-contract=fast)
  endif()
  target_compile_options(${target} PRIVATE ${SG_COMPILE_OPTIONS})

  if(NOT TARGET Eigen3::Eigen)
    find_package(Eigen3 3.4 QUIET NO_MODULE)
  endif()
  if(TARGET Eigen3::Eigen)
    target_link_libraries(${target} PUBLIC Eigen3::Eigen)
  else()
    message(STATUS "soac_generate(${target}): Eigen3 not found, so ${stem}.hpp is used without its Eigen overloads (SOA_GEN_NO_EIGEN)")
    target_compile_definitions(${target} PUBLIC SOA_GEN_NO_EIGEN)
  endif()
endfunction()
