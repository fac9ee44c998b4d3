// An op implementation as a program, for `salasim op NAME --backend exec:'PROGRAM ARGS'`
// (docs/check-your-implementation.md): salasim runs `PROGRAM ARGS --in X.h5 --out Y.h5` with SALASIM_OP naming the
// op; the program reads the op's inputs (datasets and attributes at the root of X.h5, docs/op.md), computes, and
// writes its outputs at their tap paths in Y.h5. This one does gla and select_blocks (examples/op/ops_cpu.hpp) with
// the HDF5 C API; it writes select_blocks' chosen blocks and leaves out its scores, which salasim then skips. Exit
// 77 for another op tells salasim the case is not supported here.
//
// Flags before --in: --decay-off-by-one, --short-window make it wrong as ops_cpu.hpp says.
#include <hdf5.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "ops_cpu.hpp"

namespace {

struct Dataset {
  std::vector<hsize_t> dims;
  std::vector<double> data;
};

Dataset read(hid_t file, const char* name) {
  Dataset d;
  const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  if (ds < 0) throw std::runtime_error(std::string("no dataset ") + name);
  const hid_t space = H5Dget_space(ds);
  d.dims.resize(size_t(H5Sget_simple_extent_ndims(space)));
  H5Sget_simple_extent_dims(space, d.dims.data(), nullptr);
  size_t n = 1;
  for (hsize_t x : d.dims) n *= size_t(x);
  d.data.resize(n);
  if (n && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.data.data()) < 0)
    throw std::runtime_error(std::string("cannot read ") + name);
  H5Sclose(space);
  H5Dclose(ds);
  return d;
}

double number(hid_t file, const char* name) {
  double v = 0;
  const hid_t a = H5Aopen(file, name, H5P_DEFAULT);
  if (a < 0 || H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) throw std::runtime_error(std::string("no attribute ") + name);
  H5Aclose(a);
  return v;
}

template <class T>
void write(hid_t file, const char* path, std::vector<hsize_t> dims, const std::vector<T>& v) {
  const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t type = std::is_integral_v<T> ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE;
  const hid_t ds = H5Dcreate2(file, path, type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  if (ds < 0 || H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw std::runtime_error(std::string("cannot write ") + path);
  H5Dclose(ds);
  H5Sclose(space);
  H5Pclose(lcpl);
}

}  // namespace

int main(int argc, char** argv) {
  std::string in, out;
  bool decay_bug = false, window_bug = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--in" && i + 1 < argc) in = argv[++i];
    else if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--decay-off-by-one") decay_bug = true;
    else if (a == "--short-window") window_bug = true;
    else {
      std::fprintf(stderr, "op_program: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const char* op_env = std::getenv("SALASIM_OP");
  const std::string op = op_env ? op_env : "";
  if (op != "gla" && op != "select_blocks") {
    std::fprintf(stderr, "op_program implements gla and select_blocks, not %s\n", op.c_str());
    return 77;
  }
  try {
    const hid_t f = H5Fopen(in.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) throw std::runtime_error("cannot open " + in);
    const hid_t o = H5Fcreate(out.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (o < 0) throw std::runtime_error("cannot create " + out);
    if (op == "gla") {
      const Dataset q = read(f, "q"), k = read(f, "k"), v = read(f, "v"), gamma = read(f, "gamma");
      const int64_t T = int64_t(q.dims[0]), H = int64_t(gamma.dims[0]), hd = int64_t(q.dims[1]) / H;
      std::vector<double> state(size_t(H * hd * hd), 0.0), y;
      if (H5Lexists(f, "state", H5P_DEFAULT) > 0) state = read(f, "state").data;
      example::gla(q.data, k.data, v.data, gamma.data, number(f, "tau"), T, H, hd, state, y, decay_bug);
      write(o, "/op/lightning/gla/out", q.dims, y);
      write(o, "/op/lightning/gla/state", {hsize_t(H), hsize_t(hd), hsize_t(hd)}, state);
    } else {
      const Dataset q = read(f, "q"), k1 = read(f, "k1"), k2 = read(f, "k2");
      const int64_t G = int64_t(k1.dims[0]), hd = int64_t(k1.dims[2]), T = int64_t(q.dims[0]);
      example::SelectRules r{};
      r.pos0 = int64_t(number(f, "pos0")), r.kernel = int64_t(number(f, "kernel"));
      r.stride = int64_t(number(f, "stride")), r.block = int64_t(number(f, "block"));
      r.init_blocks = int64_t(number(f, "init_blocks")), r.local_blocks = int64_t(number(f, "local_blocks"));
      r.k_sel = int64_t(number(f, "k_sel")), r.n_blocks = int64_t(number(f, "n_blocks")), r.tau = number(f, "tau");
      std::vector<int64_t> blocks;
      std::vector<double> scores;
      example::select_blocks(q.data, k1.data, k2.data, T, int64_t(q.dims[1]) / hd, G, hd, int64_t(k1.dims[1]),
                             int64_t(k2.dims[1]), r, blocks, scores, window_bug);
      write(o, "/op/sparse/select/blocks", {hsize_t(T), hsize_t(G), hsize_t(r.k_sel)}, blocks);
    }
    H5Fclose(o);
    H5Fclose(f);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "op_program: %s\n", e.what());
    return 1;
  }
  return 0;
}
