// One worker process per GPU, and the merge of their shard files (launch.hpp).
#include "scenarios/ruler/launch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <set>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/file_lock.hpp"
#include "model/output_file.hpp"
#include "reports/context.hpp"
#include "scenarios/ruler/generator.hpp"
#include "scenarios/ruler/lines.hpp"
#include "scenarios/ruler/results_file.hpp"
#include "scenarios/ruler/run.hpp"

namespace salasim::ruler {

std::vector<std::string> gpu_devices(const std::string& option) {
  std::vector<std::string> ids;
  if (option == "all") {
    if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
      for (const std::string& e : reports::split_list(v)) {
        if (e.empty() || e.size() > 64)
          fail("--gpus all: CUDA_VISIBLE_DEVICES '{}' has an empty or overlong entry", excerpt(v));
        ids.push_back(e);
      }
    } else {
      std::string why;
      const int n = visible_gpus(&why);
      if (n == 0) fail("--gpus all: no GPU ({})", why);
      for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
    }
    if (int(ids.size()) > kMaxGpuWorkers)
      fail("--gpus all: {} devices, more than the {} workers one host runs", ids.size(), kMaxGpuWorkers);
    return ids;
  }
  int n = 0;
  const auto [end, ec] = std::from_chars(option.data(), option.data() + option.size(), n);
  if (option.empty() || ec != std::errc() || end != option.data() + option.size() || n < 1 || n > kMaxGpuWorkers)
    fail("--gpus '{}': expected all or a whole number of GPUs in [1, {}]", excerpt(option), kMaxGpuWorkers);
  for (int i = 0; i < n; ++i) ids.push_back(std::to_string(i));
  return ids;
}

std::vector<std::string> worker_args(const std::vector<std::string>& argv, int k, int n, const std::string& out,
                                     bool resume) {
  std::vector<std::string> v;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    if (i > 0 && s == "--gpus") {
      ++i;  // and its value
      continue;
    }
    if (i > 0 && s.rfind("--gpus=", 0) == 0) continue;
    v.push_back(s);
  }
  v.push_back(fmt::format("--shard={}/{}", k, n));
  if (resume) v.push_back("--also-done=" + out);
  return v;
}

std::vector<int> run_workers(const std::string& exe, const std::vector<std::vector<std::string>>& args,
                             const std::vector<std::string>& devices) {
  if (args.size() != devices.size())
    internal_fail("run_workers: {} command lines for {} devices", args.size(), devices.size());
  std::vector<pid_t> pids;
  std::vector<int> codes(args.size(), 127);
  for (size_t k = 0; k < args.size(); ++k) {
    // everything the child needs is built before fork: after it, only exec-safe calls
    std::vector<char*> cargs;
    for (const std::string& s : args[k]) cargs.push_back(const_cast<char*>(s.c_str()));
    cargs.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      for (pid_t p : pids) ::kill(p, SIGTERM);  // do not leave half a launch running
      for (pid_t p : pids) ::waitpid(p, nullptr, 0);
      fail("--gpus: cannot start worker {}: fork failed: {}", k, std::strerror(e));
    }
    if (pid == 0) {
      ::setenv("CUDA_VISIBLE_DEVICES", devices[k].c_str(), 1);
      ::execv(exe.c_str(), cargs.data());
      ::_exit(127);
    }
    pids.push_back(pid);
  }
  for (size_t k = 0; k < pids.size(); ++k) {
    int st = 0;
    pid_t r = 0;
    do r = ::waitpid(pids[k], &st, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0) codes[k] = 3;
    else if (WIFEXITED(st)) codes[k] = WEXITSTATUS(st);
    else if (WIFSIGNALED(st)) codes[k] = 128 + WTERMSIG(st);
    else codes[k] = 3;
  }
  return codes;
}

MergeSummary merge_shards(const std::string& out, int n) {
  MergeSummary m;
  std::string text;
  std::set<std::string> ids, out_ids;
  {  // --out's own results first
    struct stat st;
    if (::lstat(out.c_str(), &st) == 0) {
      int64_t size = 0;
      const int fd = open_regular_file(out, "--out " + out, &size);
      std::vector<std::string> lines;
      try {
        const ResultsScan s = scan_results(fd, out, &lines);
        ::close(fd);
        for (size_t i = 0; i < lines.size(); ++i)
          text += lines[i] + "\n", ids.insert(s.ids[i]), out_ids.insert(s.ids[i]);
      } catch (...) {
        ::close(fd);
        throw;
      }
      m.kept = int64_t(lines.size());
    }
  }
  std::vector<LockedFile> shards;  // held until the merged file is in place and they are removed
  for (int k = 0; k < n; ++k) {
    const std::string p = shard_path(out, Shard{k, n, "--gpus"});
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    const std::string what = fmt::format("shard file {}", p);
    if (!S_ISREG(st.st_mode)) fail("{}: is not a regular file; nothing was merged", what);
    shards.emplace_back(p, O_RDONLY | O_NOFOLLOW, 0, what, " (a worker is still writing it): nothing was merged");
    std::vector<std::string> lines;
    const ResultsScan s = scan_results(shards.back().fd(), p, &lines);
    if (s.torn_tail)
      fail(
          "{}: its last line is unterminated (the worker was stopped while writing it); `--resume` redoes it: nothing "
          "was merged",
          what);
    for (size_t i = 0; i < lines.size(); ++i) {
      if (out_ids.count(s.ids[i])) {  // merged before, by a merge that stopped before removing the shards
        ++m.already;
        continue;
      }
      if (!ids.insert(s.ids[i]).second)
        fail("{}: sample {} is also in another shard; nothing was merged (shards of one run hold each sample once)",
             what, excerpt(s.ids[i]));
      text += lines[i] + "\n";
      ++m.merged;
    }
  }
  write_file_atomic(out, text, true, "--out");
  for (const LockedFile& f : shards)
    if (f.path_is_ours() && ::unlink(f.path().c_str()) != 0)
      fail("shard file {}: merged into {}, but cannot remove it: {} (remove it by hand)", f.path(), out,
           std::strerror(errno));
  return m;
}

}  // namespace salasim::ruler
