// soac model: how soac sees a robot (SOA numbering, joints, joint-space order, frames).
#include <fmt/format.h>

#include <memory>

#include "driver/driver.hpp"

namespace soa::driver {
namespace {

int run_model(const RobotOptions& o) {
  fmt::print("{}", model_text(load_robot(o)));
  return kOk;
}

}  // namespace

void add_model(CLI::App& app, Runner& run) {
  auto opts = std::make_shared<RobotOptions>();
  CLI::App* cmd = app.add_subcommand("model", "print the robot as soac numbers it (bodies, joints, frames)");
  opts->add_to(*cmd, true, true);
  cmd->callback([opts, &run] { run = [opts] { return run_model(*opts); }; });
}

}  // namespace soa::driver
