// safetensors checkpoints: a memory-mapped reader (single file or sharded folder) with full header
// validation, and a writer (used by tests to build small checkpoints).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/dtype.hpp"

namespace salasim {

struct StTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the mapping; valid while the file is open
  uint64_t nbytes = 0;
  std::string file;

  int64_t numel() const;
  int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  int64_t row_elems() const;  // elements per leading-dim row
};

// One .safetensors file, mapped read-only. Throws salasim::Error on any malformed header.
class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, StTensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  std::string path_;
  void* map_ = nullptr;
  uint64_t size_ = 0;
  std::map<std::string, StTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

// A checkpoint: a folder holding model.safetensors.index.json + shards, or model.safetensors,
// or a path to one .safetensors file.
class Checkpoint {
 public:
  explicit Checkpoint(const std::string& path);

  const std::string& path() const { return path_; }
  bool sharded() const { return sharded_; }
  std::vector<const StTensor*> tensors() const;  // sorted by name
  const StTensor* find(const std::string& name) const;
  const StTensor& at(const std::string& name) const;  // throws naming the checkpoint

 private:
  std::string path_;
  bool sharded_ = false;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const StTensor*> index_;
};

// Rows [row0, row0 + nrows) of a tensor, converted to float / double. Works for BF16, F16, F32, F64.
void read_rows(const StTensor& t, int64_t row0, int64_t nrows, float* out);
void read_rows(const StTensor& t, int64_t row0, int64_t nrows, double* out);

float half_to_float(uint16_t h);

struct StWrite {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // numel * dtype_size bytes, little-endian
};
void write_safetensors(const std::string& path, const std::vector<StWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});
// Shards plus model.safetensors.index.json in dir; shard_of[i] picks the shard (0-based) of tensors[i].
void write_sharded_checkpoint(const std::string& dir, const std::vector<StWrite>& tensors,
                              const std::vector<int>& shard_of);

}  // namespace salasim
