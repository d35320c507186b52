// The pipeline in one place (as Halide's Lower.cpp): which stage runs after which, and the
// glue between the stages' neutral types. Each function is one step of
//   text -> AST/IR (syntax) -> rewritten IR (rewrite) -> checked (verify) -> ...
// and nothing here holds state.
#pragma once

#include <string>
#include <vector>

#include "rewrite/rewrite.hpp"
#include "syntax/syntax.hpp"
#include "verify/verify.hpp"

namespace soa::pipeline {

// The identity library: the module it came from and the rules the rewriter may use. One
// source of truth: the rewriter gets its rules from here, the verifier its claims.
struct Library {
  syntax::Module module;
  std::vector<rewrite::Rule> rules;
};

// grammar/identities.soa of this source tree, unless SOAC_LIBRARY names another file.
std::string default_library_path();
Library load_library(const std::string& path);

rewrite::IdentitySpec identity_spec(const syntax::Identity& id);
verify::Claim claim(const syntax::Identity& id);

}  // namespace soa::pipeline
