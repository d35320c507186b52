#include <fmt/format.h>

#include <algorithm>

#include "algebra/arms.hpp"
#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "interp/interpreter.hpp"
#include "support/error.hpp"

namespace soa::interp {
namespace {

// Arm `root` of `ev` as an evaluation of its own (003 Part II sec. 2: each arm's dynamics
// involve only its own joints and the force at its own tip, eqs. 2.1-2.3): the subtree's
// robot in the restriction of the state, with the tips that lie in it.
std::shared_ptr<const Evaluation> prepare_arm(const Evaluation& ev, int root) {
  const Robot& whole = *ev.robot;
  auto robot = std::make_shared<const Robot>(subtree(whole, root));
  const std::vector<int> bodies = subtree_bodies(whole, root);

  State s;
  s.q.resize(robot->nq);
  s.qd.resize(robot->nv);
  s.qdd.resize(robot->nv);
  for (std::size_t j = 0; j < bodies.size(); ++j) {
    const Body& from = whole.bodies[bodies[j]];
    const Body& to = robot->bodies[j];
    s.q.segment(to.q_offset, to.nq()) = ev.state.q.segment(from.q_offset, from.nq());
    s.qd.segment(to.v_offset, to.nv()) = ev.state.qd.segment(from.v_offset, from.nv());
    s.qdd.segment(to.v_offset, to.nv()) = ev.state.qdd.segment(from.v_offset, from.nv());
  }
  std::vector<int> tips;
  std::vector<int> tip_of;  // the whole robot's tip number of each of the arm's tips
  for (int t = 0; t < ev.m; ++t) {
    const Frame& f = whole.frames[ev.tips[t]];
    if (!std::binary_search(bodies.begin(), bodies.end(), f.body)) continue;
    tips.push_back(*robot->find_frame(f.name));
    tip_of.push_back(t);
  }
  s.f0.resize(6 * static_cast<Eigen::Index>(tips.size()));
  for (std::size_t t = 0; t < tip_of.size(); ++t)
    s.f0.segment<6>(6 * static_cast<Eigen::Index>(t)) = ev.state.f0.segment<6>(6 * tip_of[t]);

  Evaluation arm = prepare(*robot, s, std::move(tips), *ev.definitions);
  arm.arm_robot = std::move(robot);  // keeps arm.robot alive
  return std::make_shared<const Evaluation>(std::move(arm));
}

}  // namespace

int Evaluation::rows(ir::Dim d) const {
  switch (d) {
    case ir::Dim::Joint: return N;
    case ir::Dim::Spatial: return 6 * n;
    case ir::Dim::Tip: return 6 * m;
    case ir::Dim::One: return 1;
  }
  return 0;
}

const Evaluation& Evaluation::arm(int i, std::string_view symbol) const {
  const int count = static_cast<int>(roots.size());
  if (i < 1 || i > count) {
    std::string names;
    for (int r : roots) names += (names.empty() ? "" : ", ") + robot->bodies[r].name;
    throw UserError(fmt::format("{} has {} arm{} (root subtrees: {}): {} names arm {}", robot->source, count,
                                count == 1 ? "" : "s", names.empty() ? "none" : names, symbol, i));
  }
  return arms.empty() ? *this : *arms[static_cast<std::size_t>(i - 1)];
}

Evaluation prepare(const Robot& robot, const State& state, std::vector<int> tips, const ir::Definitions& definitions) {
  Evaluation ev;
  ev.robot = &robot;
  ev.definitions = &definitions;
  ev.state = state;
  ev.tips = std::move(tips);
  ev.kin = compute_kinematics(robot, ev.state, ev.tips);
  ev.art = compute_articulated(robot, ev.kin);
  ev.N = robot.nv;
  ev.n = robot.size();
  ev.m = static_cast<int>(ev.tips.size());
  ev.roots = robot.roots();
  // Eagerly: an arm costs one more pass of the kinematics over its own bodies.
  if (ev.roots.size() > 1)
    for (int r : ev.roots) ev.arms.push_back(prepare_arm(ev, r));
  return ev;
}

void check_arms(const Evaluation& ev, const ir::Expr& e) {
  const std::vector<int> arms = ir::arms_in(e);
  bool tips = false;  // does an arm's symbol act on the shared tip space?
  auto visit = [&](const auto& self, const ir::Expr& x) -> void {
    if (x.is(ir::Op::Symbol)) {
      const auto found = ir::lookup_indexed(x.name());
      if (found && found->arm > 0) {
        ev.arm(found->arm, x.name());
        tips = tips || found->info->rows == ir::Dim::Tip || found->info->cols == ir::Dim::Tip;
      }
    }
    for (const auto& k : x.kids()) self(self, k);
  };
  visit(visit, e);
  if (!tips || arms.size() < 2) return;
  for (int a : arms) {
    const int m0 = ev.arm(arms.front(), "").m, ma = ev.arm(a, "").m;
    if (ma != m0)
      throw UserError(
          fmt::format("arms {} and {} of {} hold {} and {} tip frames, but {} joins their tip "
                      "spaces (the held object's, "
                      "003 Part II): give every arm as many tips (--tip)",
                      arms.front(), a, ev.robot->source, m0, ma, ir::print(e)));
  }
}

ir::Expr fold_zeros(const ir::Expr& e) {
  using ir::Op;
  switch (e.op()) {
    case Op::Symbol:
    case Op::Identity:
    case Op::Zero: return e;
    case Op::Scale:
    case Op::Adjoint:
    case Op::Derivative: {
      ir::Expr x = fold_zeros(e.kid(0));
      return x.is(Op::Zero) ? x : ir::rebuild(e, {std::move(x)});
    }
    case Op::Inverse: {
      ir::Expr x = fold_zeros(e.kid(0));
      if (x.is(Op::Zero)) throw UserError(fmt::format("cannot invert {}: it is 0", ir::print(e.kid(0))));
      return ir::rebuild(e, {std::move(x)});
    }
    case Op::Sum: {
      std::vector<ir::Expr> terms;
      for (const auto& t : e.kids())
        if (ir::Expr x = fold_zeros(t); !x.is(Op::Zero)) terms.push_back(std::move(x));
      if (terms.empty()) return ir::zero(e.span());
      return terms.size() == 1 ? terms[0] : ir::sum(std::move(terms), e.span());
    }
    case Op::Product: {
      std::vector<ir::Expr> factors;
      for (const auto& f : e.kids()) {
        ir::Expr x = fold_zeros(f);
        if (x.is(Op::Zero)) return x;
        factors.push_back(std::move(x));
      }
      return ir::product(std::move(factors), e.span());
    }
  }
  throw InternalError("unknown IR node");
}

int rows(const Evaluation& ev, ir::Dim d, int arm, const ir::Expr& e) {
  if (arm == ir::kArmTips) {
    const std::vector<int> arms = ir::arms_in(e);
    SOA_ASSERT(!arms.empty(), "the arms' tip space in an expression without arms");
    arm = arms.front();
  }
  return arm == 0 ? ev.rows(d) : ev.arm(arm, "").rows(d);
}

}  // namespace soa::interp
