// Reading a user implementation's outputs (compare/op_output.hpp) through the guarded HDF5 layer of h5_util.hpp.
#include "compare/op_output.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "compare/h5_util.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"

namespace salasim {

namespace {

OpOutputs read_unguarded(const op::OpSpec& s, const std::string& path) {
  h5::Quiet quiet;
  require_regular_file(path, "an HDF5 file");
  h5::Id f(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "not an HDF5 file (or not readable)"));
  OpOutputs r;
  std::vector<std::string> names;
  for (const op::OutputSpec& o : s.outputs) names.push_back(o.tap);
  h5::walk(f.get(), "", path, [&](const std::string& p, hid_t ds) {
    size_t i = 0;
    while (i < s.outputs.size() && s.outputs[i].tap != p) ++i;
    if (i == s.outputs.size())
      fail("{}: dataset {} is not an output of {} (its outputs: {})", path, p, s.name, fmt::join(names, ", "));
    const op::OutputSpec& o = s.outputs[i];
    const std::string where = "dataset " + p;
    h5::Id type(h5::check(H5Dget_type(ds), path, where + ": cannot read its type"));
    const H5T_class_t cls = H5Tget_class(type.get());
    if (cls != H5T_FLOAT && cls != H5T_INTEGER)
      fail("{}: {}: holds {}; expected {}", path, where, h5::type_name(type.get()),
           o.dtype == op::DType::Int ? "integers (block ids)" : "floats");
    const h5::DatasetExtent extent = h5::dataset_extent(ds, path, where);
    Tap t;
    t.shape = extent.shape;
    t.integer = o.dtype == op::DType::Int;
    t.order = int64_t(i);
    t.data.resize(size_t(extent.numel));
    if (!t.data.empty())
      h5::check(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data.data()), path,
                "cannot read " + where);
    if (t.integer)
      for (size_t k = 0; k < t.data.size(); ++k)
        if (t.data[k] != std::floor(t.data[k]))
          fail("{}: {}: element {} is {}; expected a block id (a whole number, -1 for an empty slot)", path, where, k,
               t.data[k]);
    r.taps[p] = std::move(t);
  });
  for (const op::OutputSpec& o : s.outputs)
    if (!r.taps.count(o.tap)) r.absent.push_back(o.tap);
  return r;
}

}  // namespace

OpOutputs read_op_outputs(const op::OpSpec& s, const std::string& path) {
  h5::crash_guard(path, [&] { read_unguarded(s, path); });
  return read_unguarded(s, path);
}

}  // namespace salasim
