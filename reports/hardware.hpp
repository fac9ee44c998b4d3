// Hardware profiles (reports/hw/*.json): the ceilings that turn FLOPs, bytes and exponentials into seconds,
// with per-op-class efficiency factors (1.0 = the ceiling itself, i.e. the floor time) and their source.
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace salasim::reports {

// Op classes of the latency model; the measured phases of a run use the same names (+ "_s").
enum class OpClass { Gemm, Select, SparseAttn, DenseAttn, Gla, Other };
constexpr int kOpClasses = 6;
const char* op_class_name(OpClass c);  // "gemm", "select", "sparse_attn", "dense_attn", "gla", "other"
inline OpClass op_class(int i) { return static_cast<OpClass>(i); }

// Achieved fraction of the roofline per op class during prefill, and for decode (a different regime:
// weight-streaming GEMVs and per-token kernel launches) one factor for a whole step or one per class.
struct Efficiency {
  std::array<double, kOpClasses> prefill{1, 1, 1, 1, 1, 1};
  double decode = 1;
  // Per class of a decode step, when fitted from runs that profiled their decode steps by class (0: use `decode`).
  // One factor cannot follow decode: its GEMVs stay constant while its selection grows with the context.
  std::array<double, kOpClasses> decode_class{0, 0, 0, 0, 0, 0};
  double of(OpClass c) const { return prefill[int(c)]; }
  double decode_of(int c) const { return decode_class[c] > 0 ? decode_class[c] : decode; }
};

struct HwProfile {
  std::string name;          // "h200": the file stem, used in commands (--hw h200)
  std::string file;          // where it was read from
  std::string gpu;           // human name
  int64_t memory_bytes = 0;  // memory a model may use on the card
  double bf16_flops = 0;     // dense bf16 tensor FLOP/s with fp32 accumulate
  double bandwidth = 0;      // device memory bytes/s
  double exp_per_s = 0;      // exponentials/s (special-function units)
  Efficiency efficiency;     // defaults; 1.0 everywhere means "predict the floor"
  std::string source;        // where each number comes from
  std::string uncertainty;   // what is not known about it
};

// `name_or_path`: a profile name ("h200" -> reports/hw/h200.json) or a path to a JSON file.
HwProfile load_hw(const std::string& name_or_path);
std::string hw_file(const std::string& name_or_path);
// The profile names of reports/hw/, sorted and comma-separated ("a6000d, h100, h200, rtx5090"): what --hw knows.
std::string known_hw();

}  // namespace salasim::reports
