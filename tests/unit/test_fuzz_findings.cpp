// What the fuzzers (tests/fuzz, docs/testing.md) found, as specifications: each finding's
// input also stays in the fuzz corpus (tests/fuzz/corpus/TARGET/regress-*).
#include <catch2/catch.hpp>

#include <string>

#include "model/robot.hpp"
#include "support/error.hpp"

using Catch::Matchers::Contains;

namespace {

std::string load_error(const std::string& urdf) {
  try {
    (void)soa::parse_urdf(urdf, "names.urdf");
  } catch (const soa::UserError& e) {
    return e.what();
  }
  FAIL("the URDF loaded: " << urdf);
  return {};
}

}  // namespace

TEST_CASE("an error message stays one line whatever the input it quotes holds", "[fuzz]") {
  // XML attributes may hold any character (&#10; is a newline): the message quotes the
  // name with its control characters escaped.
  const std::string head = R"(<robot name="r"><link name="base"/>)"
                           R"(<link name="a"><inertial><mass value="1"/>)"
                           R"(<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>)";
  const std::string type = load_error(head + R"(<joint name="j" type="revolute&#10;x">)"
                                             R"(<parent link="base"/><child link="a"/></joint></robot>)");
  CHECK(type.find('\n') == std::string::npos);
  CHECK_THAT(type, Contains("unknown joint type 'revolute\\nx'"));

  const std::string leaf =
      load_error(head + R"(<link name="tip&#10;int x;&#13;&#9;&#1;"/>)"
                        R"(<joint name="j" type="revolute"><parent link="base"/><child link="a"/></joint>)"
                        R"(<joint name="k" type="revolute"><parent link="a"/>)"
                        R"(<child link="tip&#10;int x;&#13;&#9;&#1;"/></joint></robot>)");
  CHECK(leaf.find('\n') == std::string::npos);
  CHECK_THAT(leaf, Contains("link 'tip\\nint x;\\r\\t\\x01'"));
}

TEST_CASE("UserError writes control characters as escapes and keeps everything else", "[fuzz]") {
  CHECK(std::string(soa::UserError("a\nb\r\tc\x7f\x1b d").what()) == "a\\nb\\r\\tc\\x7f\\x1b d");
  CHECK(std::string(soa::UserError("φ̃ 'x' \"y\" \\n").what()) == "φ̃ 'x' \"y\" \\n");
  CHECK(soa::UserError("m", "line 1\n  ^").detail() == "line 1\n  ^");
}
