// The documentation is part of the contract: every citation resolves in
// docs/bibliography.md, every identity and every vocabulary name is explained in
// docs/mathematics.md, grammar/README.md's vocabulary table is what `soac vocabulary`
// prints, and every name the LaTeX printer can produce compiles with pdflatex.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <unistd.h>

#include "algebra/print.hpp"
#include "algebra/vocabulary.hpp"
#include "support/test_support.hpp"
#include "syntax/syntax.hpp"

namespace {

using namespace soa;
namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "### KEY" headings of docs/bibliography.md.
std::set<std::string> bibliography_keys() {
  const std::string text = read(test::source_path("docs/bibliography.md"));
  std::set<std::string> keys;
  const std::regex heading(R"(^### (\S+)\s*$)", std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), heading); it != std::sregex_iterator(); ++it)
    keys.insert((*it)[1]);
  return keys;
}

// "## N. Title" sections of docs/mathematics.md: what `reference N` points at.
std::set<std::string> mathematics_sections() {
  const std::string text = read(test::source_path("docs/mathematics.md"));
  std::set<std::string> sections;
  const std::regex heading(R"(^## (\d+)\. )", std::regex::multiline);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), heading); it != std::sregex_iterator(); ++it)
    sections.insert((*it)[1]);
  return sections;
}

// The problems of one citation, empty when it resolves. A citation is a comma list of
// pieces; each is `KEY PLACE` (KEY defined in the bibliography; for `reference`, PLACE is
// a section of mathematics.md), or continues the previous piece with a bare number
// (`003 eqs. A.18, A.28`) or a lowercase qualifier (`000 Lemma 5.1, adjoint`); the first
// piece names a key.
std::string citation_problems(const std::string& citation, const std::set<std::string>& keys,
                              const std::set<std::string>& sections) {
  static const std::regex keyed(R"(^(\S+) (.+)$)");
  static const std::regex continuation(R"(^([A-Z]\.?)?\d+(\.\d+)*$|^[a-z]+$)");
  std::string problems;
  std::size_t start = 0;
  for (int piece_index = 0; start <= citation.size(); ++piece_index) {
    std::size_t comma = citation.find(", ", start);
    if (comma == std::string::npos) comma = citation.size();
    const std::string piece = citation.substr(start, comma - start);
    start = comma + 2;
    std::smatch m;
    if (piece_index > 0 && std::regex_match(piece, continuation)) continue;
    if (!std::regex_match(piece, m, keyed) || !keys.count(m[1])) {
      problems += "'" + piece + "' names no key of docs/bibliography.md; ";
      continue;
    }
    if (m[1] == "reference") {
      const std::string section = m[2].str().substr(0, m[2].str().find_first_of(" :"));
      if (!sections.count(section)) problems += "'" + piece + "': docs/mathematics.md has no section " + section + "; ";
    }
  }
  return problems;
}

std::string run(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  INFO(command);
  REQUIRE(status == 0);
  return out;
}

bool mentions(const std::string& text, const std::string& name) {
  return text.find("`" + name + "`") != std::string::npos;
}

}  // namespace

TEST_CASE("the citation checker accepts paper keys and continuations and rejects the rest", "[docs]") {
  const std::set<std::string> keys{"000", "001", "reference"};
  const std::set<std::string> sections{"3", "4"};
  CHECK(citation_problems("001 Identity 6, 000 Lemma 5.1", keys, sections).empty());
  CHECK(citation_problems("000 eqs. A.18, A.28", keys, sections).empty());
  CHECK(citation_problems("reference 3", keys, sections).empty());
  CHECK(citation_problems("reference 4: (AB)* = B* A*", keys, sections).empty());
  CHECK_FALSE(citation_problems("005 Lemma 1", keys, sections).empty());
  CHECK_FALSE(citation_problems("reference 9", keys, sections).empty());
  CHECK(citation_problems("000 Lemma 5.1, adjoint", keys, sections).empty());
  CHECK_FALSE(citation_problems("001 Identity 6, ref 3", keys, sections).empty());
  CHECK_FALSE(citation_problems("adjoint", keys, sections).empty());
  CHECK_FALSE(citation_problems("00 Lemma 5.1", keys, sections).empty());
  CHECK_FALSE(citation_problems("", keys, sections).empty());
  CHECK_FALSE(citation_problems("A.28", keys, sections).empty());
}

TEST_CASE("every citation of the identity library names a source docs/bibliography.md defines", "[docs]") {
  const auto keys = bibliography_keys();
  const auto sections = mathematics_sections();
  for (const char* key : {"000", "001", "002", "003", "004", "reference"}) CHECK(keys.count(key));
  const syntax::Module m = syntax::load_module(test::source_path("grammar/identities.soa"));
  REQUIRE(m.identities.size() >= 15);
  for (const auto& id : m.identities) {
    INFO(id.name << " \"" << id.citation << "\"");
    CHECK(citation_problems(id.citation, keys, sections).empty());
  }
}

TEST_CASE("every citation string in the rewriter's own rules names a source docs/bibliography.md defines", "[docs]") {
  const auto keys = bibliography_keys();
  const auto sections = mathematics_sections();
  // String literals that start like a citation ("reference 4: (AB)* = B* A*, ..."): the
  // citation is what comes before the statement's colon.
  const std::regex literal(R"re("((?:\d{3}|reference) [^"]*)")re");
  int found = 0;
  for (const auto& entry : fs::directory_iterator(test::source_path("compiler/rewrite"))) {
    if (entry.path().extension() != ".cpp") continue;
    const std::string text = read(entry.path().string());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it) {
      const std::string s = (*it)[1];
      const std::string citation = s.substr(0, s.find(':'));
      INFO(entry.path().filename().string() << ": \"" << s << "\"");
      CHECK(citation_problems(citation, keys, sections).empty());
      ++found;
    }
  }
  CHECK(found >= 1);  // the normalisation rules' citation
}

TEST_CASE("every identity of the library is stated in docs/mathematics.md", "[docs]") {
  const std::string math = read(test::source_path("docs/mathematics.md"));
  const syntax::Module m = syntax::load_module(test::source_path("grammar/identities.soa"));
  for (const auto& id : m.identities) {
    INFO(id.name << " should appear as `" << id.name << "` in docs/mathematics.md");
    CHECK(mentions(math, id.name));
  }
}

TEST_CASE("every vocabulary name is explained in docs/mathematics.md", "[docs]") {
  const std::string math = read(test::source_path("docs/mathematics.md"));
  for (const ir::SymbolInfo& s : ir::vocabulary()) {
    INFO(s.name << " should appear as `" << s.name << "` in docs/mathematics.md");
    CHECK(mentions(math, std::string(s.name)));
  }
}

TEST_CASE("grammar/README.md's vocabulary table is what soac vocabulary --format markdown prints", "[docs]") {
  const std::string readme = read(test::source_path("grammar/README.md"));
  const std::string begin_marker = "<!-- vocabulary:begin", end_marker = "<!-- vocabulary:end";
  const std::size_t begin = readme.find(begin_marker);
  REQUIRE(begin != std::string::npos);
  const std::size_t table_start = readme.find('\n', begin) + 1;
  const std::size_t end = readme.find(end_marker, table_start);
  REQUIRE(end != std::string::npos);
  const std::string table = readme.substr(table_start, end - table_start);
  const std::string printed = run(test::soac_path() + " vocabulary --format markdown");
  INFO("the table in grammar/README.md is stale: regenerate every golden with: cmake --build build --target goldens");
  CHECK(table == printed);
  // One row per vocabulary entry, so a name cannot be missing from the doc.
  std::size_t rows = 0;
  for (std::size_t p = 0; (p = printed.find("\n| `", p)) != std::string::npos; ++p) ++rows;
  CHECK(rows == ir::vocabulary().size());
}

TEST_CASE("every vocabulary symbol's LaTeX compiles with pdflatex, plain, per arm, adjoint and inverse",
          "[docs][latex]") {
  std::string body;
  for (const ir::SymbolInfo& s : ir::vocabulary()) {
    const std::string name(s.name);
    const ir::Expr plain = ir::symbol(name), arm = ir::symbol(ir::indexed_name(name, 2));
    const ir::Expr forms[] = {plain,
                              arm,
                              ir::adjoint(plain),
                              ir::inverse(arm),
                              ir::adjoint(ir::inverse(arm)),
                              ir::product({ir::sub(ir::identity(), plain), ir::scale(0.5, arm)})};
    body += "\\noindent\\texttt{" + std::regex_replace(name, std::regex("_"), "\\_") + "}:";
    for (const ir::Expr& e : forms) body += " $" + ir::print(e, ir::Syntax::Latex) + "$,";
    // Marked, as a derivation step shows the part it rewrites.
    body += " $" + ir::print(forms[3], ir::PrintOptions{ir::Syntax::Latex, forms[3].get()}) + "$\\\\\n";
  }
  CHECK(body.find("\\psi_{2}") != std::string::npos);
  CHECK(body.find("{f_0}_{2}") != std::string::npos);  // a subscripted base is braced first
  const fs::path dir = fs::temp_directory_path() / ("soa_test_docs_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ofstream tex(dir / "symbols.tex");
    tex << "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n"
        << body << "\\end{document}\n";
  }
  const std::string command =
      "cd '" + dir.string() + "' && pdflatex -interaction=nonstopmode -halt-on-error symbols.tex > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  std::string errors;
  if (status != 0) {
    std::ifstream log(dir / "symbols.log");
    for (std::string line; std::getline(log, line);)
      if (!line.empty() && line[0] == '!') errors += line + "\n";
    if (errors.empty()) errors = "pdflatex did not run (Debian: apt-get install texlive-latex-base)";
  }
  INFO(errors << "(document kept in " << dir.string() << ")");
  CHECK(status == 0);
  if (status == 0) fs::remove_all(dir);
}
