// An op implementation as a shared library on salasim's C ABI (include/salasim/op_abi.h), for `salasim op NAME
// --backend lib:PATH.so` (docs/check-your-implementation.md): gla and select_blocks on the CPU
// (examples/op/ops_cpu.hpp), reading salasim_tensor inputs of any strides and writing outputs in the ABI's element
// types. Built twice by the tests: as is, and with SALASIM_EXAMPLE_BUGS defined, which makes both ops wrong as
// ops_cpu.hpp says.
#include <salasim/op_abi.h>

#include <cstdio>
#include <vector>

#include "ops_cpu.hpp"

namespace {

#ifdef SALASIM_EXAMPLE_BUGS
constexpr bool kBugs = true;
#else
constexpr bool kBugs = false;
#endif

// The elements of a tensor, row-major, as doubles, whatever its strides.
std::vector<double> values(const salasim_tensor& t) {
  int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, off = 0;
    for (int d = t.rank - 1; d >= 0; --d) off += (rest % t.shape[d]) * t.stride[d], rest /= t.shape[d];
    if (t.dtype == SALASIM_BF16) v[size_t(i)] = salasim_float_from_bf16(static_cast<const uint16_t*>(t.data)[off]);
    else if (t.dtype == SALASIM_F32) v[size_t(i)] = static_cast<const float*>(t.data)[off];
    else v[size_t(i)] = static_cast<const int32_t*>(t.data)[off];
  }
  return v;
}

template <class T>
void store(const salasim_tensor& t, const std::vector<T>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t rest = int64_t(i), off = 0;
    for (int d = t.rank - 1; d >= 0; --d) off += (rest % t.shape[d]) * t.stride[d], rest /= t.shape[d];
    if (t.dtype == SALASIM_BF16) static_cast<uint16_t*>(t.data)[off] = salasim_bf16_from_float(float(v[i]));
    else if (t.dtype == SALASIM_F32) static_cast<float*>(t.data)[off] = float(v[i]);
    else static_cast<int32_t*>(t.data)[off] = int32_t(v[i]);
  }
}

int unsupported(salasim_call* call, const char* why) {
  std::snprintf(call->message, sizeof call->message, "%s", why);
  return SALASIM_OP_UNSUPPORTED;
}

}  // namespace

extern "C" {

int32_t salasim_op_abi_version(void) { return SALASIM_OP_ABI_VERSION; }

int salasim_op_gla(salasim_call* call, const salasim_gla_args* a) {
  if (call->device != SALASIM_DEVICE_CPU) return unsupported(call, "this library runs on the CPU only");
  const int64_t T = a->size.T, H = a->size.H, hd = a->size.hd;
  std::vector<double> state = a->in.state.data ? values(a->in.state) : std::vector<double>(size_t(H * hd * hd), 0.0);
  std::vector<double> out;
  example::gla(values(a->in.q), values(a->in.k), values(a->in.v), values(a->in.gamma), a->attr.tau, T, H, hd, state,
               out, kBugs);
  store(a->out.out, out);
  store(a->out.state, state);
  return SALASIM_OP_OK;
}

int salasim_op_select_blocks(salasim_call* call, const salasim_select_blocks_args* a) {
  if (call->device != SALASIM_DEVICE_CPU) return unsupported(call, "this library runs on the CPU only");
  example::SelectRules r{};
  r.pos0 = a->attr.pos0, r.kernel = a->attr.kernel, r.stride = a->attr.stride, r.block = a->attr.block;
  r.init_blocks = a->attr.init_blocks, r.local_blocks = a->attr.local_blocks, r.k_sel = a->attr.k_sel;
  r.n_blocks = a->size.NB, r.tau = a->attr.tau;
  std::vector<int64_t> blocks;
  std::vector<double> scores;
  example::select_blocks(values(a->in.q), values(a->in.k1), values(a->in.k2), a->size.T, a->size.H, a->size.G,
                         a->size.hd, a->size.N1, a->size.N2, r, blocks, scores, kBugs);
  store(a->out.blocks, blocks);
  store(a->out.scores, scores);
  return SALASIM_OP_OK;
}

}  // extern "C"
