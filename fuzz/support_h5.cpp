// Attribute writers of the HDF5-building fuzz targets (fuzz/support_h5.hpp).
#include "fuzz/support_h5.hpp"

namespace salasim::fuzz {

void string_attr(hid_t obj, const char* name, const std::string& v) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
  const char* c = v.c_str();
  if (a >= 0) H5Awrite(a, t, &c), H5Aclose(a);
  H5Sclose(s);
  H5Tclose(t);
}

void ints_attr(hid_t obj, const char* name, const std::vector<int64_t>& v) {
  const hsize_t n = v.size();
  hid_t s = n ? H5Screate_simple(1, &n, nullptr) : H5Screate(H5S_NULL);
  hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0 && n) H5Awrite(a, H5T_NATIVE_INT64, v.data());
  if (a >= 0) H5Aclose(a);
  H5Sclose(s);
}

void number_attr(hid_t obj, const char* name, double v, bool integer) {
  hid_t s = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(obj, name, integer ? H5T_STD_I64LE : H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) {
    if (integer) {
      // The double is clamped before the conversion: a cast of one outside int64's range is undefined.
      const int64_t i = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : v == v ? int64_t(v) : 0;
      H5Awrite(a, H5T_NATIVE_INT64, &i);
    } else {
      H5Awrite(a, H5T_NATIVE_DOUBLE, &v);
    }
    H5Aclose(a);
  }
  H5Sclose(s);
}

}  // namespace salasim::fuzz
