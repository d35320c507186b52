// The module's reference: kernels run through the C++ API alone (pipeline::Dynamics, no
// bindings), on states read from stdin, every output printed bit for bit (%a). The Python
// tests give it the inputs they give the module and compare the numbers.
//
//   soa_python_reference URDF BACKEND [--floating] [--derivatives] [--tip FRAME]...
//
// BACKEND is jit or runtime; the kernel set is the standard one (with the derivative kernels
// after --derivatives), as soac.compile(robot, derivatives=...) makes it. Each line of stdin
// is a kernel's name and one state's inputs concatenated in its layout (any form strtod
// reads); each line of stdout that kernel's output, column-major, in %a.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/robot.hpp"
#include "pipeline/dynamics.hpp"
#include "support/error.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: soa_python_reference URDF jit|runtime [--floating] [--derivatives] [--tip FRAME]...\n";
    return 2;
  }
  const std::string urdf = argv[1], backend = argv[2];
  bool floating = false, derivatives = false;
  std::vector<std::string> tip_names;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--floating")
      floating = true;
    else if (a == "--derivatives")
      derivatives = true;
    else if (a == "--tip" && i + 1 < argc)
      tip_names.push_back(argv[++i]);
    else {
      std::cerr << "soa_python_reference: unknown argument " << a << "\n";
      return 2;
    }
  }
  try {
    const soa::Robot robot = soa::load_urdf(urdf, soa::LoadOptions{floating});
    std::vector<int> tips = robot.default_tips();
    if (!tip_names.empty()) {
      tips.clear();
      for (const std::string& t : tip_names) tips.push_back(robot.find_frame(t).value());
    }
    const auto dyn = soa::pipeline::Dynamics::create(
        robot, tips, backend == "jit" ? soa::pipeline::Backend::Jit : soa::pipeline::Backend::Runtime,
        soa::pipeline::kernel_set("", false, derivatives));
    auto data = dyn.data();
    std::vector<double> in, out;
    for (std::string line; std::getline(std::cin, line);) {
      std::istringstream words(line);
      std::string kernel;
      words >> kernel;
      const soa::exec::Layout& layout = dyn.layout(kernel);
      in.clear();
      for (std::string w; words >> w;) in.push_back(std::strtod(w.c_str(), nullptr));
      if (in.size() != static_cast<std::size_t>(layout.input_size))
        throw soa::UserError(kernel + ": " + std::to_string(in.size()) + " inputs on a line, the kernel needs " +
                             std::to_string(layout.input_size));
      out.assign(static_cast<std::size_t>(layout.output_size()), 0.0);
      dyn.run(kernel, in.data(), out.data(), data);
      for (std::size_t j = 0; j < out.size(); ++j) std::printf("%s%a", j ? " " : "", out[j]);
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::cerr << "soa_python_reference: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
