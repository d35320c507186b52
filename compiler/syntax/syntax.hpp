// The syntax stage: operator-language text and .soa files -> operator IR (algebra/expr.hpp).
//
// Contract
// - The language and the .soa format are described in grammar/README.md; grammar/soa.peg is
//   the grammar in PEG notation and matches the PEGTL rules in syntax/grammar.hpp.
// - Every Expr produced here uses canonical vocabulary names (aliases are resolved), and
//   every node carries a span (byte offsets into Source::text) for diagnostics. Names
//   defined with `let` are inlined; their nodes carry the span of the use.
// - Everything returned is shape-checked (algebra/shape.hpp): an expression has a definite
//   shape, the sides of an equation agree.
// - All mistakes in the text are soa::UserError with "file:line:col: error: message" and a
//   caret line in detail() (syntax/diagnostics.hpp). The first mistake in text order wins.
// - Nesting is limited (parser.hpp: 200 parentheses deep, 200 postfix operators in a row,
//   1000 operators deep with `let`s inlined): deeper text is a UserError at the first
//   construct past the limit, never a stack overflow here or in a later pass. Flat sums
//   and products may be of any length.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "algebra/definitions.hpp"
#include "algebra/expr.hpp"

namespace soa::syntax {

struct Source {
  std::string name;  // file path, or "<command line>"
  std::string text;
};

// A place in a source, kept so later stages can point back at the text.
struct Located {
  std::shared_ptr<const Source> source;
  ir::Span span;
};

struct Identity {
  std::string name;
  std::string citation;
  std::vector<ir::Expr> sides;                                  // at least two; all equal
  std::vector<std::pair<std::string, std::string>> attributes;  // in order; value "" if none
  Located where;                                                // the identity's name

  bool has(std::string_view key) const;
  std::string attribute(std::string_view key, std::string fallback) const;
};

struct Kernel {
  std::string name;
  std::vector<std::string> inputs;  // as written; not checked against the body
  ir::Expr body;                    // for a derivative kernel, the expression differentiated
  Located where;                    // the kernel's name
  // `kernel NAME(q, qd) = d(EXPR)/d(q, qd);`: the inputs the body is differentiated with
  // respect to (pipeline::KernelSpec::wrt); empty for a plain kernel.
  std::vector<std::string> wrt = {};
};

// A constraint: `weld FRAME;`, `weld FRAME: DIR, ...;` or `contact FRAME;` with the world,
// `weld FRAME to OTHER;` (and its directions) between two frames of the robot
// (grammar/soa.peg). Frames are checked against the robot later (soac's driver).
// `grasp FRAME to OTHER: stiffness KT KR, damping DT DR;` is a Hold of kind "grasp": a
// compliant grasp (a spring and damper, model/robot.hpp Spring), no constraint.
struct Hold {
  std::string kind;  // "weld", "contact" or "grasp"
  std::string frame;
  std::string to;                       // the frame a weld joins FRAME to; empty: the world
  std::vector<std::string> directions;  // as written, distinct; empty: all six (weld), x, y, z (contact)
  Located where;                        // the frame's name
  std::array<double, 4> spring{};       // a grasp's KT, KR, DT, DR
};

struct Definition {
  std::string name;
  ir::Expr body;
  Located where;  // the defined name
};

struct Module {
  std::shared_ptr<const Source> source;
  std::vector<Definition> definitions;  // in file order
  std::vector<Identity> identities;     // in file order
  std::vector<Kernel> kernels;          // in file order
  std::vector<Hold> holds;              // in file order

  const Identity* find_identity(std::string_view name) const;
  const Kernel* find_kernel(std::string_view name) const;
};

// A whole .soa text. Throws UserError.
Module parse_module(std::shared_ptr<const Source> src);

// Read and parse a .soa file. An unreadable file is UserError "path: cannot read: reason".
Module load_module(const std::string& path);

// One expression. `scope` (optional) supplies `let` definitions usable by name.
ir::Expr parse_expression(std::shared_ptr<const Source> src, const Module* scope = nullptr);

// The algebra of a module's identities (compiler/algebra/definitions.hpp): those marked
// [definition] and lowering=WAY; what the module does not state itself comes from `base`
// (a library of a few rules keeps the built-in library's definitions and ways). A
// UserError naming the module's file when a derived symbol of the vocabulary is still
// left without a definition.
ir::Algebra algebra_of(const Module& module, const ir::Algebra* base = nullptr);

// SIDE = SIDE [= SIDE ...]: at least two sides, shape-checked as one equation.
std::vector<ir::Expr> parse_equation(std::shared_ptr<const Source> src, const Module* scope = nullptr);

}  // namespace soa::syntax
