# cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DFUNCTION=<ns::name> -P embed_text.cmake
#
# Writes OUTPUT, a C++ source defining `std::string_view FUNCTION()` that returns INPUT's
# text byte for byte (a raw string literal), so that a program carries a data file inside
# it instead of a path into the source tree. The build reruns this whenever INPUT changes.
foreach(var INPUT OUTPUT FUNCTION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${INPUT}" text)
set(delimiter "soa_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT}: contains ')${delimiter}\"', which ends the raw string it is embedded in")
endif()
string(REGEX MATCH "^(.*)::([^:]+)$" _ "${FUNCTION}")
set(namespace "${CMAKE_MATCH_1}")
set(name "${CMAKE_MATCH_2}")
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${input_name} by cmake/embed_text.cmake at build time. Do not edit.\n"
  "#include <string_view>\n\n"
  "namespace ${namespace} {\n\n"
  "std::string_view ${name}() {\n"
  "  return R\"${delimiter}(${text})${delimiter}\";\n"
  "}\n\n"
  "}  // namespace ${namespace}\n")
# Only a changed text touches OUTPUT, so that an unchanged library recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
