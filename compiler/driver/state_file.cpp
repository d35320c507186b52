#include "driver/state_file.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <system_error>

#include "support/error.hpp"

namespace soa::driver {

StateFile read_state_file(const std::string& path, const Robot& robot, int tips) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot read the state file", path));
  StateFile out;
  State& s = out.state;
  s = {neutral_configuration(robot), VecX::Zero(robot.nv), VecX::Zero(robot.nv), VecX::Zero(6 * tips)};
  std::map<std::string, int> seen;  // name -> line
  int q_line = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    const auto sep = line.find_first_of(":=");
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (sep == std::string::npos)
      throw UserError(fmt::format("{}:{}: expected 'name: values', e.g. 'qd: 0.1 0.2'", path, number));
    std::string name = line.substr(0, sep);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    const long size = name == "q"                                    ? robot.nq
                      : name == "qd" || name == "qdd" || name == "T" ? robot.nv
                      : name == "f0"                                 ? 6L * tips
                                                                     : -1;
    if (size < 0)
      throw UserError(fmt::format("{}:{}: unknown vector '{}' (expected q, qd, qdd, T or f0)", path, number, name));
    if (auto [it, fresh] = seen.emplace(name, number); !fresh)
      throw UserError(fmt::format("{}:{}: {} is given twice (first on line {})", path, number, name, it->second));
    std::istringstream values(line.substr(sep + 1));
    std::vector<double> v;
    std::string word;
    while (values >> word) {
      try {
        std::size_t used = 0;
        v.push_back(std::stod(word, &used));
        if (used != word.size() || !std::isfinite(v.back())) throw std::invalid_argument(word);
      } catch (const std::exception&) {
        throw UserError(fmt::format("{}:{}: '{}' is not a finite number", path, number, word));
      }
    }
    if (static_cast<long>(v.size()) != size)
      throw UserError(fmt::format("{}:{}: {} has {} values, the robot needs {}", path, number, name, v.size(), size));
    const VecX value = Eigen::Map<const VecX>(v.data(), static_cast<long>(v.size()));
    if (name == "q") s.q = value, q_line = number;
    if (name == "qd") s.qd = value;
    if (name == "qdd") s.qdd = value, out.qdd = value;
    if (name == "T") out.T = value;
    if (name == "f0") s.f0 = value;
  }
  if (q_line > 0) check_unit_quaternions(robot, s.q, fmt::format("{}:{}", path, q_line));
  return out;
}

std::string state_lines(const State& state, const VecX& T, const std::string& indent) {
  std::string text;
  auto row = [&](const char* name, const VecX& v) {
    text += indent + name + ":";
    // fmt's shortest form that reads back as the same double.
    for (Eigen::Index i = 0; i < v.size(); ++i) text += fmt::format(" {}", v[i]);
    text += "\n";
  };
  row("q", state.q);
  row("qd", state.qd);
  row("qdd", state.qdd);
  row("T", T);
  row("f0", state.f0);
  return text;
}

void write_state_file(const std::string& path, const State& state, const VecX& T, const std::string& header) {
  std::string text;
  std::istringstream lines(header);
  for (std::string l; std::getline(lines, l);) text += "# " + l + "\n";
  text += state_lines(state, T, "");

  // Beside the target, then renamed over it: a reader never sees half a file.
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(partial, ignored);
      throw UserError(fmt::format("{}: cannot write the state file", path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(partial, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(partial, ignored);
    throw UserError(fmt::format("{}: cannot write the state file: {}", path, ec.message()));
  }
}

CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || stop != end)
          return fmt::format("'{}' is not a seed: expected a non-negative integer", text);
        if (ec == std::errc::result_out_of_range)
          return fmt::format("'{}' is too large for a seed (at most {})", text,
                             std::numeric_limits<std::uint64_t>::max());
        return "";
      },
      "");
}

CLI::Validator tolerance_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0.0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || stop != end || ec == std::errc::invalid_argument)
          return fmt::format("'{}' is not a number", text);
        if (ec == std::errc::result_out_of_range || !std::isfinite(value) || !(value > 0.0))
          return fmt::format("the tolerance must be a finite number greater than 0, not '{}'", text);
        return "";
      },
      "POSITIVE");
}

}  // namespace soa::driver
