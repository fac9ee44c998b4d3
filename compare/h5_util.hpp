// Internal to compare/: a thin layer over the HDF5 C API (owned identifiers, attributes, group walking) so that
// hdf5_io.cpp reads as the file layout. Every failure throws salasim::Error with the file and object named.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace salasim::h5 {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  Id(Id&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Id& operator=(Id&& o) noexcept;
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id();
  hid_t get() const { return id_; }
  hid_t release() {  // the identifier, no longer closed by this Id
    const hid_t id = id_;
    id_ = -1;
    return id;
  }

 private:
  hid_t id_ = -1;
};

// Turns off HDF5's own printing of its error stack while alive: our messages replace it.
class Quiet {
 public:
  Quiet();
  ~Quiet();
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// `id` when it is valid, else a salasim::Error "<file>: <what>".
hid_t check(hid_t id, const std::string& file, const std::string& what);
void check(herr_t rc, const std::string& file, const std::string& what);

// Attributes on an object; `where` names the object in messages ("dataset /prefill/embed/out").
void write_string_attr(hid_t obj, const std::string& name, const std::string& value, const std::string& file);
void write_int_attr(hid_t obj, const std::string& name, int64_t value, const std::string& file);
void write_ints_attr(hid_t obj, const std::string& name, const std::vector<int64_t>& values, const std::string& file);
bool has_attr(hid_t obj, const std::string& name);
std::string read_string_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where);
int64_t read_int_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where);
// At most `max` integers (a shape, one number: 64; a dataset's `rows`: one per row it holds), checked before reading.
std::vector<int64_t> read_ints_attr(hid_t obj, const std::string& name, const std::string& file,
                                    const std::string& where, int64_t max = 64);
std::vector<std::string> attr_names(hid_t obj, const std::string& file);
// One number (an integer or a float attribute holding a single value, scalar or [1]) as a double; `integer` says
// which it was. Anything else (a string, an array, another class) is an Error naming `where` and what was found.
double read_number_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where,
                        bool* integer);
// "float32", "int64", "uint8", "string", ... of an HDF5 datatype (for messages); "other" for the rest.
std::string type_name(hid_t type);

// Calls `on_dataset(path, dataset)` for every dataset below `group` ("/prefill/embed/out"), in name order. Each
// object is visited once: a second link to an object already seen (a hard link, a group linking back to one of
// its parents) is an error naming both paths; so are soft and external links (they could leave the file), any
// object that is neither a group nor a dataset, and groups nested deeper than kMaxDepth.
constexpr int kMaxDepth = 32;  // tap paths are 3-7 levels deep: /prefill/layer_03/lightning/gla/out/inputs/q
void walk(hid_t group, const std::string& prefix, const std::string& file,
          const std::function<void(const std::string&, hid_t)>& on_dataset);

// Runs `read` (a complete read of `path`) in a child process first, and throws salasim::Error naming the file when
// the child dies of a signal or does not finish within `timeout_s` (0: 30 s + 1 s per 10 MB of file): the HDF5
// library itself crashes or loops forever on some damaged files (libhdf5 1.10.8, reading a variable-length string
// from a corrupted global heap), which no check of ours can see coming. When the child finishes (with or without an
// Error of its own), the caller's read in this process takes the same path and reports the same way. Where fork()
// fails, nothing is checked.
void crash_guard(const std::string& path, const std::function<void()>& read, double timeout_s = 0);

// The dims of dataset `ds` and their element count, after checking that the count fits in 64 bits (also as
// float64 bytes) and that the file really stores that many elements: a dataset's data must live in this file
// (no external or virtual storage), pass only the filters salasim writes (shuffle, deflate, fletcher32), and
// take at least numel x element size bytes of storage, or 1/1032 of that when deflated (deflate's largest ratio).
// So a header claiming [2^26, 4] in an 8 KB file is refused before anything is allocated.
struct DatasetExtent {
  std::vector<int64_t> shape;
  int64_t numel = 0;
};
DatasetExtent dataset_extent(hid_t ds, const std::string& file, const std::string& where);

}  // namespace salasim::h5
