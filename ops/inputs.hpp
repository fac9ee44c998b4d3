// The tensors and attributes of one op's input, as a file written with h5py holds them (compare/h5_inputs.hpp reads
// them) or as a generator draws them (ops/random.hpp): the plain data the op registry's checks read.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace salasim {

struct InputDataset {
  std::vector<int64_t> shape;
  std::string type;  // "float32", "int64", "uint8", "string", ... (compare/h5_util.hpp type_name)
  bool floating = false, integer = false;
  std::vector<double> data;  // row-major; filled after the header check, float and integer datasets only
};

struct InputAttr {
  bool number = false;   // else a string
  bool integer = false;  // a number stored as an integer type
  double value = 0;
  std::string text;
};

struct InputFile {
  std::string path;
  std::map<std::string, InputDataset> datasets;  // the named datasets present at the root
  std::map<std::string, InputAttr> attrs;        // the named root attributes present
  std::vector<std::string> unlisted;             // other root objects and attributes, as "dataset 'x'" (at most 8)
};

}  // namespace salasim
