// The message of the salasim::Error a call throws, for tests that check what an error says.
#pragma once
#include <functional>
#include <string>

#include "model/error.hpp"

namespace salasim::test {

// e.what() of the salasim::Error that f() throws, or "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace salasim::test
