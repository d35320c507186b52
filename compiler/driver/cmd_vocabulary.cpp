// soac vocabulary: the operator language's names, printed from the typed table
// (ir::vocabulary()) so that the listing cannot drift from what the parser, the shape
// checker and the lowering use. `--format markdown` prints the table that
// grammar/README.md carries between its vocabulary markers (a test keeps the two equal).
#include <fmt/format.h>

#include <memory>
#include <string>

#include "algebra/vocabulary.hpp"
#include "driver/driver.hpp"

namespace soa::driver {
namespace {

// How an operator of each structure becomes code (docs/mathematics.md section 5). No
// default case: a new Structure must say how it is swept.
std::string_view sweep_kind(ir::Structure s) {
  switch (s) {
    case ir::Structure::Memoryless: return "memoryless: a per-body map, fused into any sweep";
    case ir::Structure::Causal: return "causal: an inward (tip-to-base) sweep";
    case ir::Structure::StrictlyCausal: return "strictly causal: inward (tip-to-base), zero diagonal";
    case ir::Structure::Full: return "full: inward and outward sweeps";
    case ir::Structure::PickOff: return "pick-off: reads or writes the tip frames";
    case ir::Structure::Vector: return "vector: an input, or computed from the state";
  }
  return "?";
}

std::string shape(const ir::SymbolInfo& s) {
  return fmt::format("{} x {}", ir::to_string(s.rows), ir::to_string(s.cols));
}

std::string_view spelling(const ir::SymbolInfo& s) { return s.unicode.empty() ? s.name : s.unicode; }

// Markdown would read * and _ in the meanings as emphasis, | as a cell break.
std::string markdown_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '_' || c == '|' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void print_text() {
  fmt::print("{:<9} {:<8} {:<8} {:<53} {:<14} {:<9} {}\n", "name", "unicode", "shape", "structure (sweep kind)", "role",
             "symmetric", "meaning");
  for (const ir::SymbolInfo& s : ir::vocabulary()) {
    // fmt pads by code points; the Unicode spellings carry combining marks (φ̃, q̇) that
    // occupy no column, so pad by hand.
    const std::string_view u = spelling(s);
    int width = 0;
    for (std::size_t i = 0; i < u.size(); ++i) {
      const auto c = static_cast<unsigned char>(u[i]);
      const bool combining = c == 0xCC && i + 1 < u.size() && static_cast<unsigned char>(u[i + 1]) >= 0x80 &&
                             static_cast<unsigned char>(u[i + 1]) <= 0xBF;  // U+0300..U+033F
      if ((c & 0xC0) != 0x80 && !combining) ++width;
    }
    fmt::print("{:<9} {}{} {:<8} {:<53} {:<14} {:<9} {}\n", s.name, u, std::string(width < 8 ? 8 - width : 0, ' '),
               shape(s), sweep_kind(s.structure), ir::to_string(s.role), s.symmetric ? "yes" : "no", s.meaning);
  }
  fmt::print(
      "\nplus I and 0, of whatever size their context gives them; N = joint space, 6n = one 6-vector per\n"
      "body, 6m = one per tip. Arm i's quantities are written with a digit (J1, psi2): grammar/README.md.\n"
      "mathematics: docs/mathematics.md\n");
}

void print_markdown() {
  fmt::print("| name | Unicode | shape | structure (sweep kind) | role | symmetric | meaning |\n");
  fmt::print("|---|---|---|---|---|---|---|\n");
  for (const ir::SymbolInfo& s : ir::vocabulary())
    fmt::print("| `{}` | {} | {} | {} | {} | {} | {} |\n", s.name, spelling(s), shape(s), sweep_kind(s.structure),
               ir::to_string(s.role), s.symmetric ? "yes" : "no", markdown_escape(s.meaning));
}

}  // namespace

void add_vocabulary(CLI::App& app, Runner& run) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = app.add_subcommand("vocabulary", "list the operator language's names: meaning, shape, structure");
  cmd->add_option("--format", *format, "text or markdown (the table in grammar/README.md)")
      ->check(CLI::IsMember({"text", "markdown"}));
  cmd->callback([format, &run] {
    run = [format] {
      if (*format == "markdown")
        print_markdown();
      else
        print_text();
      return kOk;
    };
  });
}

}  // namespace soa::driver
