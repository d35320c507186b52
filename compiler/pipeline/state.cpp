#include "pipeline/state.hpp"

#include <memory>
#include <string>

#include "syntax/syntax.hpp"

namespace soa::pipeline {

interp::Evaluation prepare_state(const Robot& robot, State state, const std::vector<int>& tips,
                                 const ir::Definitions& definitions, const std::optional<VecX>& T, bool qdd_given) {
  if (T && !qdd_given) {
    interp::Evaluation ev = interp::prepare(robot, state, tips, definitions);
    ev.kin.T = *T;
    const std::string fd = ev.m > 0 ? "calM^-1 (T - C - J* f0)" : "calM^-1 (T - C)";
    auto source = std::make_shared<syntax::Source>(syntax::Source{"<forward dynamics>", fd});
    state.qdd = interp::eval_dense(ev, syntax::parse_expression(source));
  }
  interp::Evaluation ev = interp::prepare(robot, state, tips, definitions);
  if (T) ev.kin.T = *T;
  return ev;
}

}  // namespace soa::pipeline
