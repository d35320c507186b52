// .soa modules: declarations (let, identity, kernel) -> Module, one declaration at a time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "algebra/print.hpp"
#include "algebra/shape.hpp"
#include "algebra/vocabulary.hpp"
#include "support/error.hpp"
#include "syntax/diagnostics.hpp"
#include "syntax/parser.hpp"

namespace soa::syntax {

bool Identity::has(std::string_view key) const {
  return std::any_of(attributes.begin(), attributes.end(), [&](const auto& a) { return a.first == key; });
}

std::string Identity::attribute(std::string_view key, std::string fallback) const {
  for (const auto& [k, v] : attributes)
    if (k == key) return v;
  return fallback;
}

const Identity* Module::find_identity(std::string_view name) const {
  for (const Identity& i : identities)
    if (i.name == name) return &i;
  return nullptr;
}

const Kernel* Module::find_kernel(std::string_view name) const {
  for (const Kernel& k : kernels)
    if (k.name == name) return &k;
  return nullptr;
}

namespace {

namespace g = grammar;
using detail::Node;

// The attributes the rest of the compiler understands. Anything else is refused rather
// than kept, because a misspelt "serail" would otherwise silently change nothing.
constexpr std::string_view kRewriteValues[] = {"ltr", "rtl", "both", "none"};
constexpr std::string_view kLoweringValues[] = {"newton-euler", "composite-body", "gram"};
// Rows of a frame's twist [angular; linear] (model/robot.hpp Directions, whose names these are).
constexpr std::string_view kDirections[] = {"rx", "ry", "rz", "x", "y", "z"};
constexpr const char* kKnownAttributes =
    "serial, false, definition, rewrite=ltr|rtl|both|none, lowering=newton-euler|composite-body|gram";

class ModuleBuilder {
public:
  explicit ModuleBuilder(std::shared_ptr<const Source> src) : src_(*src) { module_.source = std::move(src); }

  Module run() {
    detail::Input in = detail::input_over(src_);
    for (;;) {
      const auto root = detail::parse_tree<g::module_step>(src_, in);
      if (!root || root->children.empty()) break;  // end of the text
      const Node& decl = *root->children.front();
      // A fresh Builder per declaration: the names in scope are the lets seen so far.
      const detail::Builder builder(src_, &module_.definitions);
      if (decl.is_type<g::let_decl>())
        let(decl, builder);
      else if (decl.is_type<g::identity_decl>())
        identity(decl, builder);
      else if (decl.is_type<g::hold_decl>())
        hold(decl, builder);
      else if (decl.is_type<g::grasp_decl>())
        grasp(decl, builder);
      else
        kernel(decl, builder);
    }
    return std::move(module_);
  }

private:
  const Source& src_;
  Module module_;

  Located at(const Node& n, const detail::Builder& b) const { return {module_.source, b.span(n)}; }

  template <typename Item>
  void refuse_duplicate(const std::vector<Item>& items, const Node& name, const detail::Builder& b,
                        std::string_view what) const {
    for (const Item& item : items)
      if (item.name == name.string_view())
        fail(src_, b.span(name),
             fmt::format("duplicate {} '{}' (first declared at {})", what, item.name, location(item.where)));
  }

  void let(const Node& decl, const detail::Builder& b) {
    const Node& name = *decl.children.at(0);
    const std::string_view text = name.string_view();
    if (text == "I" || ir::lookup(text) != nullptr)
      fail(src_, b.span(name), fmt::format("'{}' is already a name of the operator language", text));
    refuse_duplicate(module_.definitions, name, b, "definition");
    ir::Expr body = b.expression(*decl.children.at(1));
    detail::check_shape(src_, body);
    module_.definitions.push_back({std::string(text), std::move(body), at(name, b)});
  }

  void identity(const Node& decl, const detail::Builder& b) {
    Identity id;
    const Node& name = *decl.children.at(0);
    refuse_duplicate(module_.identities, name, b, "identity");
    id.name = name.string();
    id.where = at(name, b);
    id.citation = decl.children.at(1)->string();
    for (std::size_t i = 2; i + 1 < decl.children.size(); ++i) attribute(*decl.children[i], b, id);
    id.sides = b.equation(*decl.children.back());
    detail::check_sides(src_, id.sides);
    if (id.has("definition")) check_definition(id, b.span(name));
    if (id.has("lowering"))
      for (const Identity& other : module_.identities)
        if (other.attribute("lowering", "") == id.attribute("lowering", ""))
          fail(src_, b.span(name),
               fmt::format("lowering={} is given twice (first by '{}' at {})", id.attribute("lowering", ""), other.name,
                           location(other.where)));
    module_.identities.push_back(std::move(id));
  }

  // S0 of a definition is a lone derived symbol of the whole robot (or the inverse of a
  // recursion), defined at most once in a module.
  void check_definition(const Identity& id, ir::Span where) const {
    const ir::Expr& lhs = id.sides.front();
    const bool inverse = lhs.is(ir::Op::Inverse);
    const ir::Expr& s = inverse ? lhs.kid(0) : lhs;
    const ir::SymbolInfo* info = s.is(ir::Op::Symbol) ? s.info() : nullptr;
    const bool ok = info && s.arm() == 0 &&
                    (inverse ? info->role == ir::Role::Recursion
                             : info->role == ir::Role::Defined || info->role == ir::Role::Compound);
    if (!ok)
      fail(src_, where,
           fmt::format("identity '{}' is a definition, so its first side must be a derived symbol of the "
                       "vocabulary (role Defined or Compound) or the inverse of phi or psi, not {}",
                       id.name, ir::print(lhs)));
    for (const Identity& other : module_.identities)
      if (other.has("definition") && other.sides.front() == lhs)
        fail(src_, where,
             fmt::format("{} is defined twice: by '{}' and by '{}' (at {})", ir::print(lhs), id.name, other.name,
                         location(other.where)));
  }

  void attribute(const Node& attr, const detail::Builder& b, Identity& id) const {
    const Node& key_node = *attr.children.at(0);
    const std::string key = key_node.string();
    const std::string value = attr.children.size() > 1 ? attr.children[1]->string() : "";
    if (id.has(key)) fail(src_, b.span(attr), fmt::format("attribute '{}' is given twice", key));
    if (key == "serial" || key == "false" || key == "definition") {
      if (!value.empty())
        fail(src_, b.span(attr), fmt::format("attribute '{}' takes no value (write just '{}')", key, key));
    } else if (key == "rewrite") {
      if (std::find(std::begin(kRewriteValues), std::end(kRewriteValues), value) == std::end(kRewriteValues))
        fail(src_, b.span(attr),
             fmt::format("attribute 'rewrite' needs a direction: rewrite=ltr, rtl, both or none{}",
                         value.empty() ? "" : fmt::format(" (not '{}')", value)));
    } else if (key == "lowering") {
      if (std::find(std::begin(kLoweringValues), std::end(kLoweringValues), value) == std::end(kLoweringValues))
        fail(src_, b.span(attr),
             fmt::format("attribute 'lowering' needs a way: lowering=newton-euler, composite-body or gram{}",
                         value.empty() ? "" : fmt::format(" (not '{}')", value)));
    } else {
      fail(src_, b.span(key_node), fmt::format("unknown attribute '{}' (known: {})", key, kKnownAttributes));
    }
    id.attributes.emplace_back(key, value);
  }

  // A frame is held or grasped by one declaration.
  void first_declaration(const Hold& h, const Node& frame, const detail::Builder& b) const {
    for (const Hold& other : module_.holds)
      if (other.frame == h.frame)
        fail(src_, b.span(frame),
             fmt::format("frame '{}' is {} twice (first at {})", h.frame,
                         h.kind == "grasp" || other.kind == "grasp" ? "held or grasped" : "held",
                         location(other.where)));
  }

  void hold(const Node& decl, const detail::Builder& b) {
    Hold h;
    h.kind = decl.children.at(0)->string();
    const Node& frame = *decl.children.at(1);
    h.frame = frame.string();
    h.where = at(frame, b);
    first_declaration(h, frame, b);
    std::size_t i = 2;
    if (i < decl.children.size() && decl.children[i]->is_type<g::partner_name>()) {
      const Node& to = *decl.children[i++];
      h.to = to.string();
      if (h.kind == "contact")
        fail(src_, b.span(to),
             fmt::format("a contact is with the world; to join '{}' to '{}' write 'weld {} to {}: x, y, z'", h.frame,
                         h.to, h.frame, h.to));
      if (h.to == h.frame) fail(src_, b.span(to), fmt::format("frame '{}' cannot be welded to itself", h.frame));
    }
    for (; i < decl.children.size(); ++i) {
      const Node& d = *decl.children[i];
      if (h.kind == "contact")
        fail(src_, b.span(d),
             fmt::format("a contact holds its frame's translations x, y, z; for other directions write "
                         "'weld {}: {}'",
                         h.frame, d.string_view()));
      if (std::find(std::begin(kDirections), std::end(kDirections), d.string_view()) == std::end(kDirections))
        fail(src_, b.span(d), fmt::format("'{}' is not a direction (rx, ry, rz, x, y or z)", d.string_view()));
      if (std::find(h.directions.begin(), h.directions.end(), d.string_view()) != h.directions.end())
        fail(src_, b.span(d), fmt::format("direction '{}' is listed twice", d.string_view()));
      h.directions.push_back(d.string());
    }
    module_.holds.push_back(std::move(h));
  }

  // `grasp FRAME to OTHER: stiffness KT KR, damping DT DR;` (children: the two frames, the
  // four numbers).
  void grasp(const Node& decl, const detail::Builder& b) {
    Hold h;
    h.kind = "grasp";
    const Node& frame = *decl.children.at(0);
    const Node& to = *decl.children.at(1);
    h.frame = frame.string();
    h.to = to.string();
    h.where = at(frame, b);
    first_declaration(h, frame, b);
    if (h.to == h.frame) fail(src_, b.span(to), fmt::format("frame '{}' cannot grasp itself", h.frame));
    for (std::size_t i = 0; i < 4; ++i) {
      const Node& c = *decl.children.at(2 + i);
      h.spring[i] = std::strtod(c.string().c_str(), nullptr);  // inf past the range of a double
      if (!std::isfinite(h.spring[i]))
        fail(src_, b.span(c), fmt::format("'{}' is not a finite number", c.string_view()));
    }
    if (h.spring == std::array<double, 4>{})
      fail(src_, b.span(frame), "a grasp with no stiffness and no damping holds nothing");
    module_.holds.push_back(std::move(h));
  }

  void kernel(const Node& decl, const detail::Builder& b) {
    Kernel k;
    const Node& name = *decl.children.at(0);
    refuse_duplicate(module_.kernels, name, b, "kernel");
    k.name = name.string();
    k.where = at(name, b);
    for (std::size_t i = 1; i + 1 < decl.children.size(); ++i) {
      const Node& input = *decl.children[i];
      if (std::find(k.inputs.begin(), k.inputs.end(), input.string_view()) != k.inputs.end())
        fail(src_, b.span(input), fmt::format("input '{}' is listed twice", input.string_view()));
      k.inputs.push_back(input.string());
    }
    const Node& body = *decl.children.back();
    if (body.is_type<grammar::derivative>()) {
      for (std::size_t i = 1; i < body.children.size(); ++i) {
        const Node& w = *body.children[i];
        if (std::find(k.inputs.begin(), k.inputs.end(), w.string_view()) == k.inputs.end())
          fail(src_, b.span(w),
               fmt::format("the derivative is taken with respect to '{}', which is not among the "
                           "kernel's inputs",
                           w.string_view()));
        if (std::find(k.wrt.begin(), k.wrt.end(), w.string_view()) != k.wrt.end())
          fail(src_, b.span(w), fmt::format("'{}' is listed twice", w.string_view()));
        k.wrt.push_back(w.string());
      }
      k.body = b.expression(*body.children.front());
    } else {
      k.body = b.expression(body);
    }
    detail::check_shape(src_, k.body);
    module_.kernels.push_back(std::move(k));
  }
};

}  // namespace

Module parse_module(std::shared_ptr<const Source> src) {
  SOA_ASSERT(src != nullptr, "parse_module without a source");
  detail::check_size(*src);
  return ModuleBuilder(std::move(src)).run();
}

Module load_module(const std::string& path) {
  auto source = std::make_shared<Source>();
  source->name = path;
  // errno is the only way to learn why a file could not be read; it is read at once.
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw UserError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  char buffer[1 << 16];
  for (;;) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    source->text.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get())) throw UserError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  return parse_module(std::move(source));
}

ir::Algebra algebra_of(const Module& module, const ir::Algebra* base) {
  ir::Algebra a;
  for (const Identity& id : module.identities) {
    const ir::Cited cited{id.name, id.citation};
    if (id.has("definition")) a.definitions.add(id.sides[0], id.sides[1], cited);
    if (id.has("lowering")) a.lowerings.emplace(id.attribute("lowering", ""), ir::LoweringWay{cited, id.sides});
  }
  if (base) {
    a.definitions.fill_from(base->definitions);
    for (const auto& [way, entry] : base->lowerings) a.lowerings.emplace(way, entry);  // keeps the module's own
  }
  if (const auto missing = a.definitions.missing(); !missing.empty()) {
    std::string names;
    for (ir::Sym s : missing) names += fmt::format("{}{}", names.empty() ? "" : ", ", ir::name_of(s));
    throw UserError(
        fmt::format("{}: the library defines no {} (an identity marked [definition] whose first side is "
                    "the symbol): the compiler cannot evaluate or lower it",
                    module.source ? module.source->name : std::string("library"), names));
  }
  return a;
}

}  // namespace soa::syntax
