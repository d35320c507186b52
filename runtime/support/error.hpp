// Error kinds shared by every stage.
//
// Three kinds, as in TACO and Halide: the user's mistakes (bad DSL text, a bad URDF, a bad
// option, a singular model) carry the place they were found and become one-line messages
// with a non-zero exit; broken internal invariants are bugs; NotImplemented marks a
// deliberate gap. Nothing else is thrown across library boundaries.
#pragma once

#include <stdexcept>
#include <string>

namespace soa {

// A mistake in what the user gave us. `what()` is the complete one-line message, already
// prefixed with the place (file:line:col, file: link 'x', ...). `detail` may hold extra
// lines (a source line with a caret) printed after it. Control characters in the message
// (a URDF name may hold a newline) are written as escapes (\n, \x01), so that it stays one
// line whatever the input quoted in it.
class UserError : public std::runtime_error {
public:
  explicit UserError(const std::string& message, std::string detail = {});
  const std::string& detail() const { return detail_; }

private:
  std::string detail_;
};

// A broken invariant inside soac: always a bug in soac, never the user's fault.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

class NotImplemented : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void internal_error(const char* file, int line, const std::string& message);

}  // namespace soa

#define SOA_ASSERT(cond, msg)                                                 \
  do {                                                                        \
    if (!(cond)) ::soa::internal_error(__FILE__, __LINE__, std::string(msg)); \
  } while (0)
