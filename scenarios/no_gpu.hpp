// Why there is no usable GPU, in words a user can act on. The CUDA runtime answers a machine without any NVIDIA
// driver with "CUDA driver version is insufficient for CUDA runtime version", which reads as "upgrade your
// driver"; what the operating system shows says which case it is. Header-only and free of CUDA, so the CLI, the
// backends and the test main share it.
#pragma once
#include <filesystem>
#include <fstream>
#include <string>

namespace salasim {

// The loaded NVIDIA kernel driver's version ("580.159.04"), or "" when none is loaded. Linux publishes it in
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX ... Kernel Module  580.159.04  ...").
inline std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  const size_t at = line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::string word;
  for (size_t i = at + 13; i <= line.size(); ++i) {
    const char c = i < line.size() ? line[i] : ' ';
    if (c != ' ' && c != '\t') {
      word += c;
      continue;
    }
    if (!word.empty() && word[0] >= '0' && word[0] <= '9' && word.find('.') != std::string::npos) return word;
    word.clear();
  }
  return "";
}

// `cuda_reason` (what the CUDA runtime said) in plain words: no NVIDIA driver at all, a driver without devices, or a
// driver older than this build's CUDA runtime needs.
inline std::string plain_no_gpu_reason(const std::string& cuda_reason) {
  const std::string driver = nvidia_driver_version();
  std::error_code ec;
  if (driver.empty() && !std::filesystem::exists("/dev/nvidia0", ec))
    return "this machine has no NVIDIA GPU (no NVIDIA driver is loaded and there is no /dev/nvidia0)";
  if (cuda_reason.find("insufficient") != std::string::npos)
    return "the NVIDIA driver" + (driver.empty() ? std::string() : " " + driver) +
           " is older than this build's CUDA runtime needs (" + cuda_reason +
           "): update the driver, or build with "
           "the CUDA toolkit that matches it";
  return cuda_reason + (driver.empty() ? "" : " (NVIDIA driver " + driver + ")");
}

}  // namespace salasim
