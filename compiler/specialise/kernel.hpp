// A kernel as both back-ends take it (emit-cpp, emit-llvm): its specialised code with what
// a reader of generated code needs to know about it, and the rules every name of
// generated code -- a kernel's, the prefix of a kernel set's symbols -- obeys.
//
// Contract
// - Kernel: the kernel's name, source expression, derivation and meaning (text for the
//   generated code's comments), its input ports and output shape (exec::Layout's), and
//   its ScalarProgram, whose input_count and outputs match that layout (make_kernel
//   checks it).
// - Names: both back-ends name a kernel's symbol <prefix>_<kernel> at global scope (the
//   C++ back-end's `extern "C"` entry points, the LLVM back-end's functions), so the two
//   are interchangeable by name. A name is usable when name_problem() finds nothing: a C
//   identifier, not a C or C++ keyword, not reserved (`main`, a double underscore
//   anywhere, a leading underscore), and a prefix not ending in '_' nor `std`, `Eigen` or
//   `soa_gen` (the generated C++ names those). check_name() turns a problem into a
//   one-line UserError that quotes the name through comment_safe().
// - comment_safe(text): text from outside (a file, the command line) made safe to quote
//   in one line -- the rest of a `//` comment line of generated C++ or an error message:
//   control characters (newlines included), backslashes, `??` (trigraphs), `*/`, invalid
//   UTF-8 and invisible or direction-changing Unicode (line separators, bidi controls:
//   "Trojan Source") become \xNN escapes of their bytes; printable ASCII and other UTF-8
//   are kept. The result never ends a comment, never ends in a backslash and holds no
//   line break.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exec/execute.hpp"
#include "specialise/scalar_program.hpp"

namespace soa::specialise {

struct Port {
  std::string name;  // q, qd, tau, ...
  int size = 0;
  std::optional<exec::Space> space;  // what its entries index (stated in the header), when known
};

struct Kernel {
  std::string name;        // C identifier: inverse_dynamics
  std::string expression;  // as the user wrote it: calM qdd + C
  std::string derivation;  // one or more lines: the form lowered, the identities used
  std::string meaning;     // one line for the header
  std::vector<Port> inputs;
  std::string output;
  int rows = 0, cols = 1;                           // output shape; cols = 1 for a vector
  std::optional<exec::Space> row_space, col_space;  // what the output's rows and columns index, when known
  ScalarProgram code;
};

// A kernel from its lowered program and specialised code; ports from the program's layout.
Kernel make_kernel(std::string name, std::string expression, std::string derivation, std::string meaning,
                   const exec::SweepProgram& program, const exec::Layout& layout, ScalarProgram code);

// Why `name` cannot name a kernel or the prefix of generated code (see Contract), or "" when
// it can. `prefix`: the namespace / extern "C" prefix, which must also not be std, Eigen or
// soa_gen.
std::string name_problem(std::string_view name, bool prefix = false);
// UserError "<what> 'name' <problem>" when name_problem() finds one.
void check_name(std::string_view name, std::string_view what, bool prefix = false);

// "panda" -> "panda", "random tree (seed 3)" -> "random_tree_seed_3"; always usable
// (check_name): "7dof-arm" -> "robot_7dof_arm", "int" -> "robot_int".
std::string identifier(std::string_view text);

// `text` safe to quote in one line (see Contract).
std::string comment_safe(std::string_view text);

}  // namespace soa::specialise
