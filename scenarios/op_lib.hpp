// The lib: backend of scenarios/op_user.hpp: a shared library on the C ABI of include/salasim/op_abi.h
// (scenarios/op_abi.hpp lays out its argument structs), loaded into this process.
#pragma once
#include <string>

#include "scenarios/op_sweep.hpp"

namespace salasim {

// `spec` is "lib:PATH". The library is loaded now (a missing file, a load error, no salasim_op_abi_version() or
// another version: a salasim::Error, exit 2). Each case calls salasim_op_NAME with host pointers and a null stream
// on the inputs as the CUDA path stores them, in the element types of the ABI; an op the library lacks is a skip.
// The library runs inside salasim's process: a crash in it ends salasim (exec: runs code in a process of its own).
OpBackend lib_backend(const std::string& spec);

}  // namespace salasim
