# What `cmake --install <build> --prefix P` puts where, and the CMake package that lets
# another project use soac:
#   P/bin/soac                        the compiler (the identity library built in)
#   P/share/soac/identities.soa       the identity library, to read or to start a new one from
#   P/include/soac/                   the run-time API's headers (pipeline/dynamics.hpp,
#                                     model/robot.hpp, ...) and every header they include
#   P/lib/libsoa_*.a                  its static libraries
#   P/lib/cmake/soac/                 find_package(soac): soacConfig.cmake, its version file,
#                                     the exported targets and soac.cmake
#   P/lib/python3/dist-packages/soac/ the Python module (SOA_WITH_PYTHON, SOA_PYTHON_INSTALL_DIR;
#                                     docs/python.md): its rules are in python/CMakeLists.txt,
#                                     where the module is made; `--component python` installs it alone
# The package gives
#   soac::soac       the run-time API (Dynamics::create, load_urdf): its include directory
#                    and everything it links (Eigen3, fmt, tinyxml2, LLVM with SOA_WITH_LLVM),
#                    the dependencies found by soacConfig.cmake with find_dependency()
#   soac::compiler   the installed soac executable, which soac_generate() runs
#   soac_generate()  cmake/soac.cmake
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(SOA_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/soac)
set(SOA_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/soac)

set(SOA_INSTALLED_LIBRARIES soa_support soa_model soa_exec soa_interp soa_algebra soa_syntax soa_rewrite
    soa_verify soa_lower soa_specialise soa_emit_cpp soa_pipeline)
if(SOA_WITH_LLVM)
  list(APPEND SOA_INSTALLED_LIBRARIES soa_emit_llvm)
endif()

# The run-time API as one target; soac::soac inside this build too.
add_library(soa_api INTERFACE)
target_link_libraries(soa_api INTERFACE soa_pipeline soa_model soa_exec)
if(SOA_WITH_LLVM)
  # Public here so that users see SOA_HAVE_LLVM_JIT (Backend::Jit is available).
  target_link_libraries(soa_api INTERFACE soa_emit_llvm)
endif()
if(SOA_SANITIZE)
  # Instrumented static libraries need the sanitizer runtimes in whatever links them.
  target_link_options(soa_api INTERFACE -fsanitize=${SOA_SANITIZE})
endif()
set_target_properties(soa_api PROPERTIES EXPORT_NAME soac)
add_library(soac::soac ALIAS soa_api)
set_target_properties(soac PROPERTIES EXPORT_NAME compiler)

install(TARGETS ${SOA_INSTALLED_LIBRARIES} soa_api EXPORT soacTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${SOA_INSTALL_INCLUDEDIR})
install(TARGETS soac EXPORT soacTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT soacTargets NAMESPACE soac:: DESTINATION ${SOA_INSTALL_CMAKEDIR})

# Headers keep their folder (#include "pipeline/dynamics.hpp"). Left out: the command line
# and the parser's PEGTL internals, which no installed header includes.
set(soa_header_excludes PATTERN "driver" EXCLUDE PATTERN "grammar.hpp" EXCLUDE PATTERN "parser.hpp" EXCLUDE)
if(NOT SOA_WITH_LLVM)
  # pipeline/jit.hpp too: it includes emit-llvm/jit.hpp.
  list(APPEND soa_header_excludes PATTERN "emit-llvm" EXCLUDE PATTERN "jit.hpp" EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/ ${PROJECT_SOURCE_DIR}/compiler/
        DESTINATION ${SOA_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp" ${soa_header_excludes})

install(FILES ${PROJECT_SOURCE_DIR}/grammar/vocabulary.def DESTINATION ${SOA_INSTALL_INCLUDEDIR}/grammar)
install(FILES ${PROJECT_SOURCE_DIR}/grammar/identities.soa DESTINATION ${CMAKE_INSTALL_DATADIR}/soac)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/soacConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/soacConfig.cmake
                              INSTALL_DESTINATION ${SOA_INSTALL_CMAKEDIR}
                              PATH_VARS CMAKE_INSTALL_DATADIR)
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/soacConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/soacConfig.cmake ${PROJECT_BINARY_DIR}/soacConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/soac.cmake
        DESTINATION ${SOA_INSTALL_CMAKEDIR})
