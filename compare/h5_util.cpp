// HDF5 C API helpers: identifiers and string/int attributes (h5py-friendly: variable-length UTF-8 strings, int64),
// built on calls whose signatures are the same in HDF5 1.10, 1.12 and 1.14. The walk and the checks for untrusted
// files are in h5_untrusted.cpp.
#include "compare/h5_util.hpp"

#include "model/error.hpp"

namespace salasim::h5 {

Id& Id::operator=(Id&& o) noexcept {
  if (this != &o) {
    Id dead(id_);
    id_ = o.id_;
    o.id_ = -1;
  }
  return *this;
}

Id::~Id() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
}

Quiet::Quiet() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
Quiet::~Quiet() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

hid_t check(hid_t id, const std::string& file, const std::string& what) {
  if (id < 0) fail("{}: {}", file, what);
  return id;
}
void check(herr_t rc, const std::string& file, const std::string& what) {
  if (rc < 0) fail("{}: {}", file, what);
}

namespace {
Id utf8_vlen_string() {
  Id t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Id open_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where,
             const char* expected) {
  if (!has_attr(obj, name)) fail("{}: {}: attribute '{}' is missing (expected {})", file, where, name, expected);
  return Id(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, where + ": cannot open attribute '" + name + "'"));
}
}  // namespace

void write_string_attr(hid_t obj, const std::string& name, const std::string& value, const std::string& file) {
  Id type = utf8_vlen_string();
  Id space(H5Screate(H5S_SCALAR));
  Id attr(check(H5Acreate2(obj, name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  const char* p = value.c_str();
  check(H5Awrite(attr.get(), type.get(), &p), file, "cannot write attribute '" + name + "'");
}

void write_int_attr(hid_t obj, const std::string& name, int64_t value, const std::string& file) {
  Id space(H5Screate(H5S_SCALAR));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  check(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), file, "cannot write attribute '" + name + "'");
}

void write_ints_attr(hid_t obj, const std::string& name, const std::vector<int64_t>& values, const std::string& file) {
  const hsize_t n = values.size();
  // A zero-length list (a scalar's shape) is a null dataspace; h5py reads it as h5py.Empty.
  Id space(n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL));
  Id attr(check(H5Acreate2(obj, name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), file,
                "cannot create attribute '" + name + "'"));
  if (n) check(H5Awrite(attr.get(), H5T_NATIVE_INT64, values.data()), file, "cannot write attribute '" + name + "'");
}

bool has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string read_string_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where) {
  Id attr = open_attr(obj, name, file, where, "a string");
  Id type(H5Aget_type(attr.get()));
  Id space(H5Aget_space(attr.get()));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Sget_simple_extent_npoints(space.get()) != 1)
    fail("{}: {}: attribute '{}' is not a single string", file, where, name);
  constexpr size_t kMaxString = size_t(1) << 20;  // our longest attribute, the list of hashed sources, is ~2 kB
  if (H5Tis_variable_str(type.get()) > 0) {
    Id mem = utf8_vlen_string();
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // ASCII strings (h5py's bytes, other writers) read as they are
    char* p = nullptr;
    check(H5Aread(attr.get(), mem.get(), &p), file, where + ": cannot read attribute '" + name + "'");
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const size_t size = H5Tget_size(type.get());
  if (size == 0 || size > kMaxString)
    fail("{}: {}: attribute '{}' is a string of {} bytes; expected at most {}", file, where, name, size, kMaxString);
  std::string s(size, '\0');
  Id mem(H5Tcopy(H5T_C_S1));
  H5Tset_size(mem.get(), size);
  check(H5Aread(attr.get(), mem.get(), s.data()), file, where + ": cannot read attribute '" + name + "'");
  return s.substr(0, s.find('\0'));
}

int64_t read_int_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where) {
  std::vector<int64_t> v = read_ints_attr(obj, name, file, where);
  if (v.size() != 1) fail("{}: {}: attribute '{}' holds {} values, expected one integer", file, where, name, v.size());
  return v[0];
}

std::vector<int64_t> read_ints_attr(hid_t obj, const std::string& name, const std::string& file,
                                    const std::string& where, int64_t max) {
  Id attr = open_attr(obj, name, file, where, "integers");
  Id type(H5Aget_type(attr.get()));
  Id space(H5Aget_space(attr.get()));
  if (H5Tget_class(type.get()) != H5T_INTEGER) fail("{}: {}: attribute '{}' is not an integer", file, where, name);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n > max) fail("{}: {}: attribute '{}' holds {} integers; expected at most {}", file, where, name, n, max);
  std::vector<int64_t> v(size_t(n > 0 ? n : 0));
  if (!v.empty())
    check(H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()), file, where + ": cannot read attribute '" + name + "'");
  return v;
}

double read_number_attr(hid_t obj, const std::string& name, const std::string& file, const std::string& where,
                        bool* integer) {
  Id attr = open_attr(obj, name, file, where, "a number");
  Id type(H5Aget_type(attr.get()));
  Id space(H5Aget_space(attr.get()));
  const H5T_class_t cls = H5Tget_class(type.get());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    fail("{}: {}: attribute '{}' is {}, expected a number", file, where, name, type_name(type.get()));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n != 1) fail("{}: {}: attribute '{}' holds {} values, expected one number", file, where, name, n);
  double v = 0;
  check(H5Aread(attr.get(), H5T_NATIVE_DOUBLE, &v), file, where + ": cannot read attribute '" + name + "'");
  if (integer) *integer = cls == H5T_INTEGER;
  return v;
}

std::string type_name(hid_t type) {
  const size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT: return fmt::format("float{}", bits);
    case H5T_INTEGER: return fmt::format("{}int{}", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", bits);
    case H5T_STRING: return "string";
    case H5T_ENUM: return "enum (h5py's bool)";
    case H5T_COMPOUND: return "compound";
    default: return "other";
  }
}

namespace {
herr_t collect_attr_name(hid_t, const char* name, const H5A_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}
}  // namespace

std::vector<std::string> attr_names(hid_t obj, const std::string& file) {
  std::vector<std::string> names;
  hsize_t idx = 0;
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_attr_name, &names), file,
        "cannot list the attributes");
  return names;
}

}  // namespace salasim::h5
