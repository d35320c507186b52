#include "emit-cpp/emit_cpp.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string_view>
#include <utility>

#include "support/error.hpp"
#include "support/sincos.hpp"

namespace soa::emit {

using specialise::ScalarNode;
using specialise::ScalarOp;
using specialise::ScalarProgram;

const char* soac_version() { return SOA_VERSION; }

Toolchain build_toolchain() { return {SOA_CXX, SOA_EIGEN_INCLUDE}; }

namespace {

// C (C23) and C++ (C++20) keywords and C++'s alternative tokens: a name in generated code
// may be none of them.
constexpr std::string_view kKeywords[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "restrict", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast",
    "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
    "typename", "typeof", "typeof_unqual", "union", "unsigned", "using", "virtual", "void", "volatile",
    "wchar_t", "while", "xor", "xor_eq"};

bool is_c_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string name_problem(std::string_view name, bool prefix) {
  if (!is_c_identifier(name)) return "is not a C identifier (letters, digits and '_', not starting with a digit)";
  if (std::find(std::begin(kKeywords), std::end(kKeywords), name) != std::end(kKeywords))
    return "is a C or C++ keyword";
  if (name == "main") return "is reserved: 'main' is the program's entry point";
  if (name.find("__") != std::string_view::npos) return "is reserved: C and C++ reserve names with a double underscore";
  if (name.front() == '_')
    return "is reserved: the extern \"C\" symbols <prefix>_<kernel> would begin with '_' or hold '__'";
  if (prefix && name.back() == '_') return "would make the extern \"C\" symbols <prefix>_<kernel> hold '__'";
  if (prefix && (name == "std" || name == "Eigen" || name == "soa_gen"))
    return "would hide the namespace of that name from the generated code";
  return {};
}

void check_name(std::string_view name, std::string_view what, bool prefix) {
  if (std::string problem = name_problem(name, prefix); !problem.empty())
    throw UserError(fmt::format("{} '{}' {}", what, comment_safe(name), problem));
}

std::string identifier(std::string_view text) {
  std::string id;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) id += c;
    else if (!id.empty() && id.back() != '_') id += '_';
  }
  while (!id.empty() && id.back() == '_') id.pop_back();
  if (id.empty() || !name_problem(id, true).empty()) id = "robot_" + id;
  while (!id.empty() && id.back() == '_') id.pop_back();  // "" -> "robot"
  return id;
}

std::string comment_safe(std::string_view text) {
  std::string out;
  const auto escape = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      const bool trigraph = c == '?' && i + 1 < text.size() && text[i + 1] == '?';
      const bool closes = c == '*' && i + 1 < text.size() && text[i + 1] == '/';
      if (c < 0x20 || c == 0x7f || c == '\\') {
        escape(i, 1);
      } else if (trigraph || closes) {  // keep the first character, escape the second
        out += static_cast<char>(c);
        escape(i + 1, 1);
        ++i;
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: kept when well formed (shortest form, no surrogates) and visible.
    const int length = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
    char32_t cp = length == 2 ? c & 0x1f : length == 3 ? c & 0x0f : c & 0x07;
    bool ok = length > 0 && i + length <= text.size();
    for (int j = 1; ok && j < length; ++j) {
      const auto d = static_cast<unsigned char>(text[i + j]);
      ok = (d & 0xc0) == 0x80;
      cp = (cp << 6) | (d & 0x3f);
    }
    ok = ok && !(length == 3 && cp < 0x800) && !(length == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
         !(cp >= 0xd800 && cp <= 0xdfff);
    // C1 controls (NEL ends a line for some tools), invisible and bidi formatting characters,
    // line and paragraph separators, the byte-order mark.
    const bool invisible = cp < 0xa0 || cp == 0xad || (cp >= 0x200b && cp <= 0x200f) ||
                           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x206f) || cp == 0xfeff;
    if (ok && !invisible) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      escape(i, ok ? length : 1);
      i += ok ? length : 1;
    }
  }
  return out;
}

namespace {

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Literals print to round-trip exactly (fmt's shortest representation) and always as a
// double; negative ones parenthesised so that `a - (-1.5)` and `a * (-2.0)` read right.
std::string literal(double x) {
  SOA_ASSERT(std::isfinite(x), "emit-cpp: a non-finite constant");
  std::string s = fmt::format("{}", x);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return x < 0 ? "(" + s + ")" : s;
}

// Every comment of the generated files is made here: `lead` (indentation and "//") and
// the text, comment_safe(). comment_lines() for text with intended line breaks (a
// derivation): one comment line per line.
std::string comment(std::string_view lead, std::string_view text) {
  return std::string(lead) + comment_safe(text) + "\n";
}

std::string comment_lines(std::string_view lead, std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    out += comment(lead, text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return out;
}

std::string number(double x) { return fmt::format("{}", x); }

std::string gravity_text(const Target& t) {
  return fmt::format("({}, {}, {}) m/s^2 in world axes", number(t.gravity[0]), number(t.gravity[1]),
                     number(t.gravity[2]));
}

std::string banner(const std::string& file, const std::vector<Kernel>& kernels, const Target& t) {
  std::string b = comment("// ", fmt::format("{} -- generated by soac {}. Do not edit: regenerate it.", file, soac_version()));
  b += "//\n";
  b += comment("// ", fmt::format("Robot {}: {}", t.robot_name.empty() ? t.robot : t.robot_name, t.robot_summary));
  b += comment("//   ", fmt::format("from {} ({})", t.robot_source, t.robot_hash));
  b += comment("//   ", fmt::format("gravity {}", gravity_text(t)));
  b += comment("//   ", fmt::format("code in namespace soa_gen::{0}, extern \"C\" symbols {0}_<kernel>", t.robot));
  b += comment("//\n// Kernels", t.kernel_source.empty() ? ":" : fmt::format(" (from {}):", t.kernel_source));
  for (const Kernel& k : kernels) {
    b += comment("//   ", fmt::format("{} = {}", k.name, k.expression));
    b += comment_lines("//     ", k.derivation);
    b += comment("//     ", specialise::to_string(specialise::count_ops(k.code)));
  }
  return b;
}

// The conventions a caller needs, once, in the header (see emit_cpp.hpp).
std::string conventions(const std::vector<Kernel>& kernels, const Target& t) {
  std::string c = "//\n// Conventions\n";
  if (!t.joints.empty()) {
    c += "//   Joint space (q; qd, qdd, T, tau and the rows and columns of calM), depth-first from the base:\n";
    for (const JointInfo& j : t.joints) {
      const int nq = nq_of(j.kind), nv = nv_of(j.kind);
      const auto range = [](const char* v, int first, int n) {
        return n == 1 ? fmt::format("{}[{}]", v, first) : fmt::format("{}[{}..{}]", v, first, first + n - 1);
      };
      c += comment("//     ", fmt::format("{:<10} {:<10} {} ({}, link {})", range("q", j.q, nq), range("qd", j.v, nv),
                                            j.name, to_string(j.kind), j.link));
      if (j.kind == JointKind::Free)
        c += "//       free-flyer: q = [x y z qx qy qz qw], the root frame's origin in the world and its orientation\n"
             "//       (unit quaternion); qd = [omega; v] in the root body's axes (v: its origin's velocity); qdd the\n"
             "//       derivative of that body-frame velocity\n";
      if (j.kind == JointKind::Ball)
        c += "//       ball: q = [qx qy qz qw] (unit quaternion); qd the relative angular velocity in the child's axes\n";
    }
  }
  c += "//   Spatial vectors are [angular; linear]: [omega; v] and [moment; force], about the frame's origin.\n";
  if (!t.tip_frames.empty()) {
    c += "//   Tips (f0; the rows of J, the rows and columns of Lambda), 6 each in this order, each\n"
         "//   [angular; linear] at the tip frame's origin in the tip frame's own axes (J qd = the tip's\n"
         "//   spatial velocity so expressed; f0 the force the tip exerts, likewise):\n";
    for (std::size_t i = 0; i < t.tip_frames.size(); ++i)
      c += comment("//     ", fmt::format("{:<10} {} (on body {})", fmt::format("[{}..{}]", 6 * i, 6 * i + 5),
                                            t.tip_frames[i], t.tip_bodies[i]));
  }
  const auto per_body = [](const std::optional<exec::Space>& s) { return s == exec::Space::Spatial; };
  const bool bodies = std::any_of(kernels.begin(), kernels.end(), [&](const Kernel& k) {
    return per_body(k.row_space) || per_body(k.col_space) ||
           std::any_of(k.inputs.begin(), k.inputs.end(), [&](const Port& p) { return per_body(p.space); });
  });
  if (bodies && !t.bodies.empty()) {
    c += "//   Bodies (per-body ports: 6 each, in body axes), children before parents:\n";
    for (std::size_t k = 0; k < t.bodies.size(); ++k)
      c += comment("//     ", fmt::format("{:<10} {}", fmt::format("[{}..{}]", 6 * k, 6 * k + 5), t.bodies[k]));
  }
  c += comment("//   ", fmt::format("Gravity {}, folded into the code: C, tau and qdd include it.", gravity_text(t)));
  c += "//   Matrices are column-major.\n";
  return c;
}

// What a port's entries index, for the per-kernel line of the header (the conventions
// block explains each).
std::string space_text(const std::optional<exec::Space>& s) {
  if (!s) return "";
  switch (*s) {
    case exec::Space::Config: return "configuration order";
    case exec::Space::Joint: return "joint-space order";
    case exec::Space::Spatial: return "6 per body";
    case exec::Space::Tip: return "6 per tip, each in its own frame";
  }
  return "";
}

// "q: configuration order; qd, qdd, tau: joint-space order": ports and output, those
// indexed alike named together.
std::string spaces_comment(const Kernel& k) {
  std::vector<std::pair<std::string, std::string>> items;  // (description, names)
  const auto add = [&](const std::string& name, const std::string& what) {
    if (what.empty()) return;
    if (!items.empty() && items.back().first == what) items.back().second += ", " + name;
    else items.emplace_back(what, name);
  };
  for (const Port& p : k.inputs) add(p.name, space_text(p.space));
  if (k.cols == 1 || !k.col_space || k.col_space == k.row_space)
    add(k.output, k.cols == 1 || !k.col_space || !k.row_space ? space_text(k.row_space)
                                                               : "rows and columns " + space_text(k.row_space));
  else if (k.row_space)
    add(k.output, fmt::format("rows {}, columns {}", space_text(k.row_space), space_text(k.col_space)));
  std::string s;
  for (const auto& [what, names] : items) s += fmt::format("{}{}: {}", s.empty() ? "" : "; ", names, what);
  return s;
}

std::string params(const Kernel& k) {
  std::string s;
  for (const Port& p : k.inputs) s += fmt::format("const double* {}, ", p.name);
  return s + "double* " + k.output;
}

std::string layout_comment(const Kernel& k) {
  std::string in;
  int total = 0;
  for (const Port& p : k.inputs) {
    in += fmt::format("{}{} ({})", in.empty() ? "" : ", ", p.name, p.size);
    total += p.size;
  }
  const std::string shape = k.cols == 1 ? fmt::format("{}", k.rows) : fmt::format("{} x {}, column-major", k.rows, k.cols);
  return fmt::format("in = [{}] ({} doubles); out = {} ({})", in, total, k.output, shape);
}

std::string eigen_type(int rows, int cols) { return fmt::format("Eigen::Matrix<double, {}, {}>", rows, cols); }

// soa::sincos (support/sincos.hpp) as the generated source's own function: its body with
// the same names, operations and order; the constants printed exactly (hex for the parts
// of pi/2, whose trailing zero bits matter; shortest round-trip decimal for the
// polynomials, which then read as in fdlibm).
std::string sincos_function() {
  namespace c = sincos_constants;
  const auto hex = [](double x) { return fmt::format("{:a}", x); };
  const auto dec = [](double x) { return fmt::format("{}", x); };
  return fmt::format(
      R"(
// soa_sincos(x) = {{sin x, cos x}}, inline: the sine and cosine of each joint angle, one
// argument reduction for both. libm's would cost 150 to 200 instructions a joint and
// spill every live register around the calls. This is soac's soa::sincos (its header,
// runtime/support/sincos.hpp, documents the algorithm and its error bound) operation for
// operation: compiled without FMA contraction (-O2 without -march on x86-64) the kernels
// compute soac's values bit for bit. Within 1 ulp for |x| < 2^20; beyond, and for inf and
// nan, libm's sin and cos.
struct soa_sincos_pair {{
  double s, c;
}};

// Beyond the fast path (|x| >= 2^20, inf, nan): libm, out of line and cold.
[[gnu::cold, gnu::noinline]] static soa_sincos_pair soa_sincos_libm(double x) {{
  return {{std::sin(x), std::cos(x)}};
}}

// Always inlined: called from a kernel thousands of lines long, g++ would otherwise split
// off the fast path as a function of its own and pay a call, with its spills, per joint.
[[gnu::always_inline]] static inline soa_sincos_pair soa_sincos(double x) {{
  // pi/2 = pio2_1 + ... + pio2_4; k * pio2_1..3 are exact for |k| < 2^20 (Cody & Waite)
  constexpr double fast_bound = {fast_bound}, two_over_pi = {two_over_pi}, round_shift = {round_shift};
  constexpr double pio2_1 = {p1}, pio2_2 = {p2};
  constexpr double pio2_3 = {p3}, pio2_4 = {p4};
  // fdlibm's minimax polynomials on [-pi/4, pi/4]: sin r = r + S1 r^3 + ... + S6 r^13,
  // cos r = 1 - r^2/2 + C1 r^4 + ... + C6 r^14
  constexpr double S1 = {S1}, S2 = {S2}, S3 = {S3};
  constexpr double S4 = {S4}, S5 = {S5}, S6 = {S6};
  constexpr double C1 = {C1}, C2 = {C2}, C3 = {C3};
  constexpr double C4 = {C4}, C5 = {C5}, C6 = {C6};
  if (!(std::fabs(x) < fast_bound)) return soa_sincos_libm(x);
  // x - k pi/2 = r - e: Cody-Waite, the subtractions' error terms kept exactly
  const double k = (x * two_over_pi + round_shift) - round_shift;
  const double a = x - k * pio2_1;
  const double b = k * pio2_2, s1 = a - b, e1 = (s1 - a) + b;
  const double c = k * pio2_3, r = s1 - c, e2 = (r - s1) + c;
  const double e = (e1 + e2) + k * pio2_4;
  // sin and cos of r - e
  const double z = r * r, w = z * z, v = z * r, hz = 0.5 * z, h = 1.0 - hz;
  const double ps = ((S2 + z * S3) + w * (S4 + z * S5)) + (w * w) * S6;
  const double sin_r = r - (((e - hz * e) - (z * v) * ps) - v * S1);
  const double pc = ((C1 + z * C2) + w * (C3 + z * C4)) + (w * w) * (C5 + z * C6);
  const double cos_r = h + (((1.0 - h) - hz) + (w * pc + r * e));
  // the quadrant, k mod 4
  const unsigned n = static_cast<unsigned>(static_cast<int>(k)) & 3u;
  const double s = n & 1u ? cos_r : sin_r, co = n & 1u ? sin_r : cos_r;
  return {{n & 2u ? -s : s, (n + 1u) & 2u ? -co : co}};
}}
)",
      fmt::arg("fast_bound", hex(c::fast_bound)), fmt::arg("two_over_pi", hex(c::two_over_pi)),
      fmt::arg("round_shift", hex(c::round_shift)), fmt::arg("p1", hex(c::pio2_1)), fmt::arg("p2", hex(c::pio2_2)),
      fmt::arg("p3", hex(c::pio2_3)), fmt::arg("p4", hex(c::pio2_4)), fmt::arg("S1", dec(c::S1)),
      fmt::arg("S2", dec(c::S2)), fmt::arg("S3", dec(c::S3)), fmt::arg("S4", dec(c::S4)), fmt::arg("S5", dec(c::S5)),
      fmt::arg("S6", dec(c::S6)), fmt::arg("C1", dec(c::C1)), fmt::arg("C2", dec(c::C2)), fmt::arg("C3", dec(c::C3)),
      fmt::arg("C4", dec(c::C4)), fmt::arg("C5", dec(c::C5)), fmt::arg("C6", dec(c::C6)));
}

bool uses_sincos(const std::vector<Kernel>& kernels) {
  return std::any_of(kernels.begin(), kernels.end(), [](const Kernel& k) {
    const specialise::OpCounts c = specialise::count_ops(k.code);
    return c.sin + c.cos > 0;
  });
}

// The body of one kernel function.
std::string function_body(const Kernel& k) {
  const ScalarProgram& p = k.code;
  std::vector<std::string> name(p.nodes.size());
  // Per node: the soa_sincos pair of its value ("sc3"). Inputs' (the joint angles') are made
  // first, in input order, all together: they depend on nothing, so their latencies
  // overlap; those of computed values at their first Sin or Cos.
  std::vector<std::string> pair(p.nodes.size());
  int pairs = 0;
  std::vector<char> used_port(k.inputs.size(), 0);
  auto port_of = [&](int index, std::size_t& port) {
    for (port = 0; port < k.inputs.size(); index -= k.inputs[port].size, ++port)
      if (index < k.inputs[port].size) return index;
    throw InternalError("emit-cpp: an input outside the kernel's layout");
  };
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    if (n.op != ScalarOp::Input) continue;
    std::size_t port = 0;
    const int offset = port_of(n.a, port);
    used_port[port] = 1;
    name[i] = fmt::format("{}[{}]", k.inputs[port].name, offset);
  }
  const std::vector<int> angles = specialise::trig_inputs(p, 0, static_cast<int>(p.nodes.size()));
  std::string body;
  if (!angles.empty()) body += "\n  // sin and cos of the joint angles, all at once: independent, they overlap\n";
  for (int x : angles) {
    pair[x] = fmt::format("sc{}", pairs++);
    body += fmt::format("  const soa_sincos_pair {} = soa_sincos({});\n", pair[x], name[x]);
  }
  int vars = 0, label = -2;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const ScalarNode& n = p.nodes[i];
    if (n.op == ScalarOp::Input) continue;
    if (n.op == ScalarOp::Const) {
      name[i] = literal(n.value);
      continue;
    }
    if (n.label != label) {
      label = n.label;
      if (label >= 0) body += '\n' + comment("  // ", p.labels[label]);
    }
    if (vars == 0 && !angles.empty() && label < 0) body += "\n";  // no comment to set the pairs apart
    name[i] = fmt::format("v{}", vars++);
    const std::string& a = name[n.a];
    std::string rhs;
    switch (n.op) {
      case ScalarOp::Add: rhs = fmt::format("{} + {}", a, name[n.b]); break;
      case ScalarOp::Sub: rhs = fmt::format("{} - {}", a, name[n.b]); break;
      case ScalarOp::Mul: rhs = fmt::format("{} * {}", a, name[n.b]); break;
      case ScalarOp::Div: rhs = fmt::format("{} / {}", a, name[n.b]); break;
      case ScalarOp::Neg: rhs = fmt::format("-{}", a); break;
      case ScalarOp::Sqrt: rhs = fmt::format("std::sqrt({})", a); break;
      case ScalarOp::Sin:
      case ScalarOp::Cos:
        if (pair[n.a].empty()) {
          pair[n.a] = fmt::format("sc{}", pairs++);
          body += fmt::format("  const soa_sincos_pair {} = soa_sincos({});\n", pair[n.a], a);
        }
        rhs = pair[n.a] + (n.op == ScalarOp::Sin ? ".s" : ".c");
        break;
      default: throw InternalError("emit-cpp: unknown operation");
    }
    body += fmt::format("  const double {} = {};\n", name[i], rhs);
  }
  body += "\n  // output\n";
  for (std::size_t i = 0; i < p.outputs.size(); ++i) body += fmt::format("  {}[{}] = {};\n", k.output, i, name[p.outputs[i]]);
  std::string unused;
  for (std::size_t i = 0; i < k.inputs.size(); ++i)
    if (!used_port[i]) unused += fmt::format("  (void){};\n", k.inputs[i].name);
  return unused + body;
}

}  // namespace

Kernel make_kernel(std::string name, std::string expression, std::string derivation, std::string meaning,
                   const exec::SweepProgram& program, const exec::Layout& layout, ScalarProgram code) {
  Kernel k;
  k.name = std::move(name);
  k.expression = std::move(expression);
  k.derivation = std::move(derivation);
  k.meaning = std::move(meaning);
  for (std::size_t i = 0; i < program.inputs.size(); ++i)
    k.inputs.push_back({program.vars[program.inputs[i]].name, layout.inputs[i].size, program.vars[program.inputs[i]].space});
  k.output = program.output.name;
  k.row_space = program.output.rows;
  k.col_space = program.output.cols;
  k.rows = layout.rows;
  k.cols = layout.cols;
  k.code = std::move(code);
  SOA_ASSERT(k.code.input_count == layout.input_size && static_cast<int>(k.code.outputs.size()) == layout.output_size(),
             "emit-cpp: code and layout disagree");
  return k;
}

std::string robot_fingerprint(const Robot& robot) {
  if (std::ifstream f{robot.source, std::ios::binary}) {
    const std::string bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    return fmt::format("file fnv1a64:{:016x}", fnv1a(bytes));
  }
  std::string text = robot.name;
  for (const Body& b : robot.bodies) {
    text += fmt::format("|{} {} {} {}", b.name, b.parent, static_cast<int>(b.joint), b.mass);
    for (int i = 0; i < 3; ++i) {
      text += fmt::format(" {} {} {}", b.axis[i], b.origin_p[i], b.com[i]);
      for (int j = 0; j < 3; ++j) text += fmt::format(" {} {}", b.origin_R(i, j), b.inertia(i, j));
    }
  }
  return fmt::format("model fnv1a64:{:016x}", fnv1a(text));
}

Target make_target(const Robot& robot, const std::vector<int>& tip_frames, std::string name) {
  Target t;
  t.robot = name.empty() ? identifier(robot.name) : name;
  check_name(t.robot, "emit-cpp: name", true);
  t.robot_name = robot.name;
  t.robot_source = robot.source;
  t.robot_hash = robot_fingerprint(robot);
  t.nq = robot.nq;
  t.nv = robot.nv;
  t.tips = static_cast<int>(tip_frames.size());
  std::string tips;
  for (int f : tip_frames) {
    tips += (tips.empty() ? "" : ", ") + robot.frames[f].name;
    t.tip_frames.push_back(robot.frames[f].name);
    t.tip_bodies.push_back(robot.bodies[robot.frames[f].body].name);
  }
  t.robot_summary = fmt::format("{} bodies, nq {}, N {}, tips: {}", robot.size(), robot.nq, robot.nv,
                                tips.empty() ? "none" : tips);
  t.file_stem = name.empty() ? t.robot + "_kernels" : std::move(name);
  t.gravity = {robot.gravity.x(), robot.gravity.y(), robot.gravity.z()};
  for (const Body& b : robot.bodies) t.bodies.push_back(b.name);
  // Joint-space order: by velocity offset.
  std::vector<const Body*> order;
  for (const Body& b : robot.bodies) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const Body* a, const Body* b) { return a->v_offset < b->v_offset; });
  for (const Body* b : order) t.joints.push_back({b->joint_name, b->name, b->joint, b->q_offset, b->v_offset});
  return t;
}

Emitted emit_cpp(const std::vector<Kernel>& kernels, const Target& t) {
  check_name(t.robot, "emit-cpp: name", true);
  const bool stem_ok = !t.file_stem.empty() && t.file_stem.front() != '.' &&
                       std::all_of(t.file_stem.begin(), t.file_stem.end(), [](char c) {
                         return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '_' || c == '-' || c == '.';
                       });
  if (!stem_ok)
    throw UserError(fmt::format("emit-cpp: file stem '{}' is not a plain file name (letters, digits, '_', '-', '.')",
                                comment_safe(t.file_stem)));
  static constexpr std::array<std::string_view, 6> reserved = {"nq", "nv", "tips", "soa_sincos", "soa_sincos_pair",
                                                              "soa_sincos_libm"};
  for (const Kernel& k : kernels) {
    check_name(k.name, "emit-cpp: kernel name");
    for (const Port& p : k.inputs) check_name(p.name, fmt::format("emit-cpp: kernel '{}': input", k.name));
    check_name(k.output, fmt::format("emit-cpp: kernel '{}': output", k.name));
    if (std::find(reserved.begin(), reserved.end(), k.name) != reserved.end())
      throw UserError(fmt::format("emit-cpp: kernel name '{}' is taken: the generated code defines '{}' in namespace "
                                  "soa_gen::{} (reserved: {})",
                                  k.name, k.name, t.robot, fmt::join(reserved, ", ")));
  }
  Emitted e;
  e.header_name = t.file_stem + ".hpp";
  e.source_name = t.file_stem + ".cpp";
  const std::string ns = "soa_gen::" + t.robot;

  std::string& h = e.header;
  h = banner(e.header_name, kernels, t);
  h += conventions(kernels, t);
  h += "#pragma once\n\n#ifndef SOA_GEN_NO_EIGEN\n#include <Eigen/Core>\n#endif\n\n";
  h += fmt::format("namespace {} {{\n\ninline constexpr int nq = {};\ninline constexpr int nv = {};\n"
                   "inline constexpr int tips = {};\n",
                   ns, t.nq, t.nv, t.tips);
  for (const Kernel& k : kernels) {
    h += '\n' + comment("// ", fmt::format("{}: {}", k.name, k.expression)) + comment("//   ", k.meaning) +
         comment("//   ", layout_comment(k));
    if (const std::string spaces = spaces_comment(k); !spaces.empty()) h += comment("//   ", spaces);
    h += fmt::format("void {}({});\n", k.name, params(k));
  }
  h += "\n#ifndef SOA_GEN_NO_EIGEN\n";
  for (const Kernel& k : kernels) {
    std::string args, call;
    for (const Port& p : k.inputs) {
      args += fmt::format("{}const {}& {}", args.empty() ? "" : ", ", eigen_type(p.size, 1), p.name);
      call += p.name + ".data(), ";
    }
    h += fmt::format("inline {} {}({}) {{\n  {} out;\n  {}({}out.data());\n  return out;\n}}\n", eigen_type(k.rows, k.cols),
                     k.name, args, eigen_type(k.rows, k.cols), k.name, call);
  }
  h += fmt::format("#endif\n\n}}  // namespace {}\n\nextern \"C\" {{\n", ns);
  for (const Kernel& k : kernels)
    h += comment("// ", layout_comment(k)) + fmt::format("void {}_{}(const double* in, double* out);\n", t.robot, k.name);
  h += "}\n";

  std::string& s = e.source;
  s = banner(e.source_name, kernels, t);
  s += fmt::format("#include \"{}\"\n\n#include <cmath>\n\nnamespace {} {{\n", e.header_name, ns);
  if (uses_sincos(kernels)) s += sincos_function();
  for (const Kernel& k : kernels)
    s += '\n' + comment("// ", k.expression) + fmt::format("void {}({}) {{\n{}}}\n", k.name, params(k), function_body(k));
  s += fmt::format("\n}}  // namespace {}\n", ns);
  for (const Kernel& k : kernels) {
    std::string call;
    int offset = 0;
    for (const Port& p : k.inputs) {
      call += offset == 0 ? "in, " : fmt::format("in + {}, ", offset);
      offset += p.size;
    }
    s += fmt::format("\nextern \"C\" void {}_{}(const double* in, double* out) {{ {}::{}({}out); }}\n", t.robot, k.name,
                     ns, k.name, call);
  }
  return e;
}

}  // namespace soa::emit
