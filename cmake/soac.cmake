# soac_generate(<target> ROBOT <file.urdf> [KERNELS <file.soa>] [FLOATING] [TIPS <link>...]
#               [NAME <stem>])
#
# Runs `soac emit` at build time and makes <target>, a static library of the robot's
# generated dynamics: <stem>.hpp (namespace soa_gen::<stem>) and <stem>.cpp. Without
# KERNELS the standard kernels are generated (inverse and forward dynamics, mass matrix and
# its inverse, Jacobian, Lambda, tip-force correction). The code is regenerated whenever
# soac, the URDF, the kernel file or the identity library changes.
#
# soac comes from the `soac` target when soac is part of the build (add_subdirectory), or
# else from SOAC_EXECUTABLE / the PATH.
function(soac_generate target)
  cmake_parse_arguments(SG "FLOATING" "ROBOT;KERNELS;NAME" "TIPS" ${ARGN})
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
  foreach(tip IN LISTS SG_TIPS)
    list(APPEND args --tip ${tip})
  endforeach()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${target}_generated)
  list(APPEND args --out ${out_dir})

  add_custom_command(
    OUTPUT ${out_dir}/${stem}.hpp ${out_dir}/${stem}.cpp
    COMMAND ${soac_command} ${args}
    DEPENDS ${depends}
    COMMENT "soac: generating ${stem} dynamics for ${SG_ROBOT}"
    VERBATIM)
  add_library(${target} STATIC ${out_dir}/${stem}.cpp ${out_dir}/${stem}.hpp)
  target_include_directories(${target} PUBLIC ${out_dir})
  target_compile_features(${target} PUBLIC cxx_std_17)
  if(TARGET Eigen3::Eigen)
    target_link_libraries(${target} PUBLIC Eigen3::Eigen)
  endif()
endfunction()
