// Input files for `salasim op` as a user writes them with h5py: plain datasets at the root and attributes of the
// root group, no salasim attributes; and the op's outputs as the CLI writes them (tests/compare/op_cli_test.cpp,
// tests/gpu/op_cli_test.cpp).
#pragma once
#include <hdf5.h>

#include <unistd.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compare/hdf5_io.hpp"
#include "reference/tensor.hpp"
#include "tests/compare/run_cli.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/paths.hpp"

namespace salasim::test {

// `name` in the scratch folder `folder`_<pid>, emptied once per process (ctest runs the cases side by side).
inline std::string op_file(const std::string& folder, const std::string& name) {
  static std::map<std::string, std::string> made;
  auto it = made.find(folder);
  if (it == made.end()) it = made.emplace(folder, scratch_dir(folder + "_" + std::to_string(::getpid()))).first;
  return it->second + "/" + name;
}

class OpInputFile {
 public:
  explicit OpInputFile(const std::string& path)
      : f_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {}
  ~OpInputFile() { H5Fclose(f_); }
  OpInputFile(const OpInputFile&) = delete;
  OpInputFile& operator=(const OpInputFile&) = delete;

  // A float64 (or float32: f32) dataset of `shape` holding m's elements row-major.
  OpInputFile& mat(const std::string& name, const ref::Mat& m, std::vector<hsize_t> shape = {}, bool f32 = false) {
    if (shape.empty()) shape = {hsize_t(m.rows()), hsize_t(m.cols())};
    if (f32) {
      std::vector<float> v(m.data(), m.data() + m.size());
      return write(name, shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, v.data());
    }
    return write(name, shape, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m.data());
  }
  OpInputFile& ints(const std::string& name, const std::vector<int64_t>& v, std::vector<hsize_t> shape) {
    return write(name, shape, H5T_STD_I64LE, H5T_NATIVE_INT64, v.data());
  }
  OpInputFile& num(const std::string& name, double v) { return attr(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v); }
  OpInputFile& whole(const std::string& name, int64_t v) { return attr(name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v); }
  OpInputFile& text(const std::string& name, const std::string& v) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    const char* p = v.c_str();
    attr(name, t, t, &p);
    H5Tclose(t);
    return *this;
  }

 private:
  OpInputFile& write(const std::string& name, const std::vector<hsize_t>& shape, hid_t file_type, hid_t mem_type,
                     const void* data) {
    hid_t space = H5Screate_simple(int(shape.size()), shape.data(), nullptr);
    hid_t ds = H5Dcreate2(f_, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
    return *this;
  }
  OpInputFile& attr(const std::string& name, hid_t file_type, hid_t mem_type, const void* v) {
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f_, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, mem_type, v);
    H5Aclose(a);
    H5Sclose(space);
    return *this;
  }
  hid_t f_;
};

// [G, L, hd] from G matrices [L, hd], as one matrix of G*L rows.
inline ref::Mat stack(const std::vector<ref::Mat>& ms) {
  ref::Mat m(int64_t(ms.size()) * ms[0].rows(), ms[0].cols());
  for (size_t g = 0; g < ms.size(); ++g) m.middleRows(int64_t(g) * ms[0].rows(), ms[0].rows()) = ms[g];
  return m;
}

// The outputs of `salasim op OP --in IN --backend BACKEND` (written beside IN), which must exit 0.
inline TapMap op_outputs(const std::string& op, const std::string& in, const std::string& backend = "reference") {
  const std::string out = in + "." + backend + ".out.h5";
  const CliResult r = run_salasim(fmt::format("op {} --in {} --out {} --backend {} --force", op, in, out, backend));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return read_taps(out).taps;
}

}  // namespace salasim::test
