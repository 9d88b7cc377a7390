// How libtessera.so reaches the host executor, which lives in a library of its own
// (libtessera_host.so, backends/host/): it carries the LLVM X86 backend and ORC JIT, which
// libtessera.so leaves out. That library registers these hooks when it is loaded (or when
// tessera::host::enable() is called); a launch on Executor::Host without it is a clear Error.
// LLVM-free: the compiled kernel crosses as LLVM IR text.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "tessera/args.hpp"
#include "tessera/export.hpp"

namespace tessera::host {

// A kernel compiled for a host target ("host", "host64"), as code generation made it.
struct KernelImage {
  std::string kernel;                   // the user's kernel name, for messages
  std::string function;                 // the kernel function's symbol in the module
  std::string llvm_ir;                  // the instrumented module (backends/host/host_target.cpp)
  int num_threads = 0, warp_size = 0;   // threads per program; lanes per warp
  int shared_bytes = 0;                 // shared memory per program
  std::vector<std::string> arg_names;   // per kernel argument ("" when unnamed), for messages
};

struct ExecutorHooks {
  // Compiles `image` for this CPU; returns the executor's handle. Throws tessera::Error.
  void* (*load)(const KernelImage& image) = nullptr;
  // Runs every program of `grid`; params[i] points to the bytes of argument i (as the GPU drivers
  // take them) and `args` gives the buffers the kernel may touch. Throws MemoryAccessError for an
  // access outside them, InternalError for a deadlock of the program's threads (a lowering bug).
  void (*launch)(void* kernel, const Dim3& grid, std::span<const ArgValue> args, void* const* params) = nullptr;
  void (*release)(void* kernel) noexcept = nullptr;
};

// Called by the host executor library; the last registration wins.
TESSERA_API void register_executor(const ExecutorHooks& hooks);

// The registered hooks. Throws tessera::Error, saying which library to link, when there are none.
const ExecutorHooks& registered_executor();

}  // namespace tessera::host
