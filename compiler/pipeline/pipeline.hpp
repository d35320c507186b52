// The pipeline in one place (as Halide's Lower.cpp): which stage runs after which, and the
// glue between the stages' neutral types. Each function is one step of
//   text -> AST/IR (syntax) -> rewritten IR (rewrite) -> checked (verify) -> ...
// and nothing here holds state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "algebra/definitions.hpp"
#include "rewrite/rewrite.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace soa::pipeline {

// The identity library: the module it came from and the rules the rewriter may use. One
// source of truth: the rewriter gets its rules from here, the verifier its claims.
struct Library {
  syntax::Module module;
  std::vector<rewrite::Rule> rules;
  ir::Algebra algebra;  // the definitions and the lowering's ways (identities marked so)
};

// The identity library read from `path`; with an empty path, the default one: the file the
// environment variable SOAC_LIBRARY names, else the built-in copy. The command line's
// --library comes first, so the order is --library FILE > $SOAC_LIBRARY > built in. The
// algebra (definitions, lowering ways) of a library that is not the built-in one is its
// own, completed by the built-in one's for what it does not state.
Library load_library(const std::string& path = {});

// grammar/identities.soa as it was when soac was built, compiled in (a CMake step embeds the
// file and reruns when it changes), so that an installed soac needs no source tree. Its
// diagnostics and citations name it "identities.soa".
std::string_view builtin_library_text();

rewrite::IdentitySpec identity_spec(const syntax::Identity& id);
verify::Claim claim(const syntax::Identity& id);

}  // namespace soa::pipeline
