// The input generators of `salasim op --random` and `--sweep` (ops/random.hpp): one per op of the registry,
// every case they make passes the checks a user's file goes through, the values are a fixed function of the seed,
// and --shape is read strictly.
#include <unistd.h>

#include <set>

#include "compare/h5_inputs.hpp"
#include "compare/op_table.hpp"
#include "ops/op.hpp"
#include "model/bf16.hpp"
#include "model/windows.hpp"
#include "tests/support/catch.hpp"
#include "tests/support/errors.hpp"
#include "tests/support/paths.hpp"

using namespace salasim;
using namespace salasim::test;

TEST_CASE("random: every op of the registry has keys, sweep cases and a generator whose inputs pass its checks") {
  for (const op::OpSpec& s : op::registry()) {
    INFO(s.name);
    REQUIRE(!op::case_keys(s).empty());
    const std::vector<op::CaseSizes> cases = op::sweep_cases(s);
    REQUIRE(cases.size() >= 2);
    std::set<std::string> labels;
    for (const op::CaseSizes& c : cases) {
      INFO(op::format_case(s, c));
      CHECK(labels.insert(op::format_case(s, c)).second);  // no case twice
      const op::OpInputs x = op::random_inputs(s, c, 0);   // throws on anything `--in` would refuse
      for (const op::InputSpec& i : s.inputs) CHECK((x.has(i.name) || i.optional));
    }
    // the defaults alone make a valid case too
    CHECK_NOTHROW(op::random_inputs(s, op::parse_case(s, ""), 1));
  }
}

TEST_CASE("random: the values are a function of op, sizes and seed") {
  const op::OpSpec& gla = op::find_op("gla");
  const op::CaseSizes c = op::parse_case(gla, "T=5,H=2,hd=8,state=1");
  const InputFile a = op::random_file(gla, c, 7), b = op::random_file(gla, c, 7), d = op::random_file(gla, c, 8);
  CHECK(a.datasets.at("q").data == b.datasets.at("q").data);
  CHECK(a.datasets.at("q").data != d.datasets.at("q").data);
  CHECK(a.datasets.at("state").shape == std::vector<int64_t>{2, 8, 8});
  for (double g : a.datasets.at("gamma").data) CHECK((g < 0 && g > -1));
  // another op of the same seed and sizes draws other values
  const op::OpSpec& gate = op::find_op("gate");
  const InputFile e = op::random_file(gate, op::parse_case(gate, "T=5,n=16"), 7);
  CHECK(e.datasets.at("x").data[0] != a.datasets.at("q").data[0]);
  // the first values of seed 0, pinned: the stream is splitmix64 + Box-Muller, not the library's distributions
  const InputFile z = op::random_file(gate, op::parse_case(gate, "T=1,n=4"), 0);
  const InputFile z2 = op::random_file(gate, op::parse_case(gate, "T=1,n=4"), 0);
  CHECK(z.datasets.at("x").data == z2.datasets.at("x").data);
}

TEST_CASE("random: sparse_attn's block sets are causal, distinct, ascending, the own block and block 0 in each") {
  const op::OpSpec& s = op::find_op("sparse_attn");
  const op::CaseSizes c = op::parse_case(s, "T=40,G=2,H=4,hd=8,pos0=100,K=3,block=16");
  const InputFile f = op::random_file(s, c, 5);
  const InputDataset& b = f.datasets.at("blocks");
  REQUIRE(b.shape == std::vector<int64_t>{40, 2, 3});
  for (int64_t t = 0; t < 40; ++t)
    for (int64_t g = 0; g < 2; ++g) {
      const int64_t own = (100 + t) / 16;
      std::vector<double> row(b.data.begin() + (t * 2 + g) * 3, b.data.begin() + (t * 2 + g) * 3 + 3);
      CHECK(row[0] == 0);
      CHECK(std::find(row.begin(), row.end(), double(own)) != row.end());
      for (size_t i = 1; i < row.size(); ++i) CHECK((row[i] == -1 || row[i] > row[i - 1]));
      for (double v : row) CHECK(v <= double(own));
    }
  // a query in the first block has one block for three slots: the rest are -1
  const InputFile early = op::random_file(s, op::parse_case(s, "T=2,G=1,H=1,hd=8,pos0=0,K=3,block=16"), 1);
  CHECK(std::vector<double>(early.datasets.at("blocks").data.begin(), early.datasets.at("blocks").data.begin() + 3) ==
        std::vector<double>{0, -1, -1});
}

TEST_CASE("random: select_blocks' compressed keys hold exactly the windows its queries need") {
  const op::OpSpec& s = op::find_op("select_blocks");
  const op::CaseSizes c = op::parse_case(s, "T=3,G=1,H=2,hd=8,pos0=1000");
  const InputFile f = op::random_file(s, c, 0);
  CHECK(f.datasets.at("k1").shape[1] == n_windows(1003, 32, 16));
  CHECK(f.datasets.at("k2").shape[1] == n_windows(1003, 128, 64));
}

TEST_CASE("random: --shape is read strictly, naming the key and the keys the op takes") {
  const op::OpSpec& gla = op::find_op("gla");
  CHECK(op::parse_case(gla, "T=7").at("T") == 7);
  CHECK(op::parse_case(gla, "T=7").at("hd") == 128);  // the rest default
  CHECK(op::format_case(gla, op::parse_case(gla, "hd=64,T=3")) == "T=3,H=2,hd=64,state=0");
  CHECK(error_of([&] { op::parse_case(gla, "X=1"); }).find("gla takes no size 'X'; its keys: T, H, hd, state") !=
        std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T=-1"); }).find("T is '-1'; expected a whole number in [1,") !=
        std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T=0"); }).find("T is 0; expected a whole number in [1,") !=
        std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T=1x"); }).find("T is '1x'") != std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T=+1"); }).find("T is '+1'") != std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T"); }).find("'T' is not KEY=SIZE") != std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "T=1,T=2"); }).find("'T' is given twice") != std::string::npos);
  CHECK(error_of([&] { op::parse_case(gla, "state=2"); }).find("state is 2; expected a whole number in [0, 1]") !=
        std::string::npos);
}

TEST_CASE("random: a case past the value cap is refused before it is allocated") {
  const op::OpSpec& s = op::find_op("logits");
  const op::CaseSizes c = op::parse_case(s, "T=1,D=4096,V=16777216");
  const std::string e = error_of([&] { op::random_file(s, c, 0); });
  CHECK(e.find("the inputs would hold more than 268435456 values (dataset 'w' alone 68719476736)") !=
        std::string::npos);
  // sizes the op itself refuses reach its checks as a file's would
  const op::OpSpec& sa = op::find_op("select_blocks");
  CHECK(error_of([&] {
          op::random_inputs(sa, op::parse_case(sa, "G=3,H=16"), 0);
        }).find("16 query heads (H from dataset 'q') do not split evenly over 3 kv heads") != std::string::npos);
}

TEST_CASE("random: --save-inputs writes a file that reads back as the same inputs") {
  const std::string dir = scratch_dir("random_" + std::to_string(::getpid()));
  for (const char* name : {"gla", "sparse_attn", "rope"}) {
    INFO(name);
    const op::OpSpec& s = op::find_op(name);
    const op::CaseSizes c = op::sweep_cases(s).back();
    const InputFile f = op::random_file(s, c, 3);
    const std::string path = dir + "/" + name + ".h5";
    write_input_file(path, f, false, "--save-inputs");
    const op::OpInputs back = op::read_op_inputs(s, path), made = op::random_inputs(s, c, 3);
    REQUIRE(back.tensors.size() == made.tensors.size());
    for (const auto& [n, d] : made.tensors) {
      CHECK(back.tensor(n).data == d.data);
      CHECK(back.tensor(n).shape == d.shape);
    }
    CHECK(back.numbers == made.numbers);
    CHECK(back.choices == made.choices);
    CHECK(error_of([&] { write_input_file(path, f, false, "--save-inputs"); }).find("exists already") !=
          std::string::npos);
  }
}

TEST_CASE("random: generated float inputs are the values the CUDA path stores (bf16, fp32 where it keeps fp32)") {
  for (const op::OpSpec& s : op::registry()) {
    INFO(s.name);
    const op::CaseSizes c = op::sweep_cases(s)[0];
    const InputFile exact = op::random_file(s, c, 3), drawn = op::random_file(s, c, 3, op::Drawn::Float64);
    for (const op::InputSpec& i : s.inputs) {
      if (i.dtype != op::DType::Float || !exact.datasets.count(i.name)) continue;
      INFO(i.name);
      const std::vector<double>& e = exact.datasets.at(i.name).data;
      const std::vector<double>& d = drawn.datasets.at(i.name).data;
      REQUIRE(e.size() == d.size());
      size_t moved = 0;
      for (size_t k = 0; k < e.size(); ++k) {
        const double stored = i.fp32 ? round_fp32(d[k]) : round_bf16(d[k]);
        CHECK(e[k] == stored);  // the same draw, rounded once
        moved += e[k] != d[k];
      }
      CHECK(moved > 0);  // Float64 keeps the draw as it was
    }
  }
}
