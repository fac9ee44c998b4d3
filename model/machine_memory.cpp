// The memory this process may use: physical RAM, the cgroup limit, the address-space limit (machine_memory.hpp).
#include "model/machine_memory.hpp"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

#include "model/error.hpp"

namespace salasim {

namespace {

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  std::string text;
  char buf[4096];
  while (in && text.size() < (size_t(1) << 20)) {  // these files are a few kB; never read a huge one whole
    in.read(buf, sizeof buf);
    text.append(buf, size_t(in.gcount()));
  }
  return text;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

bool parse_int64(const std::string& s, int64_t* v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && end == s.data() + s.size();
}

// Where the memory controller is mounted: (mount point, the cgroup path that is the mount's root). From
// /proc/self/mountinfo: "id parent dev root mountpoint options ... - fstype source superoptions".
bool memory_mount(bool v2, std::string* mount_point, std::string* root) {
  std::istringstream in(read_small_file("/proc/self/mountinfo"));
  for (std::string line; std::getline(in, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    const std::vector<std::string> pre = split(line.substr(0, dash), ' ');
    const std::vector<std::string> post = split(line.substr(dash + 3), ' ');
    if (pre.size() < 5 || post.size() < 3) continue;
    const bool match =
        v2 ? post[0] == "cgroup2" : post[0] == "cgroup" && ("," + post[2] + ",").find(",memory,") != std::string::npos;
    if (!match) continue;
    *root = pre[3];
    *mount_point = pre[4];
    return true;
  }
  return false;
}

// The smallest limit from the process's cgroup up to the mount's root: a parent's limit binds its children too.
int64_t cgroup_limit() {
  bool v2 = false;
  const std::string path = parse_cgroup_path(read_small_file("/proc/self/cgroup"), &v2);
  if (path.empty()) return -1;
  std::string mount, root;
  if (!memory_mount(v2, &mount, &root)) return -1;
  std::string rel = path;
  if (root != "/" && rel.rfind(root, 0) == 0) rel = rel.substr(root.size());
  const char* file = v2 ? "memory.max" : "memory.limit_in_bytes";
  int64_t best = -1;
  for (;;) {
    const int64_t v = parse_cgroup_limit(read_small_file(mount + (rel == "/" ? "" : rel) + "/" + file));
    if (v > 0 && (best < 0 || v < best)) best = v;
    if (rel.empty() || rel == "/") break;
    const size_t slash = rel.rfind('/');
    rel = slash == 0 || slash == std::string::npos ? "/" : rel.substr(0, slash);
  }
  return best;
}

int64_t address_space_left() {
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1;
  const int64_t limit = rl.rlim_cur > uint64_t(INT64_MAX) ? INT64_MAX : int64_t(rl.rlim_cur);
  const int64_t used = std::max<int64_t>(0, parse_vm_size(read_small_file("/proc/self/status")));
  return std::max<int64_t>(0, limit - used);
}

}  // namespace

int64_t parse_cgroup_limit(const std::string& text) {
  std::string s = text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  int64_t v = 0;
  if (s.empty() || s == "max" || !parse_int64(s, &v) || v <= 0) return -1;
  if (v >= (int64_t(1) << 62)) return -1;  // v1 writes "no limit" as 9223372036854771712
  return v;
}

std::string parse_cgroup_path(const std::string& proc_self_cgroup, bool* v2) {
  std::string unified;
  std::istringstream in(proc_self_cgroup);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (("," + controllers + ",").find(",memory,") != std::string::npos) {
      *v2 = false;
      return path;
    }
    if (line.rfind("0::", 0) == 0) unified = path;
  }
  *v2 = !unified.empty();
  return unified;
}

int64_t parse_vm_size(const std::string& status) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmSize:", 0) != 0) continue;
    std::istringstream f(line.substr(7));
    int64_t kb = -1;
    if (!(f >> kb) || kb < 0 || kb > INT64_MAX / 1024) return -1;
    return kb * 1024;
  }
  return -1;
}

MachineMemory machine_memory() {
  MachineMemory m;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) m.physical = int64_t(pages) * int64_t(page);
  m.cgroup = cgroup_limit();
  m.address_space = address_space_left();
  auto consider = [&](int64_t v, const char* why) {
    if (v >= 0 && (m.usable < 0 || v < m.usable)) m.usable = v, m.limited_by = why;
  };
  consider(m.physical, "physical memory");
  consider(m.cgroup, "cgroup memory limit");
  consider(m.address_space, "address-space limit (ulimit -v) less what is mapped");
  return m;
}

void check_fits_in_memory(double need, const std::string& what, const std::string& advice, double fraction) {
  const MachineMemory m = machine_memory();
  if (m.usable < 0 || need <= fraction * double(m.usable)) return;
  const double gib = double(int64_t(1) << 30);
  fail("{} needs about {:.2f} GiB, and this process may use {:.2f} GiB ({}); at most {:.0f}% of it is planned{}{}",
       what, need / gib, double(m.usable) / gib, m.limited_by, fraction * 100, advice.empty() ? "" : ": ", advice);
}

}  // namespace salasim
