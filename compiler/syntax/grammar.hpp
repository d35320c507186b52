// The operator language and the .soa format as PEGTL rules (internal to compiler/syntax).
//
// grammar/soa.peg is the same grammar in PEG notation; every rule here names the .peg rule
// it implements, and a change to one must be made to the other.
//
// How the rules are shaped
// - Alternatives are told apart by their first character or two, so the grammar only ever
//   backtracks over whitespace or a part of a number, and a failure is reported where the
//   text went wrong. After a token that commits to a construct ('(', '+', '=', a keyword,
//   ...) the rest is wrapped in must<>, which raises with the message in `expect<Rule>`
//   below. Each must<> target is its own type (often a one-rule seq<> around a shared
//   rule) so that one shared rule can have a message per context ("expected an expression
//   after '+'" vs "... after '('").
// - Rules that become nodes of the parse tree are listed in `selector`; the others are
//   transparent. parse.cpp and module.cpp walk those nodes and build the IR.
// - Names are not resolved here: a `word` is a maximal run of letters that parse.cpp splits
//   into known names, because which names exist depends on the `let`s seen so far.
#pragma once

#include <cstddef>
#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/parse_tree.hpp>

namespace soa::syntax::grammar {

namespace p = tao::pegtl;

// ---- trivia ---------------------------------------------------------------------------
// peg: comment <- '#' (!eol .)* eol?      sp <- (space / comment)*
struct comment : p::seq<p::one<'#'>, p::until<p::eolf>> {};
struct sp : p::star<p::sor<p::space, comment>> {};

// ---- words ------------------------------------------------------------------------------
// Code points that look like punctuation or operators rather than letters: Latin-1 symbols
// (including superscript one), the general-punctuation and super/subscript-operator block
// (including superscript minus), arrows through miscellaneous symbols, CJK punctuation, BOM.
// peg: not_letter <- [U+0080-U+00BF] / U+00D7 / U+00F7 / [U+2000-U+207F] / [U+2190-U+2BFF]
//                    / [U+3000-U+303F] / U+FEFF
struct not_letter : p::utf8::ranges<0x80, 0xBF, 0xD7, 0xD7, 0xF7, 0xF7, 0x2000, 0x207F, 0x2190, 0x2BFF, 0x3000, 0x303F,
                                    0xFEFF, 0xFEFF> {};
// Any other non-ASCII code point counts as a letter: Greek, script capitals (ℳ), combining
// marks (φ̃, q̇) and subscripts (f₀) all occur in the papers' spellings.
// peg: unicode_letter <- !not_letter [U+0080-U+10FFFF]
struct unicode_letter : p::seq<p::not_at<not_letter>, p::utf8::range<0x80, 0x10FFFF>> {};
// peg: word_start <- [A-Za-z_] / unicode_letter      word_char <- [A-Za-z0-9_] / unicode_letter
struct word_start : p::sor<p::alpha, p::one<'_'>, unicode_letter> {};
struct word_char : p::sor<p::alnum, p::one<'_'>, unicode_letter> {};
// peg: word_text <- word_start word_char*
struct word_text : p::seq<word_start, p::star<word_char>> {};

// peg: keyword <- ('let' / 'identity' / 'kernel' / 'weld' / 'contact' / 'grasp') !word_char
struct kw_let : p::seq<TAO_PEGTL_STRING("let"), p::not_at<word_char>> {};
struct kw_identity : p::seq<TAO_PEGTL_STRING("identity"), p::not_at<word_char>> {};
struct kw_kernel : p::seq<TAO_PEGTL_STRING("kernel"), p::not_at<word_char>> {};
struct kw_weld : p::seq<TAO_PEGTL_STRING("weld"), p::not_at<word_char>> {};
struct kw_contact : p::seq<TAO_PEGTL_STRING("contact"), p::not_at<word_char>> {};
struct kw_grasp : p::seq<TAO_PEGTL_STRING("grasp"), p::not_at<word_char>> {};
struct keyword : p::sor<kw_let, kw_identity, kw_kernel, kw_weld, kw_contact, kw_grasp> {};

// Keywords are not names, so that a declaration missing its ';' ends before the next one
// instead of swallowing its keyword as an operator name.
// peg: word <- !keyword word_text
struct word : p::seq<p::not_at<keyword>, word_text> {};

// ---- numbers ----------------------------------------------------------------------------
// The exponent is what ir::format_number prints for very small or large coefficients.
// peg: number <- [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)?
struct digits : p::plus<p::digit> {};
struct number
    : p::seq<digits, p::opt<p::one<'.'>, digits>, p::opt<p::one<'e', 'E'>, p::opt<p::one<'+', '-'>>, digits>> {};

// ---- expressions ------------------------------------------------------------------------
struct expression;

// Postfix operators follow their operand with no space between: `A * B` would otherwise
// read as A* B, which is never what someone who writes it means.
// peg: inverse_op <- '^-1' / '⁻¹'        adjoint_op <- '*' / '^*'
struct inverse_op : p::sor<TAO_PEGTL_STRING("^-1"), p::utf8::string<0x207B, 0x00B9>> {};
struct adjoint_op : p::sor<p::one<'*'>, TAO_PEGTL_STRING("^*")> {};
struct caret_suffix : p::success {};  // only raised: '^' followed by anything else
// peg: postfix <- inverse_op / adjoint_op / &'^' ERROR
struct postfix : p::sor<inverse_op, adjoint_op, p::seq<p::one<'^'>, p::raise<caret_suffix>>> {};

// peg: paren <- '(' sp expression sp ')'
struct paren_expression : p::seq<expression> {};
struct close_paren : p::one<')'> {};
struct paren : p::seq<p::one<'('>, sp, p::must<paren_expression>, sp, p::must<close_paren>> {};

// The derivative with respect to a symbolic joint coordinate q_i (docs/mathematics.md
// section 7), for soac derive and verify: `d(` may also begin a product of a name `d` and a
// parenthesis, so the whole form is tried first and abandoned without its '/ dq_i'.
// peg: sensitivity <- d_mark '(' sp expression sp ')' sp '/' sp d_mark ('q_i' / 'qᵢ') !word_char
//      d_mark      <- 'd' / '∂'
struct d_mark : p::sor<p::one<'d'>, p::utf8::one<0x2202>> {};
struct coordinate_q : p::sor<TAO_PEGTL_STRING("q_i"), p::utf8::string<'q', 0x1D62>> {};
struct sensitivity : p::seq<d_mark, p::one<'('>, sp, expression, sp, p::one<')'>, sp, p::one<'/'>, sp, d_mark,
                            coordinate_q, p::not_at<word_char>> {};

// peg: factor <- (sensitivity / paren / number / word) postfix*
struct factor : p::seq<p::sor<sensitivity, paren, number, word>, p::star<postfix>> {};

// Juxtaposition is the product; it binds tighter than + and -.
// peg: product <- factor (sp factor)*
struct product : p::seq<factor, p::star<sp, factor>> {};

// A leading '-' negates the first term only: "-A B + C" is (-(A B)) + C.
// peg: negated <- '-' sp product      plus_term <- '+' sp product      minus_term <- '-' sp product
struct negated_operand : p::seq<product> {};
struct negated : p::seq<p::one<'-'>, sp, p::must<negated_operand>> {};
struct plus_operand : p::seq<product> {};
struct plus_term : p::seq<p::one<'+'>, sp, p::must<plus_operand>> {};
struct minus_operand : p::seq<product> {};
struct minus_term : p::seq<p::one<'-'>, sp, p::must<minus_operand>> {};

// + and - are left associative and loosest (the IR flattens sums anyway).
// peg: expression <- (negated / product) (sp (plus_term / minus_term))*
struct expression : p::seq<p::sor<negated, product>, p::star<sp, p::sor<plus_term, minus_term>>> {};

// peg: equation <- expression sp '=' sp expression (sp '=' sp expression)*
struct first_equals : p::one<'='> {};
struct side : p::seq<expression> {};
struct equation
    : p::seq<expression, sp, p::must<first_equals>, sp, p::must<side>, p::star<sp, p::one<'='>, sp, p::must<side>>> {};

// ---- whole inputs for parse_expression / parse_equation ---------------------------------
// peg: expression_input <- sp expression sp !.
struct top_expression : p::seq<expression> {};
struct expression_end : p::eof {};
struct expression_input : p::seq<sp, p::must<top_expression>, sp, p::must<expression_end>> {};
// peg: equation_input <- sp equation sp !.
struct top_equation : p::seq<equation> {};
struct equation_end : p::eof {};
struct equation_input : p::seq<sp, p::must<top_equation>, sp, p::must<equation_end>> {};

// ---- .soa declarations ------------------------------------------------------------------
// peg: let_decl <- 'let' !word_char sp word sp '=' sp expression sp ';'
struct let_name : p::seq<word> {};
struct let_equals : p::one<'='> {};
struct let_body : p::seq<expression> {};
struct let_end : p::seq<sp, p::one<';'>> {};
struct let_decl
    : p::seq<kw_let, sp, p::must<let_name>, sp, p::must<let_equals>, sp, p::must<let_body>, p::must<let_end>> {};

// peg: identity_name <- [A-Za-z0-9] [A-Za-z0-9_.-]*
struct identity_name : p::seq<p::alnum, p::star<p::sor<p::alnum, p::one<'_', '.', '-'>>>> {};
// peg: citation <- '"' (!["\r\n] .)* '"'
struct citation_text : p::star<p::not_one<'"', '\n', '\r'>> {};
struct close_quote : p::one<'"'> {};
struct citation : p::seq<p::one<'"'>, citation_text, p::must<close_quote>> {};
// peg: attributes <- '[' sp attribute (sp ',' sp attribute)* sp ']'
//      attribute <- attr_key (sp '=' sp attr_value)?
//      attr_key <- [A-Za-z] [A-Za-z0-9_-]*      attr_value <- [A-Za-z0-9_.-]+
struct attr_key : p::seq<p::alpha, p::star<p::sor<p::alnum, p::one<'_', '-'>>>> {};
struct attr_value : p::plus<p::sor<p::alnum, p::one<'_', '-', '.'>>> {};
struct attribute : p::seq<attr_key, p::opt<sp, p::one<'='>, sp, p::must<attr_value>>> {};
struct first_attribute : p::seq<attribute> {};
struct next_attribute : p::seq<attribute> {};
struct close_bracket : p::one<']'> {};
struct attributes : p::seq<p::one<'['>, sp, p::must<first_attribute>,
                           p::star<sp, p::one<','>, sp, p::must<next_attribute>>, sp, p::must<close_bracket>> {};
// peg: identity_decl <- 'identity' !word_char sp identity_name sp citation sp (attributes sp)?
//                       ':' sp equation sp ';'
struct identity_colon : p::one<':'> {};
struct identity_equation : p::seq<equation> {};
struct identity_end : p::seq<sp, p::one<';'>> {};
struct identity_decl
    : p::seq<kw_identity, sp, p::must<identity_name>, sp, p::must<citation>, sp, p::opt<attributes, sp>,
             p::must<identity_colon>, sp, p::must<identity_equation>, p::must<identity_end>> {};

// peg: kernel_decl <- 'kernel' !word_char sp kernel_name sp '(' sp
//                     (word_text (sp ',' sp word_text)*)? sp ')' sp '=' sp kernel_body sp ';'
//      kernel_name <- !keyword [A-Za-z_] [A-Za-z0-9_]*
struct kernel_name : p::seq<p::not_at<keyword>, p::identifier> {};
struct kernel_input : p::seq<word_text> {};
struct next_input : p::seq<kernel_input> {};
struct open_inputs : p::one<'('> {};
struct close_inputs : p::one<')'> {};
struct kernel_equals : p::one<'='> {};
// A kernel may be a derivative of an expression with respect to some of its inputs (docs/
// mathematics.md section 7). `d(` may also begin a product (a name `d` times a parenthesis):
// only the '/' after the ')' tells, so this is the one place the grammar backtracks over
// more than whitespace.
// peg: kernel_body <- derivative / expression
//      derivative  <- d_mark '(' sp expression sp ')' sp '/' sp wrt
//      wrt         <- d_mark ('(' sp wrt_name (sp ',' sp wrt_name)* sp ')' / wrt_name)
//      d_mark      <- 'd' / '∂'
struct wrt_name : p::seq<word_text> {};
struct first_wrt : p::seq<wrt_name> {};
struct next_wrt : p::seq<wrt_name> {};
struct close_wrt : p::one<')'> {};
struct wrt_list : p::seq<p::one<'('>, sp, p::must<first_wrt>, p::star<sp, p::one<','>, sp, p::must<next_wrt>>, sp,
                         p::must<close_wrt>> {};
struct wrt : p::seq<d_mark, p::sor<wrt_list, wrt_name>> {};
struct derivative : p::seq<d_mark, p::one<'('>, sp, expression, sp, p::one<')'>, sp, p::one<'/'>, sp, p::must<wrt>> {};
struct kernel_body : p::sor<derivative, expression> {};
struct kernel_end : p::seq<sp, p::one<';'>> {};
struct kernel_decl
    : p::seq<kw_kernel, sp, p::must<kernel_name>, sp, p::must<open_inputs>, sp,
             p::opt<kernel_input, p::star<sp, p::one<','>, sp, p::must<next_input>>>, sp, p::must<close_inputs>, sp,
             p::must<kernel_equals>, sp, p::must<kernel_body>, p::must<kernel_end>> {};

// peg: hold_decl <- ('weld' / 'contact') !word_char sp frame_name (sp 'to' !word_char sp frame_name)?
//                   (sp ':' sp word_text (sp ',' sp word_text)*)? sp ';'
//      frame_name <- [A-Za-z0-9_] [A-Za-z0-9_.-]*
struct hold_kind : p::sor<kw_weld, kw_contact> {};
struct frame_name : p::seq<p::sor<p::alnum, p::one<'_'>>, p::star<p::sor<p::alnum, p::one<'_', '.', '-'>>>> {};
struct partner_name : p::seq<frame_name> {};
struct kw_to : p::seq<TAO_PEGTL_STRING("to"), p::not_at<word_char>> {};
struct hold_direction : p::seq<word_text> {};  // rx, ry, rz, x, y or z: checked in module.cpp
struct first_direction : p::seq<hold_direction> {};
struct next_direction : p::seq<hold_direction> {};
struct hold_end : p::seq<sp, p::one<';'>> {};
struct hold_decl
    : p::seq<
          hold_kind, sp, p::must<frame_name>, p::opt<sp, kw_to, sp, p::must<partner_name>>,
          p::opt<sp, p::one<':'>, sp, p::must<first_direction>, p::star<sp, p::one<','>, sp, p::must<next_direction>>>,
          p::must<hold_end>> {};

// peg: grasp_decl <- 'grasp' !word_char sp frame_name sp 'to' !word_char sp frame_name sp ':' sp
//                    'stiffness' sp number sp number sp ',' sp 'damping' sp number sp number sp ';'
struct grasp_frame : p::seq<frame_name> {};
struct grasp_to : p::seq<kw_to> {};
struct grasp_partner : p::seq<frame_name> {};
struct grasp_end : p::seq<sp, p::one<';'>> {};
struct grasp_colon : p::one<':'> {};
struct kw_stiffness : p::seq<TAO_PEGTL_STRING("stiffness"), p::not_at<word_char>> {};
struct kw_damping : p::seq<TAO_PEGTL_STRING("damping"), p::not_at<word_char>> {};
struct grasp_constant : p::seq<number> {};
struct grasp_comma : p::one<','> {};
struct grasp_decl : p::seq<kw_grasp, sp, p::must<grasp_frame>, sp, p::must<grasp_to>, sp, p::must<grasp_partner>, sp,
                           p::must<grasp_colon>, sp, p::must<kw_stiffness>, sp, p::must<grasp_constant>, sp,
                           p::must<grasp_constant>, sp, p::must<grasp_comma>, sp, p::must<kw_damping>, sp,
                           p::must<grasp_constant>, sp, p::must<grasp_constant>, p::must<grasp_end>> {};

// A module is parsed one declaration at a time (module.cpp), so that names defined by a
// `let` are known to the declarations after it and errors come out in text order.
// peg: module <- sp (declaration sp)* !.
//      declaration <- let_decl / identity_decl / kernel_decl / hold_decl / grasp_decl
struct declaration : p::sor<let_decl, identity_decl, kernel_decl, hold_decl, grasp_decl> {};
struct module_step : p::seq<sp, p::sor<p::eof, p::must<declaration>>> {};

// Any character that can start a token; used to tell "bad character" from "wrong token".
struct token_start
    : p::sor<word_char, p::one<'(', ')', '+', '-', '*', '^', '=', ';', ':', ',', '[', ']', '"', '#', '.'>,
             p::utf8::one<0x207B>> {};

// ---- parse tree -------------------------------------------------------------------------
template <typename Rule>
using selector = p::parse_tree::selector<
    Rule, p::parse_tree::store_content::on<
              expression, negated, plus_term, minus_term, product, factor, paren, sensitivity, number, word, inverse_op,
              adjoint_op, equation, let_decl, let_name, identity_decl, identity_name, citation_text, attribute,
              attr_key, attr_value, kernel_decl, kernel_name, kernel_input, derivative, wrt_name, hold_decl, hold_kind,
              frame_name, partner_name, hold_direction, grasp_decl, grasp_frame, grasp_partner, grasp_constant>>;

// ---- error messages ---------------------------------------------------------------------
enum class Place {
  Here,           // at the offending token, naming it ("..., found ';'")
  AfterPrevious,  // right after the previous token: where a missing ';' belongs
  Exact,          // exactly where the input stood (the end of a line, for a string)
};

struct Expectation {
  const char* message = nullptr;
  Place place = Place::Here;
  // True where an operand has just ended, so a spaced-out '*' or '^-1' was probably meant
  // as a postfix operator and deserves a specific hint.
  bool after_operand = false;
  // True where the whole input should have ended, so a ')' there has no '(' to match.
  bool unmatched_paren = false;
  // True right after a '^': the message names the whole exponent found ("-2", "2", "T").
  bool exponent = false;
};

template <typename Rule>
inline constexpr Expectation expect{};

// clang-format off
template <> inline constexpr Expectation expect<caret_suffix>{"'^' must be followed by '-1' (inverse) or '*' (adjoint)", Place::Here, false, false, true};
template <> inline constexpr Expectation expect<paren_expression>{"expected an expression after '('"};
template <> inline constexpr Expectation expect<close_paren>{"expected ')'", Place::Here, true};
template <> inline constexpr Expectation expect<negated_operand>{"expected an expression after '-'"};
template <> inline constexpr Expectation expect<plus_operand>{"expected an expression after '+'"};
template <> inline constexpr Expectation expect<minus_operand>{"expected an expression after '-'"};
template <> inline constexpr Expectation expect<first_equals>{"expected '=' (an equation has at least two sides)", Place::Here, true};
template <> inline constexpr Expectation expect<side>{"expected an expression after '='"};
template <> inline constexpr Expectation expect<top_expression>{"expected an expression"};
template <> inline constexpr Expectation expect<expression_end>{"expected an operator or the end of the expression", Place::Here, true, true};
template <> inline constexpr Expectation expect<top_equation>{"expected an equation"};
template <> inline constexpr Expectation expect<equation_end>{"expected '=' or the end of the equation", Place::Here, true, true};
template <> inline constexpr Expectation expect<let_name>{"expected a name after 'let'"};
template <> inline constexpr Expectation expect<let_equals>{"expected '=' after the defined name"};
template <> inline constexpr Expectation expect<let_body>{"expected an expression after '='"};
template <> inline constexpr Expectation expect<let_end>{"expected ';' to end the let declaration", Place::AfterPrevious, true};
template <> inline constexpr Expectation expect<identity_name>{"expected the identity's name after 'identity'"};
template <> inline constexpr Expectation expect<citation>{"expected the identity's citation, a \"quoted string\", after its name"};
template <> inline constexpr Expectation expect<close_quote>{"unterminated citation: expected '\"' before the end of the line", Place::Exact};
template <> inline constexpr Expectation expect<attr_value>{"expected an attribute value after '='"};
template <> inline constexpr Expectation expect<first_attribute>{"expected an attribute name after '['"};
template <> inline constexpr Expectation expect<next_attribute>{"expected an attribute name after ','"};
template <> inline constexpr Expectation expect<close_bracket>{"expected ',' or ']' in the attribute list"};
template <> inline constexpr Expectation expect<identity_colon>{"expected ':' before the identity's equation"};
template <> inline constexpr Expectation expect<identity_equation>{"expected the identity's equation after ':'"};
template <> inline constexpr Expectation expect<identity_end>{"expected ';' to end the identity declaration", Place::AfterPrevious, true};
template <> inline constexpr Expectation expect<kernel_name>{"expected the kernel's name after 'kernel'"};
template <> inline constexpr Expectation expect<open_inputs>{"expected '(' and the kernel's inputs after its name"};
template <> inline constexpr Expectation expect<next_input>{"expected an input name after ','"};
template <> inline constexpr Expectation expect<close_inputs>{"expected ',' or ')' in the kernel's inputs"};
template <> inline constexpr Expectation expect<kernel_equals>{"expected '=' after the kernel's inputs"};
template <> inline constexpr Expectation expect<kernel_body>{"expected the kernel's expression after '='"};
template <> inline constexpr Expectation expect<wrt>{"expected what to differentiate with respect to after '/': d(INPUT, ...) or dINPUT"};
template <> inline constexpr Expectation expect<first_wrt>{"expected an input name after 'd('"};
template <> inline constexpr Expectation expect<next_wrt>{"expected an input name after ','"};
template <> inline constexpr Expectation expect<close_wrt>{"expected ',' or ')' after the input names"};
template <> inline constexpr Expectation expect<kernel_end>{"expected ';' to end the kernel declaration", Place::AfterPrevious, true};
template <> inline constexpr Expectation expect<frame_name>{"expected a frame (link) name after 'weld' or 'contact'"};
template <> inline constexpr Expectation expect<first_direction>{"expected a direction (rx, ry, rz, x, y or z) after ':'"};
template <> inline constexpr Expectation expect<next_direction>{"expected a direction (rx, ry, rz, x, y or z) after ','"};
template <> inline constexpr Expectation expect<partner_name>{"expected the frame (link) name to weld to after 'to'"};
template <> inline constexpr Expectation expect<hold_end>{"expected ';' to end the declaration (or ':' and the directions held)", Place::AfterPrevious, true};
template <> inline constexpr Expectation expect<grasp_frame>{"expected a frame (link) name after 'grasp'"};
template <> inline constexpr Expectation expect<grasp_to>{"expected 'to' and the frame grasped"};
template <> inline constexpr Expectation expect<grasp_partner>{"expected the frame (link) name to grasp after 'to'"};
template <> inline constexpr Expectation expect<grasp_end>{"expected ';' to end the grasp declaration", Place::AfterPrevious, true};
template <> inline constexpr Expectation expect<grasp_colon>{"expected ':' and the grasp's stiffness and damping"};
template <> inline constexpr Expectation expect<kw_stiffness>{"expected 'stiffness KT KR' (N/m, N m/rad)"};
template <> inline constexpr Expectation expect<grasp_constant>{"expected a number (not negative: KT KR after 'stiffness', DT DR after 'damping')"};
template <> inline constexpr Expectation expect<grasp_comma>{"expected ',' and 'damping DT DR' after the stiffness"};
template <> inline constexpr Expectation expect<kw_damping>{"expected 'damping DT DR' (N s/m, N m s/rad)"};
template <> inline constexpr Expectation expect<declaration>{"expected a declaration ('let', 'identity', 'kernel', 'weld', 'contact' or 'grasp')"};
// clang-format on

// What a failed must<> throws: where the input stood and what was expected there. The
// conversion to a message with a location needs the Source, so it happens in parse.cpp.
struct SyntaxError {
  std::size_t offset;
  Expectation expected;
};

template <typename Rule>
struct control : p::normal<Rule> {
  template <typename Input, typename... States>
  [[noreturn]] static void raise(const Input& in, States&&... /*unused*/) {
    static_assert(expect<Rule>.message != nullptr, "every must<> target needs a message in expect<>");
    throw SyntaxError{static_cast<std::size_t>(in.current() - in.begin()), expect<Rule>};
  }
};

}  // namespace soa::syntax::grammar
