#include "support/error.hpp"

namespace soa {

void internal_error(const char* file, int line, const std::string& message) {
  throw InternalError(std::string("internal error at ") + file + ":" + std::to_string(line) +
                      ": " + message);
}

}  // namespace soa
