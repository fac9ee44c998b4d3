// The exec: and py: backends of scenarios/op_user.hpp (lib: is in op_lib.cpp): a child process per case, reading
// an input file salasim writes and writing an output file salasim reads.
#include "scenarios/op_user.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "compare/h5_inputs.hpp"
#include "compare/op_output.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/output_file.hpp"
#include "scenarios/op_lib.hpp"

extern char** environ;

namespace salasim {

namespace fs = std::filesystem;

namespace {

constexpr int kSkipStatus = 77;  // automake's "skipped", which ctest also knows

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct Status {
  bool exited = false;
  int code = 0;    // exit status when exited
  int signal = 0;  // the signal that ended it otherwise
};

// Runs `command` through /bin/sh with stdout and stderr into `log`, SALASIM_OP=`op` added to the environment.
Status run_shell(const std::string& command, const std::string& op, const std::string& log) {
  // Everything the child needs is made before fork: between fork and exec only async-signal-safe calls.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "SALASIM_OP=", 11) != 0) env_text.emplace_back(*e);
  env_text.push_back("SALASIM_OP=" + op);
  std::vector<char*> envp;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string sh = "/bin/sh", dash_c = "-c", cmd = command;
  char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) fail("{}: cannot create the log of the implementation's run: {}", log, std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    ::close(fd);
    fail("cannot start a process for the implementation: fork: {}", std::strerror(errno));
  }
  if (pid == 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  ::close(fd);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) fail("cannot wait for the implementation's process: {}", std::strerror(errno));
  Status s;
  if (WIFEXITED(st)) s.exited = true, s.code = WEXITSTATUS(st);
  else if (WIFSIGNALED(st)) s.signal = WTERMSIG(st);
  return s;
}

// The last `lines` lines of what the implementation printed, indented for a case's report.
std::string tail(const std::string& log, size_t lines = 20) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) all.push_back(l.size() > 300 ? l.substr(0, 300) + "..." : l);
  std::string t;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) t += "\n        " + all[i];
  return t;
}

std::string last_line(const std::string& log) {
  std::ifstream in(log);
  std::string last;
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) last = l;
  return last;
}

// A folder for the files of the cases, removed at the end (and on SIGINT, SIGTERM, ...: model/output_file.hpp).
// Numbered, so that two backends alive in one process (a test's) never share one.
std::shared_ptr<ScratchFolder> scratch(const std::string& kind) {
  static std::atomic<int> made{0};
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  return std::make_shared<ScratchFolder>((base / fmt::format("salasim-op-{}-{}", kind, made++)).string());
}

// One case through a program: writes the inputs, runs `command --in X --out Y`, reads what it wrote. `who` names the
// implementation in messages; `spec_error` turns an exit status into a stop of the run (exit 2), or "".
OpRun run_program(const std::string& command, const std::string& who, const op::OpInputs& x0, const ScratchFolder& dir,
                  int& counter, const std::function<std::string(const Status&, const std::string& log)>& spec_error) {
  const op::OpInputs x = op::as_gpu_stores(x0);
  const int n = counter++;
  const std::string in = (fs::path(dir.path()) / fmt::format("in_{}.h5", n)).string();
  const std::string out = (fs::path(dir.path()) / fmt::format("out_{}.h5", n)).string();
  const std::string log = (fs::path(dir.path()) / fmt::format("log_{}.txt", n)).string();
  write_input_file(in, op::input_file(x), true, "");
  const Status s = run_shell(command + " --in " + quote(in) + " --out " + quote(out), x.spec->name, log);
  OpRun r;
  std::error_code ec;
  if (const std::string bad = spec_error(s, log); !bad.empty()) fail("{}", bad);
  if (!s.exited) {
    r.failed = fmt::format("{} was killed by signal {} ({}){}", who, s.signal, strsignal(s.signal), tail(log));
  } else if (s.code == kSkipStatus) {
    const std::string why = last_line(log);
    r.skip = fmt::format("{}: {}", who, why.empty() ? "skipped the case (exit 77)" : why);
  } else if (s.code > 128 && s.code < 128 + NSIG) {  // the shell's report of a program a signal ended
    r.failed = fmt::format("{} exited {}: killed by signal {} ({}){}", who, s.code, s.code - 128,
                           strsignal(s.code - 128), tail(log));
  } else if (s.code != 0) {
    r.failed = fmt::format("{} exited {}{}", who, s.code, tail(log));
  } else if (!fs::exists(out, ec)) {
    r.failed = fmt::format("{} exited 0 without writing --out {}{}", who, out, tail(log));
  } else {
    try {
      OpOutputs o = read_op_outputs(*x.spec, out);
      r.taps = std::move(o.taps);
      r.not_produced = std::move(o.absent);
    } catch (const InternalError&) {
      throw;
    } catch (const Error& e) {
      r.failed = fmt::format("{} wrote outputs salasim cannot take: {}", who, e.what());
    }
  }
  for (const std::string& f : {in, out, log}) fs::remove(f, ec);
  return r;
}

std::string shell_could_not_run(const std::string& spec, const Status& s, const std::string& log) {
  if (s.exited && (s.code == 126 || s.code == 127))
    return fmt::format("--backend {}: the shell could not run the program (exit {}: {}){}", spec, s.code,
                       s.code == 127 ? "not found" : "not executable", tail(log, 5));
  return "";
}

OpBackend exec_backend(const std::string& spec) {
  const std::string command = spec.substr(5);
  if (command.find_first_not_of(" \t") == std::string::npos)
    fail("--backend '{}': expected exec:'PROGRAM ARGS', a command the shell runs", spec);
  auto dir = scratch("exec");
  auto counter = std::make_shared<int>(0);
  return [spec, command, dir, counter](const op::OpInputs& x) {
    return run_program(command, "exec:" + command, x, *dir, *counter,
                       [&](const Status& s, const std::string& log) { return shell_could_not_run(spec, s, log); });
  };
}

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool is_file_module(const std::string& module) {
  return module.find('/') != std::string::npos ||
         (module.size() > 3 && module.compare(module.size() - 3, 3, ".py") == 0);
}

OpBackend py_backend(const std::string& spec, const UserOptions& o) {
  const std::string call = spec.substr(3);
  const size_t colon = call.rfind(':');
  const std::string module = colon == std::string::npos ? call : call.substr(0, colon);
  const std::string function = colon == std::string::npos ? "" : call.substr(colon + 1);
  if (module.empty() || (colon != std::string::npos && !is_identifier(function)))
    fail(
        "--backend '{}': expected py:MODULE:FUNCTION (a module name or a .py file, and a function of it) or "
        "py:MODULE (the module's function named after the op)",
        spec);
  if (is_file_module(module) && !fs::is_regular_file(module))
    fail("--backend '{}': {} is not a file (a module given as a path must be a .py file)", spec, module);
  const std::string python = find_python(o.python, is_file_module(module) ? "" : module);
  auto dir = scratch("py");
  const std::string driver = (fs::path(dir->path()) / "op_driver.py").string();
  write_file_atomic(driver, op_driver_source(), true);
  auto counter = std::make_shared<int>(0);
  return [spec, call, python, driver, dir, counter](const op::OpInputs& x) {
    std::string taps;
    for (const op::OutputSpec& out : x.spec->outputs) taps += (taps.empty() ? "" : ",") + out.tap;
    const std::string command = fmt::format("{} {} --call {} --op {} --outputs {}", quote(python), quote(driver),
                                            quote(call), x.spec->name, quote(taps));
    return run_program(command, spec, x, *dir, *counter, [&](const Status& s, const std::string& log) {
      if (s.exited && s.code == 2)
        return fmt::format("--backend {}: the driver cannot call it:{}", spec, tail(log, 12));
      return shell_could_not_run(spec, s, log);
    });
  };
}

std::string capture(const std::string& command, bool* ok) {
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) {
    *ok = false;
    return "";
  }
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) && out.size() < 4096) out += buf;
  *ok = pclose(p) == 0;
  return out;
}

}  // namespace

bool is_user_spec(const std::string& b) {
  return b.rfind("exec:", 0) == 0 || b.rfind("py:", 0) == 0 || b.rfind("lib:", 0) == 0;
}

std::string find_python(const std::string& given, const std::string& module) {
  const std::string imports = module.empty() ? "h5py, numpy" : "h5py, numpy, " + module;
  const std::string code = "import sys; sys.path.insert(0, ''); import " + imports;
  std::vector<std::string> candidates =
      given.empty() ? std::vector<std::string>{"python3", "/usr/bin/python3"} : std::vector<std::string>{given};
  std::string tried;
  for (const std::string& py : candidates) {
    bool ok = false;
    const std::string out = capture(quote(py) + " -c " + quote(code), &ok);
    if (ok) return py;
    std::string last = out.substr(0, out.find_last_not_of('\n') + 1);
    last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", py, last.empty() ? "cannot be run" : last);
  }
  fail("py: needs a Python that imports {} ({}){}", imports, tried,
       given.empty() ? "; name one with --python PATH" : "");
}

std::string py_signature(const op::OpSpec& s) {
  std::vector<std::string> args, optional, outs;
  for (const op::InputSpec& i : s.inputs) (i.optional ? optional : args).push_back(i.name);
  for (const op::AttrSpec& a : s.attrs) args.push_back(a.name);
  for (const std::string& o : optional) args.push_back(o + "=None");
  for (const op::OutputSpec& o : s.outputs) outs.push_back(op::output_name(o));
  return fmt::format("{}({}) -> {}", s.name, fmt::join(args, ", "), fmt::join(outs, ", "));
}

OpBackend user_backend(const std::string& spec, const UserOptions& o) {
  if (spec.rfind("exec:", 0) == 0) return exec_backend(spec);
  if (spec.rfind("py:", 0) == 0) return py_backend(spec, o);
  if (spec.rfind("lib:", 0) == 0) return lib_backend(spec);
  fail("--backend '{}': expected exec:'PROGRAM ARGS', py:MODULE[:FUNCTION] or lib:PATH.so", spec);
}

}  // namespace salasim
