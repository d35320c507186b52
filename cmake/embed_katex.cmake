# cmake -DKATEX_DIR=<dir> -DOUTPUT=<file.cpp> -P embed_katex.cmake
#
# Writes OUTPUT, a C++ source that defines what compiler/pipeline/derivation_html.cpp
# declares in namespace soa::pipeline::katex: KaTeX's script and style sheet (KATEX_DIR:
# Debian's libjs-katex, /usr/share/javascript/katex) and the bytes of every font the style
# sheet names, so that `soac derive --format html` writes a page with nothing outside it.
#
# The style sheet keeps only the woff2 form of each font (every browser that runs KaTeX 0.16
# reads woff2); its url(fonts/NAME.woff2) references stay as they are and are replaced at
# run time by data: URIs of the embedded bytes (base64 is simpler in C++ than in CMake).
# The output depends only on the input files, so it is the same on every build.
foreach(var KATEX_DIR OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_katex.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${KATEX_DIR}/katex.min.js" script)
file(READ "${KATEX_DIR}/katex.min.css" style)
# Inlined in <script> and <style> elements, which end at the first </script or </style.
string(TOLOWER "${script}${style}" lower)
foreach(end "</script" "</style")
  string(FIND "${lower}" "${end}" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "${KATEX_DIR}: KaTeX contains '${end}', which would end the element it is inlined in")
  endif()
endforeach()
string(REGEX MATCH "version:\"([0-9.]+)\"" _ "${script}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "${KATEX_DIR}/katex.min.js: no version:\"...\" found; is it KaTeX?")
endif()
set(version "${CMAKE_MATCH_1}")

# src:url(fonts/X.woff2) format('woff2'),url(fonts/X.woff) format('woff'),... -> the woff2 one.
string(REGEX REPLACE "src:url\\(fonts/([A-Za-z0-9_-]+)\\.woff2\\) format\\('woff2'\\)[^;}]*"
       "src:url(fonts/\\1.woff2) format('woff2')" style "${style}")
string(REGEX MATCHALL "url\\([^)]*\\)" urls "${style}")
set(fonts "")
foreach(url IN LISTS urls)
  if(NOT url MATCHES "^url\\(fonts/([A-Za-z0-9_-]+)\\.woff2\\)$")
    message(FATAL_ERROR "${KATEX_DIR}/katex.min.css: cannot inline ${url} (only fonts/NAME.woff2)")
  endif()
  list(APPEND fonts "${CMAKE_MATCH_1}")
endforeach()
list(REMOVE_DUPLICATES fonts)
if(NOT fonts)
  message(FATAL_ERROR "${KATEX_DIR}/katex.min.css: names no fonts; is it KaTeX's?")
endif()

# Every text is embedded as bytes: a raw string literal would do for the style sheet, but the
# script holds Unicode bidirectional controls, which g++ warns about in string literals.
function(soa_bytes name hex out)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "((0x..,){24})" "\\1\n    " bytes "${bytes}")
  set(${out} "const unsigned char ${name}[] = {\n    ${bytes}};\n" PARENT_SCOPE)
endfunction()

file(READ "${KATEX_DIR}/katex.min.js" hex HEX)
soa_bytes(script_bytes "${hex}" arrays)
string(HEX "${style}" hex)
soa_bytes(style_bytes "${hex}" array)
string(APPEND arrays "${array}")
set(lookup "")
set(index 0)
foreach(font IN LISTS fonts)
  set(path "${KATEX_DIR}/fonts/${font}.woff2")
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "${path}: missing (katex.min.css names it)")
  endif()
  file(READ "${path}" hex HEX)
  soa_bytes(font_${index} "${hex}" array)
  string(APPEND arrays "${array}")
  string(APPEND lookup "  if (name == \"${font}\") return bytes(font_${index}, sizeof font_${index});\n")
  math(EXPR index "${index} + 1")
endforeach()

file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${KATEX_DIR} (KaTeX ${version}) by cmake/embed_katex.cmake at build time. Do not edit.\n"
  "// KaTeX: Copyright (c) 2013-2020 Khan Academy and other contributors, MIT licence.\n"
  "#include <cstddef>\n"
  "#include <string_view>\n\n"
  "namespace soa::pipeline::katex {\n"
  "namespace {\n\n"
  "std::string_view bytes(const unsigned char* data, std::size_t size) {\n"
  "  return {reinterpret_cast<const char*>(data), size};\n"
  "}\n\n"
  "${arrays}\n"
  "}  // namespace\n\n"
  "std::string_view version() { return \"${version}\"; }\n\n"
  "std::string_view script() { return bytes(script_bytes, sizeof script_bytes); }\n"
  "std::string_view style() { return bytes(style_bytes, sizeof style_bytes); }\n\n"
  "std::string_view font(std::string_view name) {\n"
  "${lookup}"
  "  return {};\n"
  "}\n\n"
  "}  // namespace soa::pipeline::katex\n")
# Only a changed KaTeX touches OUTPUT, so that an unchanged one recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
