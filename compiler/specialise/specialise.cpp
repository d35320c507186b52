#include "specialise/specialise.hpp"

#include <fmt/format.h>

#include "exec/execute_impl.hpp"

namespace soa::specialise {

namespace {

// Labels every node with the body and statement the executor is at.
class Labeller : public exec::Observer {
public:
  Labeller(Tracer& t, const exec::RobotConstants<Traced>& robot) : t_(t), robot_(robot) {}
  void enter(int column, int body, const exec::Stmt& s) override {
    const std::string& name = robot_.bodies[body].name;
    t_.set_label(column < 0 ? fmt::format("{}: {}", name, s.label)
                            : fmt::format("column {}, {}: {}", column, name, s.label));
  }

private:
  Tracer& t_;
  const exec::RobotConstants<Traced>& robot_;
};

}  // namespace

ScalarProgram specialise(const exec::SweepProgram& program, const exec::RobotConstants<double>& robot,
                         const TraceOptions& options) {
  Tracer tracer(options);
  // Folding: the robot's numbers are literals. Without: Const nodes, so that every
  // operation on them is recorded.
  const exec::RobotConstants<Traced> constants =
      options.fold ? exec::convert<Traced>(robot)
                   : exec::convert<Traced>(robot, [&](double x) { return tracer.constant(x); });
  const exec::Layout layout = exec::layout(program, robot);
  std::vector<Traced> in, out(static_cast<std::size_t>(layout.output_size()));
  for (int i = 0; i < layout.input_size; ++i) in.push_back(tracer.input(i));
  Labeller labeller(tracer, constants);
  exec::execute(program, constants, in.data(), out.data(), &labeller);
  return tracer.finish(out, layout.input_size);
}

}  // namespace soa::specialise
