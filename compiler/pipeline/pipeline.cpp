#include "pipeline/pipeline.hpp"

#include <cstdlib>
#include <memory>
#include <utility>

namespace soa::pipeline {

rewrite::IdentitySpec identity_spec(const syntax::Identity& id) {
  rewrite::IdentitySpec spec{id.name, id.citation, id.sides, {}};
  for (const auto& [key, value] : id.attributes) spec.attributes.push_back(value.empty() ? key : key + "=" + value);
  return spec;
}

verify::Claim claim(const syntax::Identity& id) {
  return {id.name, id.citation, id.sides, id.has("serial"), id.has("false")};
}

Library load_library(const std::string& path) {
  syntax::Module module;
  if (!path.empty()) {
    module = syntax::load_module(path);
  } else if (const char* env = std::getenv("SOAC_LIBRARY"); env && *env) {
    module = syntax::load_module(env);
  } else {
    module = syntax::parse_module(
        std::make_shared<const syntax::Source>(syntax::Source{"identities.soa", std::string(builtin_library_text())}));
  }
  Library lib{std::move(module), {}};
  std::vector<rewrite::IdentitySpec> specs;
  for (const auto& id : lib.module.identities) specs.push_back(identity_spec(id));
  lib.rules = rewrite::rules_from_identities(specs);
  return lib;
}

}  // namespace soa::pipeline
