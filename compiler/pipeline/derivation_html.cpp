// The HTML page of a derivation (derivation.hpp): one file, KaTeX and its fonts inlined.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "algebra/arms.hpp"
#include "pipeline/derivation.hpp"

namespace soa::pipeline {

// Defined in the build tree's katex_embedded.cpp, which cmake/embed_katex.cmake writes from
// Debian's libjs-katex.
namespace katex {
std::string_view version();
std::string_view script();                     // katex.min.js
std::string_view style();                      // katex.min.css, each font as url(fonts/NAME.woff2)
std::string_view font(std::string_view name);  // NAME.woff2's bytes; empty if not embedded
}  // namespace katex

namespace {

// For text and attribute values alike.
std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    unsigned v = 0;
    for (std::size_t k = 0; k < 3; ++k) v = v << 8 | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0u);
    for (std::size_t k = 0; k < 4; ++k) out += k <= n ? kDigits[(v >> (18 - 6 * k)) & 63] : '=';
  }
  return out;
}

// KaTeX's style sheet with every font a data: URI.
const std::string& katex_style() {
  static const std::string style = [] {
    const std::string_view in = katex::style();
    const std::string_view open = "url(fonts/", close = ".woff2)";
    std::string out;
    std::size_t at = 0;
    for (std::size_t url; (url = in.find(open, at)) != std::string_view::npos;) {
      const std::size_t name = url + open.size(), end = in.find(close, name);
      if (end == std::string_view::npos) break;  // embed_katex.cmake leaves no other url(fonts/
      const std::string_view bytes = katex::font(in.substr(name, end - name));
      out += in.substr(at, url - at);
      out += "url(data:font/woff2;base64," + base64(bytes) + ")";
      at = end + close.size();
    }
    return out + std::string(in.substr(at));
  }();
  return style;
}

// rewrite::to_string's text with N^3 as N<sup>3</sup> and " x " as a times sign.
std::string cost_html(const rewrite::Cost& c) {
  const std::string text = escape(rewrite::to_string(c));
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '^') {
      std::size_t j = i + 1;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      out += "<sup>" + text.substr(i + 1, j - i - 1) + "</sup>";
      i = j - 1;
    } else if (text.compare(i, 3, " x ") == 0) {
      out += " &times; ";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// A formula: KaTeX typesets `tex` into it on load; until then (or without scripts) it reads
// as `fallback`.
std::string tex(const std::string& latex, const std::string& fallback, std::string_view role) {
  return fmt::format("<div class=\"tex {}\" data-tex=\"{}\">{}</div>", role, escape(latex), escape(fallback));
}

// The rule a step names, in `rules`, and its arm (0: the whole robot's): by name, or for an
// arm's instance "ID[i]SUFFIX" the whole robot's "IDSUFFIX" on arm i (rewrite/search.cpp
// names them so).
std::optional<std::pair<rewrite::Rule, int>> find_rule(std::span<const rewrite::Rule> rules, const std::string& name) {
  for (const rewrite::Rule& r : rules)
    if (r.name == name) return std::pair{r, 0};
  const std::size_t open = name.find('['), close = name.find(']', open);
  if (open == std::string::npos || close == std::string::npos || close == open + 1) return std::nullopt;
  const std::string digits = name.substr(open + 1, close - open - 1);
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  const std::string identity = name.substr(0, open), whole = identity + name.substr(close + 1);
  const int arm = std::stoi(digits);
  for (const rewrite::Rule& r : rules) {
    if (r.name != whole || r.identity != identity) continue;
    rewrite::Rule instance = r;
    instance.name = name;
    instance.lhs = ir::on_arm(r.lhs, arm);
    instance.rhs = ir::on_arm(r.rhs, arm);
    return std::pair{instance, arm};
  }
  return std::nullopt;
}

std::string statement(const rewrite::Step& s, std::span<const rewrite::Rule> rules) {
  using ir::Syntax;
  const auto found = find_rule(rules, s.rule);
  if (!found) return fmt::format("<summary>{}: statement</summary>\n<p>{}</p>\n", escape(s.rule), escape(s.citation));
  const auto& [rule, arm] = *found;
  std::vector<std::string> how;
  if (rule.direction == rewrite::Direction::RightToLeft) how.push_back(" read from right to left");
  if (rule.adjoint) how.push_back(" as its adjoint");
  if (arm > 0) how.push_back(fmt::format(" for arm {}", arm));
  std::string out = fmt::format("<summary>rule {}: statement and citation</summary>\n", escape(rule.name));
  out += tex(ir::print(rule.lhs, Syntax::Latex) + " \\;\\longrightarrow\\; " + ir::print(rule.rhs, Syntax::Latex),
             ir::print(rule.lhs, Syntax::Unicode) + "  →  " + ir::print(rule.rhs, Syntax::Unicode), "rule");
  out += fmt::format("<p>The identity <b>{}</b>{} ({}), its sides in canonical form.{}</p>\n", escape(rule.identity),
                     escape(fmt::format("{}", fmt::join(how, ","))), escape(rule.citation),
                     rule.guards.serial_only ? " It holds on serial chains only." : "");
  return out;
}

bool evaluated(const rewrite::Step& s) { return !s.after.is(ir::Op::Identity) && !s.after.is(ir::Op::Zero); }

std::string verdict(bool pass) {
  return pass ? "<span class=\"verdict pass\">PASS</span>" : "<span class=\"verdict fail\">FAIL</span>";
}

// Rendering each formula with throwOnError: true and marking a failure "katex-error" by
// hand, rather than throwOnError: false, so that every failure is marked: KaTeX itself
// draws an undefined command in red without the class. strict "error" holds the TeX to what
// LaTeX accepts (derivation_latex prints the same), except the page's one HTML extension,
// \htmlClass{soa-mark}, which marks the rewritten part (trusted for that class alone).
constexpr std::string_view kRender = R"js((function () {
  "use strict";
  var options = {
    throwOnError: true,
    trust: function (c) { return c.command === "\\htmlClass" && c.class === "soa-mark"; },
    strict: function (code) { return code === "htmlExtension" ? "ignore" : "error"; }
  };
  document.querySelectorAll(".tex").forEach(function (el) {
    try {
      katex.render(el.getAttribute("data-tex"), el, options);
    } catch (e) {
      el.classList.add("katex-error");
      el.title = String(e);
    }
  });
})();
)js";

constexpr std::string_view kStyle = R"css(
:root { --ink: #1f2328; --muted: #59636e; --step: #eef3fa; --accent: #3f6fb0;
        --form: #f5f4ee; --mark: #fde68a; --pass: #1a7f37; --pass-bg: #dcf3e1; --fail: #b42318;
        --fail-bg: #fde2df; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: var(--ink);
       font: 16px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 62rem; margin: 0 auto; padding: 1.5rem 1.5rem 3rem; }
h1 { font-size: 1.5rem; margin: 0 0 0.75rem; }
h2 { font-size: 1.15rem; margin: 0 0 0.5rem; }
code { font: 0.9em/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
.form { background: var(--form); border-radius: 6px; padding: 1rem 1.25rem; margin: 0 0 1.25rem; }
.meta, .facts { color: var(--muted); font-size: 0.9rem; margin: 0.5rem 0 0; }
.facts span + span::before { content: "\00b7"; margin: 0 0.5rem; }
.tex { overflow-x: auto; overflow-y: hidden; padding: 0.2rem 0; }
.tex .katex { font-size: 1.15em; }
ol.steps { list-style: none; margin: 0; padding: 0; }
.step { background: var(--step); border-left: 4px solid var(--accent); border-radius: 4px;
        padding: 0.75rem 1.25rem; margin: 0 0 1rem; }
.step .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.25rem 0.75rem; }
.step.fail { border-left-color: var(--fail); }
.step .num { font-weight: 700; color: var(--accent); }
.step .rule { font-weight: 700; }
.step .cite { color: var(--muted); }
.step .verdict { margin-left: auto; }
.line { display: grid; grid-template-columns: 4rem minmax(0, 1fr); align-items: baseline; }
.label { color: var(--muted); font-size: 0.85rem; }
.soa-mark { background: var(--mark); border-radius: 3px; }
details { margin-top: 0.5rem; font-size: 0.9rem; }
summary { cursor: pointer; color: var(--accent); }
details p { margin: 0.25rem 0 0; }
.verdict { font-size: 0.8rem; font-weight: 700; border-radius: 3px; padding: 0 0.4rem; }
.verdict.pass { color: var(--pass); background: var(--pass-bg); }
.verdict.fail { color: var(--fail); background: var(--fail-bg); }
.check { border-radius: 6px; padding: 0.75rem 1.25rem; margin: 0 0 1.25rem; }
.check.pass { background: var(--pass-bg); }
.check.fail { background: var(--fail-bg); }
.katex-error { color: var(--fail); }
footer { color: var(--muted); font-size: 0.85rem; }
)css";

// KaTeX's licence travels with the copy of it the page holds.
constexpr std::string_view kKatexLicence = R"(The MIT License (MIT)

Copyright (c) 2013-2020 Khan Academy and other contributors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.)";

}  // namespace

std::string derivation_html(const rewrite::Derivation& d, const DerivationCheck* check,
                            std::span<const rewrite::Rule> rules) {
  using ir::Syntax;
  const std::string input = ir::print(d.input);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"soac derive --format html\">\n";
  out += fmt::format("<title>soac derive: {}</title>\n", escape(input));
  out += fmt::format("<!-- KaTeX {} (https://katex.org) and its fonts are inlined below.\n{}\n-->\n", katex::version(),
                     kKatexLicence);
  out += fmt::format("<style>\n{}\n</style>\n<style>{}</style>\n</head>\n<body>\n<main>\n", katex_style(), kStyle);

  out += "<section class=\"form input\">\n<h1>Derivation</h1>\n";
  out += tex(ir::print(d.input, Syntax::Latex), ir::print(d.input, Syntax::Unicode), "expression");
  out += fmt::format("<p class=\"meta\"><code>{}</code> &middot; cost {}</p>\n</section>\n", escape(input),
                     cost_html(d.input_cost));

  if (d.steps.empty()) {
    out += "<p>No cheaper form found: the expression is left as it is.</p>\n";
  } else {
    out += "<ol class=\"steps\">\n";
    for (std::size_t i = 0; i < d.steps.size(); ++i) {
      const rewrite::Step& s = d.steps[i];
      ir::PrintOptions before = marked(s, Syntax::Latex);
      before.latex_mark = "\\htmlClass{soa-mark}";
      const bool checked = check && evaluated(s);
      const bool pass = !checked || check->step_max_rel[i] <= 1e-9;
      out += fmt::format(
          "<li class=\"step{}\" id=\"step-{}\">\n<div class=\"head\"><span class=\"num\">{}.</span>"
          "<span class=\"rule\">{}</span><span class=\"cite\">{}</span>{}</div>\n",
          pass ? "" : " fail", i + 1, i + 1, escape(s.rule), escape(s.citation), checked ? verdict(pass) : "");
      out += "<div class=\"line\"><span class=\"label\">before</span>" +
             tex(ir::print(s.before, before), ir::print(s.before, marked(s, Syntax::Unicode)), "before") + "</div>\n";
      out += "<div class=\"line\"><span class=\"label\">after</span>" +
             tex(ir::print(s.after, Syntax::Latex), ir::print(s.after, Syntax::Unicode), "after") + "</div>\n";
      out += fmt::format("<p class=\"facts\"><span>cost after: {}</span>", cost_html(s.cost_after));
      if (checked)
        out += fmt::format("<span>max relative error {:.2e}</span>", check->step_max_rel[i]);
      else if (check)
        out += "<span>not evaluated: the form has no size of its own</span>";
      out += "</p>\n<details>\n" + statement(s, rules) + "</details>\n</li>\n";
    }
    out += "</ol>\n";
  }

  const ir::Expr final = rewrite::present(d.final);
  out += "<section class=\"form final\">\n<h2>Final form</h2>\n";
  out += tex(ir::print(final, Syntax::Latex), ir::print(final, Syntax::Unicode), "expression");
  out += fmt::format("<p class=\"meta\"><code>{}</code> &middot; cost {}</p>\n</section>\n", escape(ir::print(final)),
                     cost_html(d.cost));

  if (check) {
    const bool pass = check->failed_step < 0;
    out += fmt::format("<section class=\"check {}\">{} ", pass ? "pass" : "fail", verdict(pass));
    if (pass)
      out += fmt::format("Every step keeps the value on {} ({} states): max relative error {:.2e}.",
                         escape(check->robot), check->samples, check->max_rel);
    else
      out += fmt::format("Step {} ({}) changed the value on {} ({} states): max relative error {:.2e}.",
                         check->failed_step, escape(d.steps[check->failed_step - 1].rule), escape(check->robot),
                         check->samples, check->max_rel);
    out += "</section>\n";
  }
  out += fmt::format(
      "<footer>Citations: docs/bibliography.md; mathematics: docs/mathematics.md. Written by "
      "<code>soac derive --format html</code>; typeset by KaTeX {}.</footer>\n</main>\n",
      katex::version());
  out += fmt::format("<script>{}</script>\n<script>{}</script>\n</body>\n</html>\n", katex::script(), kRender);
  return out;
}

}  // namespace soa::pipeline
