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

#include "algebra/print.hpp"
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

TEST_CASE("a library named on the command line comes before SOAC_LIBRARY, which comes before the built-in copy",
          "[library]") {
  // Each library is the built-in one plus an identity of its own, so each is complete.
  const std::string base(pipeline::builtin_library_text());
  const TempLibrary from_env("soac_test_library_env.soa", base + "identity ENV \"env\":\n  calM = H phi M phi* H*;\n");
  const TempLibrary from_option("soac_test_library_option.soa",
                                base + "identity OPT \"option\":\n  calM = H phi M phi* H*;\n");
  const EnvLibrary env(from_env.path);

  const pipeline::Library by_env = pipeline::load_library();
  CHECK(by_env.module.source->name == from_env.path);
  CHECK(by_env.module.find_identity("ENV") != nullptr);
  CHECK(by_env.module.find_identity("OPT") == nullptr);

  const pipeline::Library by_option = pipeline::load_library(from_option.path);
  CHECK(by_option.module.find_identity("OPT") != nullptr);
  CHECK(by_option.module.find_identity("ENV") == nullptr);
}

TEST_CASE("a library of its own rules keeps the built-in definitions for what it does not define", "[library]") {
  const TempLibrary partial("soac_test_library_partial.soa",
                            "identity K2 \"x\" [definition]:\n  K = phi E_phi G - E_phi phitilde G;\n");
  const pipeline::Library lib = pipeline::load_library(partial.path);
  CHECK(lib.algebra.definitions.missing().empty());
  CHECK(lib.algebra.definitions.of(ir::Sym::K)->source.identity == "K2");     // its own
  CHECK(lib.algebra.definitions.of(ir::Sym::calM)->source.identity == "NE");  // the built-in one
  CHECK(lib.algebra.lowering("gram") != nullptr);
  // Without a base, a module missing definitions is refused, naming its file.
  CHECK_THROWS_WITH(syntax::algebra_of(lib.module), Catch::Contains("the library defines no") &&
                                                        Catch::Contains("calM") && Catch::Contains(partial.path));
}

TEST_CASE("the library's definitions and lowering ways are what the compiler reads", "[library]") {
  const pipeline::Library lib = pipeline::load_library(test::source_path("grammar/identities.soa"));
  const ir::Definitions& d = lib.algebra.definitions;
  CHECK(d.missing().empty());
  CHECK(d.of(ir::Sym::calM)->source.identity == "NE");
  CHECK(ir::print(d.of(ir::Sym::calM)->body) == "H phi M phi* H*");
  CHECK(ir::print(d.of(ir::Sym::K)->body) == "E_phi G");
  CHECK(ir::print(d.of_inverse(ir::Sym::phi)->body) == "I - E_phi");
  CHECK(d.of(ir::Sym::H) == nullptr);  // a per-body block of the model, not a definition
  CHECK(lib.algebra.lowering("composite-body")->source.identity == "CRB-H");
  CHECK(lib.algebra.lowering("gram")->source.identity == "MINV");
  CHECK(lib.algebra.lowering("newton-euler")->source.identity == "RNEA");
}

TEST_CASE("a missing library file is a bad-input error naming the file", "[library]") {
  const EnvLibrary env("/nonexistent/soac-library.soa");
  CHECK_THROWS_WITH(pipeline::load_library(), Catch::Matchers::Contains("/nonexistent/soac-library.soa: cannot read"));
  CHECK_THROWS_AS(pipeline::load_library("/nonexistent/other.soa"), UserError);
}

TEST_CASE("no stage spells out an operator: definitions live in the library alone", "[library]") {
  // An operator built by name in C++ (ir::symbol("calM"), a product of named symbols) would
  // be a definition the verifier never checks. Stages name symbols by ir::Sym and expand
  // derived ones by the library's definitions.
  namespace fs = std::filesystem;
  std::vector<std::string> offenders;
  for (const char* dir : {"compiler", "runtime"})
    for (const auto& entry : fs::recursive_directory_iterator(test::source_path(dir))) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp") continue;
      const std::string text = read_file(entry.path().string());
      for (const char* pattern : {"symbol(\"", "is_symbol(\"", "lookup(\"calM\")"})
        if (text.find(pattern) != std::string::npos) offenders.push_back(entry.path().string() + ": " + pattern);
    }
  INFO([&] {
    std::string s;
    for (const auto& o : offenders) s += o + "\n";
    return s;
  }());
  CHECK(offenders.empty());
}
