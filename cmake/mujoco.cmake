# soa_find_mujoco(): find_package(mujoco REQUIRED) and make its imported target usable.
#
# Debian's mujocoTargets.cmake lists /usr/include/libqhull_r/ (from libqhull-dev, which
# libmujoco-dev does not depend on) and CMake refuses a missing include directory; the
# public MuJoCo headers never include qhull, so the directories that do not exist are dropped.
# Imported targets are scoped to the directory that finds them, so every directory that
# links mujoco::mujoco calls this once.
function(soa_find_mujoco)
  find_package(mujoco REQUIRED)
  get_target_property(includes mujoco::mujoco INTERFACE_INCLUDE_DIRECTORIES)
  set(existing)
  foreach(dir IN LISTS includes)
    if(EXISTS "${dir}")
      list(APPEND existing "${dir}")
    endif()
  endforeach()
  set_target_properties(mujoco::mujoco PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${existing}")
endfunction()
