// Runs the salasim binary the way a user does and captures what it prints and its exit code.
#pragma once
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace salasim::test {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// A shell command line run to its end: its output as it redirects it, and its exit code (-1 where it did not exit).
inline CliResult run_command(const std::string& cmd) {
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// args: everything after "salasim", already shell-quoted where needed.
inline CliResult run_salasim(const std::string& args) {
  return run_command(std::string(SALASIM_BIN) + " " + args + " 2>&1");
}

}  // namespace salasim::test
