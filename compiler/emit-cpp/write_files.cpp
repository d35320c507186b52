// The generated files on disk (emit_cpp.hpp, write_files).
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "emit-cpp/emit_cpp.hpp"
#include "support/error.hpp"

namespace soa::emit {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw UserError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
}

}  // namespace

std::vector<std::string> write_files(const Emitted& files, const std::string& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw UserError(fmt::format("{}: cannot create the output directory: {}", out, ec.message()));
  std::vector<std::pair<fs::path, const std::string*>> outputs{{fs::path(out) / files.header_name, &files.header}};
  for (const SourceFile& f : files.sources) outputs.emplace_back(fs::path(out) / f.name, &f.text);
  const auto tmp = [](const fs::path& p) { return fs::path(p.string() + ".tmp"); };
  try {
    for (const auto& [path, text] : outputs) write_file(tmp(path), *text);
    for (const auto& [path, text] : outputs) fs::rename(tmp(path), path);
  } catch (...) {
    for (const auto& [path, text] : outputs) fs::remove(tmp(path), ec);
    throw;
  }
  std::vector<std::string> paths;
  for (const auto& [path, text] : outputs) paths.push_back(path.string());
  return paths;
}

long source_lines(const Emitted& files) {
  long lines = 0;
  for (const SourceFile& f : files.sources) lines += static_cast<long>(std::count(f.text.begin(), f.text.end(), '\n'));
  return lines;
}

long compiled_lines(const Emitted& files) {
  long lines = 0;
  for (const SourceFile& f : files.sources) {
    int depth = 0, skip_from = -1;  // inside an `#if defined(__AVX__)` form from this depth on
    std::size_t at = 0;
    while (at < f.text.size()) {
      std::size_t end = f.text.find('\n', at);
      if (end == std::string::npos) end = f.text.size();
      const std::string_view line(f.text.data() + at, end - at);
      if (line.starts_with("#if")) {
        if (skip_from < 0 && line == "#if defined(__AVX__)") skip_from = depth;
        ++depth;
      }
      if (skip_from < 0) ++lines;
      if (line.starts_with("#endif") && --depth == skip_from) skip_from = -1;
      at = end + 1;
    }
  }
  return lines;
}

std::string size_warning(long lines, long limit) {
  if (lines <= limit) return "";
  return fmt::format(
      "the generated sources have {} lines (more than {}): compiling them takes more than half a minute of CPU "
      "(docs/performance.md); fewer tips or fewer kernels make them smaller",
      lines, limit);
}

}  // namespace soa::emit
