// How much memory this process may use, for the "fits in 80% of this machine's memory" checks made before a large
// allocation (the float64 reference of `salasim ruler run`, `salasim ruler generate`). The machine's physical
// memory is not the whole answer: a container's cgroup (v1 memory.limit_in_bytes, v2 memory.max, the smallest
// along the cgroup's path) or an address-space limit (RLIMIT_AS, `ulimit -v`) can be far smaller, and a run that
// trusted the physical size died in std::bad_alloc (exit 3) instead of being refused with the numbers (exit 2).
#pragma once
#include <cstdint>
#include <string>

namespace salasim {

struct MachineMemory {
  int64_t physical = -1;       // bytes of RAM (sysconf), -1 when unknown
  int64_t cgroup = -1;         // the smallest cgroup memory limit on this process's path, -1 when none
  int64_t address_space = -1;  // RLIMIT_AS minus the address space already mapped (VmSize), -1 when unlimited
  int64_t usable = -1;         // the smallest of the three that is known; -1 when none is
  std::string limited_by;      // "physical memory", "cgroup memory limit", "address-space limit (ulimit -v)"
};

// Reads /proc/self/cgroup, /proc/self/mountinfo, the cgroup limit files, getrlimit and /proc/self/status.
MachineMemory machine_memory();

// Refuses (salasim::Error, exit 2) `need` bytes past `fraction` of machine_memory().usable, naming `what` and the
// limit that binds ("... needs about 5.10 GiB, and this process may use 6.00 GiB (address-space limit (ulimit -v));
// at most 80% of it is planned"). `advice` ends the message. Nothing is checked when no limit can be read.
void check_fits_in_memory(double need, const std::string& what, const std::string& advice, double fraction = 0.8);

// ---- the parsers, exposed for the tests ----
// A cgroup limit file's text: "max" (v2) or a number of bytes; v1's "unlimited" (a value >= 2^62) is -1, as is
// anything unreadable.
int64_t parse_cgroup_limit(const std::string& text);
// The memory cgroup's path in /proc/self/cgroup's text: v1's "N:...memory...:/path" line, else v2's "0::/path".
// `v2` says which was found. "" when neither.
std::string parse_cgroup_path(const std::string& proc_self_cgroup, bool* v2);
// "VmSize:  N kB" of /proc/self/status in bytes, -1 when absent.
int64_t parse_vm_size(const std::string& proc_self_status);

}  // namespace salasim
