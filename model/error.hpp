// The errors that reach the user, and the exit code each one means (docs/input-limits.md):
//   0 ok, 1 a check failed, 2 bad input (Error: the message names the file, the field and what was expected),
//   3 an internal or device error (InternalError: a bug; DeviceError: a CUDA or cuBLAS call failed).
// DeviceError and InternalError derive from Error so that code which stops cleanly on any salasim error (teardown,
// a golden that cannot be read) still sees them; exit_code() tells them apart.
#pragma once
#include <fmt/format.h>

#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace salasim {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct InternalError : Error {
  using Error::Error;
};

struct DeviceError : Error {
  using Error::Error;
};

// The documented exit codes.
constexpr int kExitOk = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> f, Args&&... args) {
  throw Error(fmt::format(f, std::forward<Args>(args)...));
}

// A broken invariant of salasim itself (not of its input): "internal error", exit 3.
template <class... Args>
[[noreturn]] void internal_fail(fmt::format_string<Args...> f, Args&&... args) {
  throw InternalError(fmt::format(f, std::forward<Args>(args)...));
}

// What the salasim command prints and returns for an exception that ends a subcommand. A filesystem error names
// the user's path (an unwritable output folder, a missing disk), so it is bad input like Error.
struct ExitReport {
  int code = kExitInternal;
  std::string message;  // "salasim: error: ..." / "salasim: internal error: ..." / "salasim: device error: ..."
};

inline ExitReport exit_report(const std::exception& e) {
  if (dynamic_cast<const DeviceError*>(&e)) return {kExitInternal, std::string("salasim: device error: ") + e.what()};
  if (dynamic_cast<const InternalError*>(&e)) return {kExitInternal, std::string("salasim: internal error: ") + e.what()};
  if (dynamic_cast<const Error*>(&e)) return {kExitBadInput, std::string("salasim: error: ") + e.what()};
  if (auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e))
    return {kExitBadInput, std::string("salasim: error: ") + fe->what()};
  if (dynamic_cast<const std::bad_alloc*>(&e))
    return {kExitInternal, "salasim: internal error: out of memory (std::bad_alloc): an input that passed the size "
                           "checks still needed more memory than this machine has"};
  return {kExitInternal, std::string("salasim: internal error: ") + e.what()};
}

}  // namespace salasim
