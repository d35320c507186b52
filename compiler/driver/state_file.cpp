#include "driver/state_file.hpp"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "support/error.hpp"

namespace soa::driver {

State read_state_file(const std::string& path, const Robot& robot, int tips) {
  std::ifstream in(path);
  if (!in) throw UserError(fmt::format("{}: cannot read the state file", path));
  State s{neutral_configuration(robot), VecX::Zero(robot.nv), VecX::Zero(robot.nv), VecX::Zero(6 * tips)};
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
    VecX* target = name == "q" ? &s.q : name == "qd" ? &s.qd : name == "qdd" ? &s.qdd : name == "f0" ? &s.f0 : nullptr;
    if (!target) throw UserError(fmt::format("{}:{}: unknown vector '{}' (expected q, qd, qdd or f0)", path, number, name));
    std::istringstream values(line.substr(sep + 1));
    std::vector<double> v;
    std::string word;
    while (values >> word) {
      try {
        std::size_t used = 0;
        v.push_back(std::stod(word, &used));
        if (used != word.size()) throw std::invalid_argument(word);
      } catch (const std::exception&) {
        throw UserError(fmt::format("{}:{}: '{}' is not a number", path, number, word));
      }
    }
    if (static_cast<long>(v.size()) != target->size())
      throw UserError(fmt::format("{}:{}: {} has {} values, the robot needs {}", path, number, name, v.size(),
                                  target->size()));
    *target = Eigen::Map<const VecX>(v.data(), static_cast<long>(v.size()));
  }
  return s;
}

}  // namespace soa::driver
