// safetensors reader/writer. Format: u64 little-endian header length N, N bytes of JSON
// {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {...}}, then the data section.
#include "model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/bf16.hpp"
#include "model/checked.hpp"
#include "model/error.hpp"
#include "model/output_file.hpp"
#include "model/json_field.hpp"
#include "model/shape.hpp"
#include "model/limits.hpp"

namespace fs = std::filesystem;

namespace salasim {

int64_t StTensor::numel() const { return shape_numel(shape); }

int64_t StTensor::row_elems() const { return shape_numel(shape, 1); }

namespace {

// The safetensors format allows 100 MB of header; like every JSON input here it is read only up to kJsonMaxBytes
// (a real checkpoint's header is ~100 kB).
constexpr uint64_t kMaxHeader = uint64_t(kJsonMaxBytes);

StTensor parse_entry(const std::string& path, const std::string& name, const json& v, uint64_t data_len,
                     const uint8_t* data) {
  auto bad = [&](const std::string& what) -> void { fail("{}: tensor '{}': {}", path, excerpt(name), what); };
  if (!v.is_object()) bad("header entry is " + json_type_name(v) + "; expected an object");
  if (!v.contains("dtype") || !v["dtype"].is_string()) bad("field 'dtype' missing or not a string");
  if (!v.contains("shape") || !v["shape"].is_array()) bad("field 'shape' missing or not an array");
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
    bad("field 'data_offsets' missing; expected [begin, end]");
  StTensor t;
  t.name = name;
  t.file = path;
  std::string dt = v["dtype"].get<std::string>();
  auto d = dtype_from_name(dt);
  if (!d)
    bad(fmt::format(
        "unknown dtype '{}'; expected one of BF16, F16, F32, F64, I64, I32, I16, I8, U8, BOOL, F8_E4M3, F8_E5M2",
        excerpt(dt)));
  t.dtype = *d;
  if (v["shape"].size() > 32) bad(fmt::format("field 'shape' has {} dims; expected at most 32", v["shape"].size()));
  for (const json& e : v["shape"]) {
    if (!e.is_number_unsigned() || e.get<uint64_t>() > uint64_t(INT64_MAX))
      bad("field 'shape' must hold non-negative integers");
    t.shape.push_back(e.get<int64_t>());
  }
  // Element count and bytes in 64 bits, before they are compared with the data section.
  const int64_t numel =
      checked_numel(t.shape, fmt::format("{}: tensor '{}': shape {}", path, excerpt(name), excerpt(json(t.shape))));
  const uint64_t want = uint64_t(checked_mul(numel, int64_t(dtype_size(t.dtype)),
                                             fmt::format("{}: tensor '{}': bytes of shape {} in {}", path,
                                                         excerpt(name), excerpt(json(t.shape)), dt)));
  const json& off = v["data_offsets"];
  if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    bad("field 'data_offsets' must hold two non-negative integers");
  uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
  if (b > e) bad(fmt::format("data_offsets [{}, {}] end before they begin", b, e));
  if (e > data_len)
    bad(fmt::format("data_offsets [{}, {}] lie outside the data section of {} bytes (file truncated?)", b, e,
                    data_len));
  if (e - b != want)
    bad(fmt::format("data_offsets span {} bytes but shape {} of {} needs {}", e - b, excerpt(json(t.shape)), dt, want));
  t.data = data + b;
  t.nbytes = e - b;
  return t;
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  require_regular_file(path, "a .safetensors file");     // stat first: opening a device can have effects of its own
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // O_NONBLOCK: a FIFO named as a shard must not hang the open
  if (fd < 0) fail("{}: cannot open safetensors file ({})", path, std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    fail("{}: cannot stat file", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file; expected a .safetensors file", path);
  }
  size_ = uint64_t(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    fail("{}: truncated: {} bytes, shorter than the 8-byte header length", path, size_);
  }
  map_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    fail("{}: mmap failed", path);
  }
  try {
    const uint8_t* base = static_cast<const uint8_t*>(map_);
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | base[i];
    if (n > kMaxHeader || n > size_ - 8)
      fail("{}: bad header length {}: the file has {} bytes after the length field (limit {})", path, n, size_ - 8,
           kMaxHeader);
    json h = parse_json_text(std::string(reinterpret_cast<const char*>(base + 8), n), path + " (header)");
    if (!h.is_object()) fail("{}: header is {}; expected a JSON object", path, json_type_name(h));
    const uint8_t* data = base + 8 + n;
    uint64_t data_len = size_ - 8 - n;
    for (auto it = h.begin(); it != h.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (!it.value().is_object()) fail("{}: '__metadata__' must be an object of strings", path);
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
          if (!m.value().is_string()) fail("{}: '__metadata__.{}' must be a string", path, excerpt(m.key()));
          metadata_[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      tensors_[it.key()] = parse_entry(path, it.key(), it.value(), data_len, data);
    }
    std::vector<const StTensor*> by_offset;
    for (auto& [k, t] : tensors_) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->data < b->data; });
    // Tensors of 0 bytes occupy nothing (one at offset 0 beside another there is legal): only the others can overlap.
    std::erase_if(by_offset, [](const StTensor* t) { return t->nbytes == 0; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const StTensor* a = by_offset[i - 1];
      const StTensor* b = by_offset[i];
      if (b->data < a->data + a->nbytes)
        fail("{}: tensors '{}' and '{}' overlap in the data section", path, excerpt(a->name), excerpt(b->name));
    }
  } catch (...) {
    munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) munmap(map_, size_);
}

Checkpoint::Checkpoint(const std::string& path) : path_(path) {
  fs::path p(path);
  if (!fs::exists(p)) fail("{}: checkpoint path does not exist", path);
  auto add_file = [&](const fs::path& f) -> SafetensorsFile& {
    files_.push_back(std::make_unique<SafetensorsFile>(f.string()));
    return *files_.back();
  };
  if (fs::is_directory(p) && fs::exists(p / "model.safetensors.index.json")) {
    sharded_ = true;
    std::string ipath = (p / "model.safetensors.index.json").string();
    json idx = parse_json_file(ipath);
    if (!idx.is_object() || !idx.contains("weight_map") || !idx["weight_map"].is_object())
      fail("{}: field 'weight_map' missing; expected an object mapping tensor names to shard files", ipath);
    std::map<std::string, SafetensorsFile*> shards;
    for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
      if (!it.value().is_string())
        fail("{}: weight_map entry '{}' must be a file name string", ipath, excerpt(it.key()));
      // A shard is a file of this folder: a name with '/' or '..' would open files anywhere (/etc/passwd).
      const std::string shard = plain_file_name(it.value().get<std::string>(), ipath, "weight_map." + it.key());
      if (!shards.count(shard)) {
        fs::path sp = p / shard;
        if (!fs::exists(sp))
          fail("{}: weight_map names shard '{}' for '{}', but {} does not exist", ipath, shard, excerpt(it.key()),
               sp.string());
        shards[shard] = &add_file(sp);
      }
      auto& ts = shards[shard]->tensors();
      auto t = ts.find(it.key());
      if (t == ts.end())
        fail("{}: weight_map puts '{}' in '{}', but that shard has no such tensor", ipath, excerpt(it.key()), shard);
      index_[it.key()] = &t->second;
    }
    for (auto& [shard, f] : shards)
      for (auto& [name, t] : f->tensors())
        if (!index_.count(name)) index_[name] = &t;  // present in a shard but not indexed: still listed
  } else {
    fs::path f = fs::is_directory(p) ? p / "model.safetensors" : p;
    if (!fs::exists(f)) fail("{}: no model.safetensors.index.json or model.safetensors in this folder", path);
    SafetensorsFile& sf = add_file(f);
    for (auto& [name, t] : sf.tensors()) index_[name] = &t;
  }
}

std::vector<const StTensor*> Checkpoint::tensors() const {
  std::vector<const StTensor*> out;
  for (auto& [k, t] : index_) out.push_back(t);
  return out;
}

const StTensor* Checkpoint::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second;
}

const StTensor& Checkpoint::at(const std::string& name) const {
  const StTensor* t = find(name);
  if (!t) fail("{}: checkpoint has no tensor '{}'", path_, excerpt(name));
  return *t;
}

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float v = std::ldexp(float(man), -24);
    return sign ? -v : v;
  }
  return bits_float(sign | ((exp + 112) << 23) | (man << 13));
}

namespace {
template <class T>
void read_rows_impl(const StTensor& t, int64_t row0, int64_t nrows, T* out) {
  if (row0 < 0 || nrows < 0 || row0 + nrows > t.rows())
    fail("{}: tensor '{}': rows [{}, {}) out of range (it has {})", t.file, t.name, row0, row0 + nrows, t.rows());
  const int64_t n = nrows * t.row_elems();
  const uint8_t* src = t.data + uint64_t(row0 * t.row_elems()) * dtype_size(t.dtype);
  switch (t.dtype) {
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        out[i] = T(float_from_bf16(b));
      }
      break;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t b;
        std::memcpy(&b, src + 2 * i, 2);
        out[i] = T(half_to_float(b));
      }
      break;
    case DType::F32:
      for (int64_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, src + 4 * i, 4);
        out[i] = T(f);
      }
      break;
    case DType::F64:
      for (int64_t i = 0; i < n; ++i) {
        double f;
        std::memcpy(&f, src + 8 * i, 8);
        out[i] = T(f);
      }
      break;
    default:
      fail("{}: tensor '{}' has dtype {}; only BF16, F16, F32 and F64 can be read as weights", t.file, t.name,
           dtype_name(t.dtype));
  }
}
}  // namespace

void read_rows(const StTensor& t, int64_t row0, int64_t nrows, float* out) { read_rows_impl(t, row0, nrows, out); }
void read_rows(const StTensor& t, int64_t row0, int64_t nrows, double* out) { read_rows_impl(t, row0, nrows, out); }

void write_safetensors(const std::string& path, const std::vector<StWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json h = json::object();
  if (!metadata.empty()) h["__metadata__"] = metadata;
  uint64_t off = 0;
  for (const StWrite& t : tensors) {
    const int64_t numel = shape_numel(t.shape);
    if (uint64_t(numel) * dtype_size(t.dtype) != t.bytes.size())
      fail("write_safetensors: tensor '{}' has {} bytes; shape and dtype need {}", t.name, t.bytes.size(),
           numel * dtype_size(t.dtype));
    h[t.name] = {{"dtype", std::string(dtype_name(t.dtype))},
                 {"shape", t.shape},
                 {"data_offsets", {off, off + t.bytes.size()}}};
    off += t.bytes.size();
  }
  std::string hs = h.dump();
  while (hs.size() % 8) hs.push_back(' ');  // keep the data section 8-byte aligned
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail("{}: cannot create file", path);
  uint64_t n = hs.size();
  for (int i = 0; i < 8; ++i) out.put(char((n >> (8 * i)) & 0xff));
  out.write(hs.data(), std::streamsize(hs.size()));
  for (const StWrite& t : tensors)
    out.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
  out.close();  // the buffered tail is written here: a full disk shows at close, so it is checked too
  if (!out) fail("{}: write failed (is the disk full?)", path);
}

void write_sharded_checkpoint(const std::string& dir, const std::vector<StWrite>& tensors,
                              const std::vector<int>& shard_of) {
  if (shard_of.size() != tensors.size()) fail("write_sharded_checkpoint: need one shard index per tensor");
  fs::create_directories(dir);
  int n_shards = 0;
  for (int s : shard_of) n_shards = std::max(n_shards, s + 1);
  json idx = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  uint64_t total = 0;
  for (int s = 0; s < n_shards; ++s) {
    std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", s + 1, n_shards);
    std::vector<StWrite> part;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (shard_of[i] == s) {
        part.push_back(tensors[i]);
        idx["weight_map"][tensors[i].name] = file;
        total += tensors[i].bytes.size();
      }
    write_safetensors((fs::path(dir) / file).string(), part);
  }
  idx["metadata"]["total_size"] = total;
  write_file_atomic((fs::path(dir) / "model.safetensors.index.json").string(), idx.dump(2) + "\n", true);
}

}  // namespace salasim
