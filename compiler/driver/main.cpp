// soac: the Spatial Operator Algebra compiler's command line.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "driver/driver.hpp"
#include "emit-cpp/emit_cpp.hpp"
#include "support/error.hpp"

int main(int argc, char** argv) {
  using namespace soa::driver;
  CLI::App app{"soac: a compiler for the Spatial Operator Algebra of Rodriguez, Jain and Kreutz-Delgado"};
  app.name("soac");
  app.require_subcommand(1);
  app.set_version_flag("--version", fmt::format("soac {}", soa::emit::soac_version()));
  // Set before the subcommands are added, which copy it: every --help shows the defaults.
  app.option_defaults()->always_capture_default();
  Runner run;
  add_verify(app, run);
  add_eval(app, run);
  add_model(app, run);
  add_derive(app, run);
  add_lower(app, run);
  add_emit(app, run);
  add_jit(app, run);
  add_vocabulary(app, run);
  const std::string footer =
      "Exit codes: 0 success; 1 a check failed (verify, --check, a self-test);\n"
      "  2 bad input (usage, DSL text, URDF, state file, a singular model); 3 internal error.\n"
      "Identity library: --library FILE, else the file $SOAC_LIBRARY names, else the copy\n"
      "  of grammar/identities.soa built into soac.\n"
      "Citations (\"001 Identity 6\"): docs/bibliography.md; the mathematics: docs/mathematics.md.\n";
  app.footer(footer);
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->footer(footer);
    // An empty list has nothing to show ("=[]" would be noise).
    for (CLI::Option* opt : sub->get_options())
      if (opt->get_default_str() == "[]") opt->default_str("");
  }
  if (argc <= 1) {
    // No subcommand: the usage, as a usage error (nothing was done).
    std::cerr << app.help();
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    // --help, --help-all, --version: printed on stdout, exit 0.
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own message is one line; usage errors share the bad-input exit code.
    std::cerr << "soac: error: " << e.what() << "\n";
    return kBadInput;
  }
  try {
    const int code = run();
    // Output that never arrived (a full disk, a closed pipe) is a failure, not a success.
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
      std::cerr << "soac: error: cannot write to stdout: " << std::strerror(errno) << "\n";
      return code == kOk ? kBadInput : code;
    }
    return code;
  } catch (const soa::UserError& e) {
    const std::string msg = e.what();
    std::cerr << (msg.find(": error: ") == std::string::npos ? "soac: error: " + msg : msg) << "\n";
    if (!e.detail().empty()) std::cerr << e.detail() << "\n";
    return kBadInput;
  } catch (const soa::NotImplemented& e) {
    std::cerr << "soac: not implemented: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    if (std::ferror(stdout)) {  // fmt::print throws when a write fails
      std::cerr << "soac: error: cannot write to stdout (" << e.what() << ")\n";
      return kBadInput;
    }
    std::cerr << "soac: internal error (a bug in soac, please report it): " << e.what() << "\n";
    return kInternalError;
  }
}
