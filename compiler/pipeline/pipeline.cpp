#include "pipeline/pipeline.hpp"

#include <cstdlib>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "support/error.hpp"

namespace soa::pipeline {

rewrite::IdentitySpec identity_spec(const syntax::Identity& id) {
  rewrite::IdentitySpec spec{id.name, id.citation, id.sides, {}};
  for (const auto& [key, value] : id.attributes) spec.attributes.push_back(value.empty() ? key : key + "=" + value);
  return spec;
}

verify::Claim claim(const syntax::Identity& id) {
  return {id.name, id.citation, id.sides, id.has("serial"), id.has("false")};
}

namespace {

syntax::Module builtin_module() {
  return syntax::parse_module(
      std::make_shared<const syntax::Source>(syntax::Source{"identities.soa", std::string(builtin_library_text())}));
}

}  // namespace

Library load_library(const std::string& path) {
  syntax::Module module;
  const char* env = std::getenv("SOAC_LIBRARY");
  if (!path.empty())
    module = syntax::load_module(path);
  else if (env && *env)
    module = syntax::load_module(env);
  else
    module = builtin_module();
  Library lib{std::move(module), {}, {}};
  // A library of its own rules keeps the built-in definitions and lowering ways for what it
  // does not state itself.
  const bool builtin = path.empty() && !(env && *env);
  const ir::Algebra base = builtin ? ir::Algebra{} : syntax::algebra_of(builtin_module());
  lib.algebra = syntax::algebra_of(lib.module, builtin ? nullptr : &base);
  std::vector<rewrite::IdentitySpec> specs;
  for (const auto& id : lib.module.identities) specs.push_back(identity_spec(id));
  lib.rules = rewrite::rules_from_identities(specs);
  return lib;
}

}  // namespace soa::pipeline
