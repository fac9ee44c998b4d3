// safetensors written tensor by tensor (see safetensors_writer.hpp).
#include "model/safetensors_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "model/error.hpp"
#include "model/output_file.hpp"
#include "model/shape.hpp"

namespace salasim {

uint64_t write_safetensors_streamed(const std::string& path, const std::vector<StPlanned>& tensors, const StFill& fill,
                                    size_t piece_bytes) {
  nlohmann::json h = nlohmann::json::object();
  uint64_t off = 0;
  for (const StPlanned& t : tensors) {
    const uint64_t bytes = uint64_t(shape_numel(t.shape)) * dtype_size(t.dtype);
    h[t.name] = {{"dtype", std::string(dtype_name(t.dtype))}, {"shape", t.shape}, {"data_offsets", {off, off + bytes}}};
    off += bytes;
  }
  std::string hs = h.dump();
  while (hs.size() % 8) hs.push_back(' ');  // keep the data section 8-byte aligned
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("{}: cannot create it: {}", path, std::strerror(errno));
  auto put = [&](const void* p, size_t n) {
    if (!write_all(fd, static_cast<const char*>(p), n)) {
      const int e = errno;
      ::close(fd);
      fail("{}: write failed: {}", path, std::strerror(e));
    }
  };
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = uint8_t((uint64_t(hs.size()) >> (8 * i)) & 0xff);
  put(len, 8);
  put(hs.data(), hs.size());
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const StPlanned& t = tensors[i];
    const int64_t rows = t.shape.empty() ? 1 : t.shape[0];
    const uint64_t total = uint64_t(shape_numel(t.shape)) * dtype_size(t.dtype);
    if (rows == 0 || total == 0) continue;
    const uint64_t row_bytes = total / uint64_t(rows);
    const int64_t per = std::max<int64_t>(1, int64_t(piece_bytes / std::max<uint64_t>(row_bytes, 1)));
    for (int64_t r = 0; r < rows; r += per) {
      const int64_t n = std::min(per, rows - r);
      buf.resize(size_t(uint64_t(n) * row_bytes));
      fill(i, r, n, buf.data());
      put(buf.data(), buf.size());
    }
  }
  if (::close(fd) != 0) fail("{}: close failed: {}", path, std::strerror(errno));
  return off;
}

}  // namespace salasim
