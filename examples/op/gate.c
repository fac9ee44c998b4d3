/* gate, y = x * sigmoid(z) (docs/spec.md section 3 step 8), as a shared library in plain C99 on salasim's C ABI
 * (include/salasim/op_abi.h): `salasim op gate --backend lib:libgate_c.so`. It reads and writes through the
 * tensors' strides and converts bf16 with the header's own functions. */
#include <math.h>
#include <salasim/op_abi.h>
#include <stdio.h>

int32_t salasim_op_abi_version(void) { return SALASIM_OP_ABI_VERSION; }

int salasim_op_gate(salasim_call* call, const salasim_gate_args* a) {
  const uint16_t* x = (const uint16_t*)a->in.x.data; /* [T, n] bf16 */
  const uint16_t* z = (const uint16_t*)a->in.z.data; /* [T, n] bf16 */
  uint16_t* y = (uint16_t*)a->out.out.data;          /* [T, n] bf16 */
  int64_t t, j;
  if (call->device != SALASIM_DEVICE_CPU) {
    snprintf(call->message, sizeof call->message, "this library runs on the CPU only");
    return SALASIM_OP_UNSUPPORTED;
  }
  for (t = 0; t < a->size.T; ++t)
    for (j = 0; j < a->size.n; ++j) {
      const float xv = salasim_float_from_bf16(x[t * a->in.x.stride[0] + j * a->in.x.stride[1]]);
      const float zv = salasim_float_from_bf16(z[t * a->in.z.stride[0] + j * a->in.z.stride[1]]);
      y[t * a->out.out.stride[0] + j * a->out.out.stride[1]] = salasim_bf16_from_float(xv / (1.0f + expf(-zv)));
    }
  return SALASIM_OP_OK;
}
