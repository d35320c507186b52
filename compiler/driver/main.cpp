// soac: the Spatial Operator Algebra compiler's command line.
#include <fmt/format.h>

#include <iostream>

#include "driver/driver.hpp"
#include "support/error.hpp"

int main(int argc, char** argv) {
  using namespace soa::driver;
  CLI::App app{"soac: a compiler for the Spatial Operator Algebra of Rodriguez, Jain and Kreutz-Delgado"};
  app.require_subcommand(1);
  Runner run;
  add_verify(app, run);
  add_eval(app, run);
  add_model(app, run);
  add_derive(app, run);
  add_lower(app, run);
  add_emit(app, run);
  add_jit(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own message is one line; usage errors share the bad-input exit code.
    std::cerr << "soac: error: " << e.what() << "\n";
    return kBadInput;
  }
  try {
    return run();
  } catch (const soa::UserError& e) {
    const std::string msg = e.what();
    std::cerr << (msg.find(": error: ") == std::string::npos ? "soac: error: " + msg : msg) << "\n";
    if (!e.detail().empty()) std::cerr << e.detail() << "\n";
    return kBadInput;
  } catch (const soa::NotImplemented& e) {
    std::cerr << "soac: not implemented: " << e.what() << "\n";
    return kBadInput;
  } catch (const std::exception& e) {
    std::cerr << "soac: internal error (a bug in soac, please report it): " << e.what() << "\n";
    return 3;
  }
}
