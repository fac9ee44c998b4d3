// A TapSink that writes every tap to a tap dump (docs/formats.md, "Tap dump") as a run produces it, so a run whose
// taps go elsewhere (verify's streaming comparison) can dump them all while holding none.
//
// Why extendible datasets: a tap's final row count is not known when its first rows arrive (a prompt fed in pieces
// appends each piece's rows), and holding a tap until its last row would hold every per-token tap of the prefill.
// So appended taps are chunked datasets whose first dim grows (H5Dset_extent) as rows arrive; the shape attribute is
// written when the file is closed. State-like taps (replace()) are written at once and overwritten in place by a
// later value of the same shape (or recreated when the shape changes: compressed keys grow by piece; HDF5 does not
// reclaim the old one's bytes, a few rows per piece). read_taps reads the result as any other tap dump.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "compare/hdf5_io.hpp"
#include "model/output_file.hpp"
#include "model/tap_recorder.hpp"

namespace salasim {

class TapFileSink : public TapSink {
 public:
  // Starts `path` as every output is (model/output_file.hpp): the dump is written to a temporary beside it and
  // renamed onto `path` by close(); replace = false refuses an existing `path` (the CLI without --force). An Error
  // naming it when it cannot. keep_rows: taps will be appended with append_rows (the file is made in the HDF5 1.8
  // format, whose dense attribute storage holds long `rows` lists).
  TapFileSink(const std::string& path, const DumpInfo& info, bool keep_rows = false, bool replace = true);
  // Without close(): the temporary is removed and `path` never appears (a half-written dump must not pass for a
  // whole one, and an existing file of that name is kept).
  ~TapFileSink() override;
  TapFileSink(const TapFileSink&) = delete;
  TapFileSink& operator=(const TapFileSink&) = delete;

  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override;
  // The same for a tap that keeps chosen rows only: `rows` are the absolute rows (prompt positions) of the shape[0]
  // rows given, ascending across calls. close() writes them as the dataset's `rows` attribute (docs/formats.md), so
  // `salasim diff` compares such a file with a whole one row by row. A tap is appended either way, never both.
  void append_rows(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer,
                   const int64_t* rows);
  void replace(const std::string& name, Tap t) override;
  // Writes each appended tap's final shape attribute and closes the file. Returns the number of taps written.
  int close();
  const std::string& path() const { return path_; }

 private:
  struct Written {
    std::vector<int64_t> shape;
    bool integer = false;
    bool appended = false;    // rows appended (its attributes are written by close()); else a replace() tap
    bool extendible = false;  // chunked with an unlimited rows dim (every appended tap but those of zero width)
    int64_t order = 0;
    bool has_rows = false;  // appended by append_rows: `rows` are the absolute rows kept
    std::vector<int64_t> rows;
  };
  void append_impl(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer,
                   const int64_t* rows);
  std::string path_;
  std::unique_ptr<OutputFile> out_;
  int64_t file_ = -1;  // hid_t of the open file (kept out of this header: hdf5.h stays inside compare/)
  std::map<std::string, Written> taps_;
};

// Each tap to `first` (a file), then to `second` (a map, a comparison): a run dumped and used at once.
struct TeeSink : TapSink {
  TapSink& first;
  TapSink& second;
  TeeSink(TapSink& a, TapSink& b) : first(a), second(b) {}
  void append(const std::string& name, const std::vector<int64_t>& shape, const double* data, bool integer) override {
    first.append(name, shape, data, integer);
    second.append(name, shape, data, integer);
  }
  void replace(const std::string& name, Tap t) override {
    first.replace(name, t);
    second.replace(name, std::move(t));
  }
};

}  // namespace salasim
