// A user's implementation of an op as the backend of `salasim op` (docs/check-your-implementation.md):
//   exec:'PROGRAM ARGS'   any program, run through /bin/sh as `PROGRAM ARGS --in X.h5 --out Y.h5` with SALASIM_OP
//                         set to the op's name: X.h5 holds the op's inputs as docs/op.md describes an input file,
//                         Y.h5 receives its outputs at their tap paths (/op/lightning/gla/out), as `salasim op --out`
//                         writes them. Exit 0: outputs written; 77: the case is not supported (skipped; the last line
//                         printed says why); anything else: the case fails with what it printed.
//   py:MODULE[:FUNCTION]  a Python callable given the inputs and attributes by name as numpy arrays, returning its
//                         outputs by name, run through salasim's driver (scenarios/op_driver.py) in a Python that
//                         imports h5py, numpy and MODULE; without FUNCTION, the module's function named after the op.
//   lib:PATH.so           a shared library on the C ABI of include/salasim/op_abi.h, loaded into this process and
//                         called with host pointers and a null stream.
// Each runs on the inputs as the CUDA path stores them (op::as_gpu_stores), so it sees what the CUDA kernels see.
#pragma once
#include <string>

#include "scenarios/op_sweep.hpp"

namespace salasim {

// Whether `backend` starts with exec:, py: or lib:.
bool is_user_spec(const std::string& backend);

struct UserOptions {
  std::string python;  // py: the interpreter to run (--python); "" finds one
};

// The backend, checked before any case runs: an empty program, a malformed py: spec, no Python that imports h5py,
// numpy and the module, a library that does not load or lacks salasim_op_abi_version() or returns another version:
// a salasim::Error naming the spec and what is wrong (exit 2). Per case: the implementation's skip and failure are
// OpRun's skip and failed; outputs it leaves out are OpRun::not_produced; a program the shell cannot
// start (exit 126 or 127) or a py: module that cannot be imported ends the run with a salasim::Error.
OpBackend user_backend(const std::string& spec, const UserOptions& o);

// The interpreter a py: backend runs: `given` (it must import h5py, numpy and `module`), else the first of python3
// on PATH and /usr/bin/python3 that does, as `salasim env` looks for h5py. `module` is a module name ("" or a file
// path: only h5py and numpy are checked). None: a salasim::Error naming what each candidate lacked.
std::string find_python(const std::string& given, const std::string& module);

// The Python signature a py: callable of op `s` is called with, and what it returns, as the docs show it:
// "gla(q, k, v, gamma, tau, form, state=None) -> out, state". Every argument is passed by name: the inputs present
// (an optional one that is absent is left out) and every attribute, defaults filled in.
std::string py_signature(const op::OpSpec& s);

// The driver's source (scenarios/op_driver.py, built into the binary so it runs from anywhere).
const char* op_driver_source();

}  // namespace salasim
