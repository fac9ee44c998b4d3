// An op's input file read with compare/h5_inputs.hpp and checked by the registry's rules (ops/io.hpp).
#include "compare/op_table.hpp"

#include "compare/h5_inputs.hpp"

namespace salasim::op {

OpInputs read_op_inputs(const OpSpec& s, const std::string& path, bool guarded) {
  std::vector<std::string> datasets, attrs;
  for (const InputSpec& i : s.inputs) datasets.push_back(i.name);
  for (const AttrSpec& a : s.attrs) attrs.push_back(a.name);
  OpInputs x;
  x.spec = &s;
  x.file = path;
  const auto read = guarded ? read_input_file : read_input_file_unguarded;
  InputFile f = read(path, datasets, attrs, [&](const InputFile& h) {
    x.dims.clear();
    x.numbers.clear();
    x.choices.clear();
    check_headers(x, h);
    check_input_sizes(path, h);
  });
  return finish_inputs(std::move(x), f);
}

}  // namespace salasim::op
