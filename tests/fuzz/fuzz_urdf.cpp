// libFuzzer target: the URDF loader (runtime/model) and what every command does next.
//
// Every input is loaded as a fixed-base and as a floating-base robot. It must either load
// or fail with a soa::UserError whose message is one line starting with the file's name
// (model/robot.hpp); anything else thrown, a crash or a sanitizer report is a finding. A
// robot that loads must keep model/robot.hpp's contract (parents after their children,
// joint-space offsets in depth-first order adding up to nq and nv, frames on bodies), and
// its subtrees, a random state's kinematics and the articulated-body recursions must not
// fail other than by a UserError.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "model/kinematics.hpp"
#include "model/robot.hpp"
#include "support/error.hpp"

namespace {

using namespace soa;

constexpr const char* kName = "fuzz.urdf";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_urdf: %s\n", what.c_str());
  std::abort();
}

void check_error(const UserError& e) {
  const std::string_view m = e.what();
  if (m.substr(0, std::string_view(kName).size()) != kName)
    fail("error message without the file's name: " + std::string(m));
  if (m.find('\n') != std::string_view::npos) fail("error message of several lines: " + std::string(m));
}

void check_contract(const Robot& r) {
  int nq = 0, nv = 0;
  for (int k = 0; k < r.size(); ++k) {
    const Body& b = r.bodies[k];
    if (b.parent != -1 && (b.parent <= k || b.parent >= r.size())) fail("body " + b.name + ": parent out of order");
    for (int c : b.children)
      if (c < 0 || c >= k || r.bodies[c].parent != k) fail("body " + b.name + ": bad child list");
    nq += b.nq();
    nv += b.nv();
    if (b.q_offset < 0 || b.q_offset + b.nq() > r.nq || b.v_offset < 0 || b.v_offset + b.nv() > r.nv)
      fail("body " + b.name + ": joint-space offsets out of range");
  }
  if (nq != r.nq || nv != r.nv) fail("nq/nv are not the sums over the bodies");
  for (const Frame& f : r.frames)
    if (f.body < 0 || f.body >= r.size()) fail("frame " + f.name + ": no body");
  if (static_cast<int>(r.joint_order().size()) != r.size()) fail("joint_order: one entry per body expected");
}

void exercise(const Robot& r) {
  check_contract(r);
  for (int root : r.roots()) check_contract(subtree(r, root));
  const std::vector<int> tips = r.default_tips();
  std::mt19937_64 rng(1);
  const State state = random_state(r, static_cast<int>(tips.size()), rng);
  try {
    const Kinematics kin = compute_kinematics(r, state, tips);
    (void)compute_articulated(r, kin);
  } catch (const UserError& e) {
    check_error(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool floating : {false, true}) {
    try {
      exercise(parse_urdf(text, kName, LoadOptions{floating}));
    } catch (const UserError& e) {
      check_error(e);
    }
  }
  return 0;
}
