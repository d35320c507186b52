// Where soac's identity library comes from (pipeline.hpp): --library FILE, else the file
// $SOAC_LIBRARY names, else the copy of grammar/identities.soa built into soac -- never a
// path into the source tree, so that an installed soac works on its own.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pipeline/pipeline.hpp"
#include "support/error.hpp"
#include "support/test_support.hpp"

using namespace soa;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A one-identity library in a temporary file, removed at the end of the scope.
struct TempLibrary {
  std::string path;
  explicit TempLibrary(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path) << text;
  }
  ~TempLibrary() { std::remove(path.c_str()); }
};

// Sets SOAC_LIBRARY for the scope, restoring what was there.
struct EnvLibrary {
  std::string saved;
  bool had = false;
  explicit EnvLibrary(const std::string& value) {
    if (const char* v = std::getenv("SOAC_LIBRARY")) had = true, saved = v;
    if (value.empty())
      unsetenv("SOAC_LIBRARY");
    else
      setenv("SOAC_LIBRARY", value.c_str(), 1);
  }
  ~EnvLibrary() {
    if (had)
      setenv("SOAC_LIBRARY", saved.c_str(), 1);
    else
      unsetenv("SOAC_LIBRARY");
  }
};

}  // namespace

TEST_CASE("the built-in identity library is grammar/identities.soa as it is now", "[library]") {
  // A stale copy means the build no longer regenerates it when the file changes.
  const std::string file = read_file(test::source_path("grammar/identities.soa"));
  REQUIRE(!file.empty());
  CHECK(std::string(pipeline::builtin_library_text()) == file);
}

TEST_CASE("without --library or SOAC_LIBRARY the built-in copy is used, named identities.soa", "[library]") {
  const EnvLibrary env("");
  const pipeline::Library lib = pipeline::load_library();
  CHECK(lib.module.source->name == "identities.soa");
  CHECK(lib.module.identities.size() ==
        pipeline::load_library(test::source_path("grammar/identities.soa")).module.identities.size());
  CHECK(lib.module.find_identity("MINV") != nullptr);
  CHECK(!lib.rules.empty());
}

TEST_CASE("a library named on the command line comes before SOAC_LIBRARY, which comes before the built-in copy", "[library]") {
  const TempLibrary from_env("soac_test_library_env.soa", "identity ENV \"env\":\n  calM = H phi M phi* H*;\n");
  const TempLibrary from_option("soac_test_library_option.soa", "identity OPT \"option\":\n  calM = H phi M phi* H*;\n");
  const EnvLibrary env(from_env.path);

  const pipeline::Library by_env = pipeline::load_library();
  CHECK(by_env.module.source->name == from_env.path);
  REQUIRE(by_env.module.identities.size() == 1);
  CHECK(by_env.module.identities[0].name == "ENV");

  const pipeline::Library by_option = pipeline::load_library(from_option.path);
  REQUIRE(by_option.module.identities.size() == 1);
  CHECK(by_option.module.identities[0].name == "OPT");
}

TEST_CASE("a missing library file is a bad-input error naming the file", "[library]") {
  const EnvLibrary env("/nonexistent/soac-library.soa");
  CHECK_THROWS_WITH(pipeline::load_library(), Catch::Matchers::Contains("/nonexistent/soac-library.soa: cannot read"));
  CHECK_THROWS_AS(pipeline::load_library("/nonexistent/other.soa"), UserError);
}
