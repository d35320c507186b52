// A robot with its tips, as `soac` and the Python module load it: the tips named, held
// (welds, contacts) or chosen for a random robot, and the robot described.
//
// Contract
// - Tips are frame indices, in the order their f0 and J blocks take.
// - Errors are UserErrors naming the robot (Robot::source), the option or argument that gave
//   the frame (`--tip`, `tips`, `--weld`) and the frame: soac's one-line messages. The caller
//   passes its own spelling of the options, so that the command line and the module say the
//   same thing in their own terms.
// - The texts (describe, model_text, mimic_warning) are what soac prints, byte for byte (the
//   lit tests and the Python tests compare them).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/robot.hpp"

namespace soa {

struct LoadedRobot {
  Robot robot;
  std::vector<int> tips;  // frame indices; Robot::default_tips() when none were named
  // "panda.urdf (fixed base, 9 bodies, N = 9, tips: panda_hand_tcp)", each held tip with
  // what holds it.
  std::string describe() const;
};

// Frame names -> frame indices, or the robot's default tips when `names` is empty. `option`
// names the flag or argument in errors, `floating` how to ask for a free-flyer (a tip on a
// link welded to the world never moves).
std::vector<int> resolve_tips(const Robot& robot, const std::vector<std::string>& names,
                              const std::string& option = "--tip", const std::string& floating = "--floating");

// A random robot for checking an expression or a claim: with `arms` > 0 (the highest arm
// index it names, 003 Part II) random_arms() with one tip per arm, its lowest-numbered body
// (a leaf: "the grasp"), so that the arms' tip spaces agree; otherwise random_tree() with
// every leaf as a tip (the most tips: the strongest check of B, J and f0).
LoadedRobot random_robot(std::uint64_t seed, int arms, const RandomTreeOptions& options);

// A constraint a kernel file declares (`weld FRAME ...;`, `contact FRAME;`), in the model's
// terms: the frame, the one it is welded to (empty: the world), the directions held.
struct Hold {
  std::string frame;
  std::string to;
  Directions held = kAllDirections;
  // A compliant grasp (`grasp FRAME to OTHER: stiffness KT KR, damping DT DR;`) instead of a
  // weld: the spring's constants (its `to` is set from `to`).
  std::optional<Spring> spring;
  // Throws the UserError that names the declaration (its file and place) with `why`.
  std::function<void(const std::string& why)> fail;
};

struct HoldOptions {
  std::vector<std::string> welds;     // "FRAME[=OTHER][:DIRS]": DIRS a subset of rx,ry,rz,x,y,z; all six by default
  std::vector<std::string> contacts;  // "FRAME": a point contact, x,y,z held
  std::vector<Hold> declared;         // held after the welds and contacts
  std::vector<std::string> grasps;    // "FRAME=OTHER:KT,KR,DT,DR": compliant grasps (Spring), after those
  std::string weld_option = "--weld", contact_option = "--contact", floating_option = "--floating",
              grasp_option = "--grasp";
};

// Marks the frames held (Frame::held, Frame::held_to) and grasped (Frame::spring) and
// returns them as the tips: the welds, the contacts, the declared ones, in that order, then
// the frames welded to that are not held themselves, then each compliant grasp's two frames
// not among those. A frame held or grasped twice, a weld or grasp of a frame to itself or to
// its own body, one made twice from both ends, and a grasp with negative, non-finite or
// all-zero constants are UserErrors naming the declaration.
std::vector<int> hold_frames(Robot& robot, const HoldOptions& holds);

// What `soac model` prints: the description, the sizes, one line per body (k, link, joint,
// type, parent, q and v offsets, children), the arms when there are several roots, the
// merged frames and the links welded to the world.
std::string model_text(const LoadedRobot& robot);

// "SOURCE: mimic joints treated as independent: J (mimics K), ..."; empty without any.
std::string mimic_warning(const Robot& robot);

}  // namespace soa
