// Reading a user's input tensors (compare/h5_inputs.hpp) through the guarded HDF5 layer of h5_util.hpp.
#include "compare/h5_inputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "compare/h5_util.hpp"
#include "compare/hdf5_layout.hpp"
#include "model/error.hpp"
#include "model/json_field.hpp"
#include "model/output_file.hpp"

namespace salasim {

namespace {

// Root links and root attributes whose names the caller did not ask for (a misspelt name would otherwise be
// ignored silently: `S` for `state` ran from a zero state). At most 8 are kept: enough to name the mistake.
constexpr size_t kUnlistedMax = 8;
struct Unlisted {
  const std::vector<std::string>* known;
  std::vector<std::string>* out;
};
herr_t note_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  auto* u = static_cast<Unlisted*>(data);
  if (std::find(u->known->begin(), u->known->end(), name) == u->known->end())
    u->out->push_back(fmt::format("object '{}'", name));
  return u->out->size() >= kUnlistedMax ? 1 : 0;
}
herr_t note_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  auto* u = static_cast<Unlisted*>(data);
  if (std::find(u->known->begin(), u->known->end(), name) == u->known->end())
    u->out->push_back(fmt::format("attribute '{}'", name));
  return u->out->size() >= kUnlistedMax ? 1 : 0;
}

InputFile read_unguarded(const std::string& path, const std::vector<std::string>& datasets,
                         const std::vector<std::string>& attrs, const std::function<void(const InputFile&)>& check) {
  h5::Quiet quiet;
  require_regular_file(path, "an HDF5 file");  // a FIFO would block H5Fopen for good
  h5::Id f(h5::check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "not an HDF5 file (or not readable)"));
  InputFile in;
  in.path = path;
  {
    Unlisted u{&datasets, &in.unlisted};
    h5::check(H5Literate(f.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, note_link, &u), path,
              "cannot list the root group");
    Unlisted a{&attrs, &in.unlisted};
    if (in.unlisted.size() < kUnlistedMax)
      h5::check(H5Aiterate2(f.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, note_attr, &a), path,
                "cannot list the root attributes");
  }
  for (const std::string& a : attrs) {
    if (!h5::has_attr(f.get(), a)) continue;
    InputAttr v;
    h5::Id attr(h5::check(H5Aopen(f.get(), a.c_str(), H5P_DEFAULT), path, "cannot open attribute '" + a + "'"));
    h5::Id type(H5Aget_type(attr.get()));
    if (H5Tget_class(type.get()) == H5T_STRING) {
      v.text = h5::read_string_attr(f.get(), a, path, "root group");
    } else {
      v.number = true;
      v.value = h5::read_number_attr(f.get(), a, path, "root group", &v.integer);
    }
    in.attrs[a] = v;
  }
  std::map<std::string, h5::Id> open;
  for (const std::string& name : datasets) {
    if (H5Lexists(f.get(), name.c_str(), H5P_DEFAULT) <= 0) continue;
    H5L_info_t link;
    h5::check(H5Lget_info(f.get(), name.c_str(), &link, H5P_DEFAULT), path, "cannot read link /" + name);
    if (link.type != H5L_TYPE_HARD)
      fail("{}: /{} is a soft or external link; give the dataset itself (a link could lead out of the file)", path,
           name);
    h5::Id obj(h5::check(H5Oopen(f.get(), name.c_str(), H5P_DEFAULT), path, "cannot open /" + name));
    if (H5Iget_type(obj.get()) != H5I_DATASET) fail("{}: /{} is a group, expected a dataset", path, name);
    const std::string where = "dataset '" + name + "'";
    h5::Id type(h5::check(H5Dget_type(obj.get()), path, where + ": cannot read its type"));
    InputDataset d;
    d.type = h5::type_name(type.get());
    d.floating = H5Tget_class(type.get()) == H5T_FLOAT;
    d.integer = H5Tget_class(type.get()) == H5T_INTEGER;
    // Dims checked against overflow and against what the file really stores, before anything is allocated.
    d.shape = h5::dataset_extent(obj.get(), path, where).shape;
    in.datasets[name] = std::move(d);
    open[name] = std::move(obj);
  }
  check(in);
  for (auto& [name, d] : in.datasets) {
    if (!d.floating && !d.integer) continue;
    int64_t n = 1;
    for (int64_t s : d.shape) n *= s;
    if (n == 0) continue;
    const std::string what = "cannot read dataset '" + name + "'";
    if (d.floating) {
      d.data.resize(size_t(n));
      h5::check(H5Dread(open[name].get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, d.data.data()), path, what);
    } else {
      std::vector<int64_t> v(static_cast<size_t>(n));
      h5::check(H5Dread(open[name].get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), path, what);
      d.data.assign(v.begin(), v.end());
    }
  }
  return in;
}

}  // namespace

InputFile read_input_file(const std::string& path, const std::vector<std::string>& datasets,
                          const std::vector<std::string>& attrs,
                          const std::function<void(const InputFile&)>& check_headers) {
  h5::crash_guard(path, [&] { read_unguarded(path, datasets, attrs, check_headers); });
  return read_unguarded(path, datasets, attrs, check_headers);
}

InputFile read_input_file_unguarded(const std::string& path, const std::vector<std::string>& datasets,
                                    const std::vector<std::string>& attrs,
                                    const std::function<void(const InputFile&)>& check_headers) {
  return read_unguarded(path, datasets, attrs, check_headers);
}

void write_input_file(const std::string& path, const InputFile& f, bool force, const std::string& option) {
  OutputFile out(path, force, option);
  h5::Quiet quiet;
  h5::Id file(h5::check(H5Fcreate(out.temp().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path,
                        "cannot create the file"));
  for (const auto& [name, d] : f.datasets) {
    const std::string where = "dataset '" + name + "'";
    std::vector<hsize_t> dims(d.shape.begin(), d.shape.end());
    h5::Id space(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
    std::vector<int64_t> ints;
    if (d.integer) ints = dump_layout::whole_numbers(d.data.data(), d.data.size(), path, where);
    h5::Id ds(h5::check(H5Dcreate2(file.get(), name.c_str(), d.integer ? H5T_STD_I64LE : H5T_IEEE_F64LE, space.get(),
                                   H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        path, "cannot create " + where));
    if (!d.data.empty())
      h5::check(H5Dwrite(ds.get(), d.integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                         d.integer ? static_cast<const void*>(ints.data()) : d.data.data()),
                path, "cannot write " + where);
  }
  for (const auto& [name, a] : f.attrs) {
    if (!a.number) {
      h5::write_string_attr(file.get(), name, a.text, path);
    } else if (a.integer) {
      h5::write_int_attr(file.get(), name, int64_t(a.value), path);
    } else {
      h5::Id space(H5Screate(H5S_SCALAR));
      h5::Id attr(h5::check(H5Acreate2(file.get(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                            path, "cannot create attribute '" + name + "'"));
      h5::check(H5Awrite(attr.get(), H5T_NATIVE_DOUBLE, &a.value), path, "cannot write attribute '" + name + "'");
    }
  }
  dump_layout::close_file(file, path);
  out.commit();
}

}  // namespace salasim
