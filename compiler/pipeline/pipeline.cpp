#include "pipeline/pipeline.hpp"

#include <cstdlib>

namespace soa::pipeline {

std::string default_library_path() {
  if (const char* env = std::getenv("SOAC_LIBRARY"); env && *env) return env;
  return SOA_LIBRARY_PATH;
}

rewrite::IdentitySpec identity_spec(const syntax::Identity& id) {
  rewrite::IdentitySpec spec{id.name, id.citation, id.sides, {}};
  for (const auto& [key, value] : id.attributes) spec.attributes.push_back(value.empty() ? key : key + "=" + value);
  return spec;
}

verify::Claim claim(const syntax::Identity& id) {
  return {id.name, id.citation, id.sides, id.has("serial"), id.has("false")};
}

Library load_library(const std::string& path) {
  Library lib{syntax::load_module(path), {}};
  std::vector<rewrite::IdentitySpec> specs;
  for (const auto& id : lib.module.identities) specs.push_back(identity_spec(id));
  lib.rules = rewrite::rules_from_identities(specs);
  return lib;
}

}  // namespace soa::pipeline
