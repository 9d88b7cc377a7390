// The host executor's compiler: LLVM IR text from the host target (host_target.cpp) to machine
// code for this CPU, through LLVM's ORC JIT (LLJIT) and X86 backend. The only LLVM user of
// libtessera_host.so; this header stays LLVM-free.
#pragma once
#include <cstddef>
#include <cstdint>

#include "jit/runtime/host_registry.hpp"

namespace tessera::host {

// One kernel's machine code.
struct JitCode {
  void (*entry)(void* const* params) = nullptr;  // host_abi::kEntry: unpacks the arguments, runs the kernel
  std::byte* shared = nullptr;   // the module's shared memory (null when it has none)
  std::uint64_t* arg_bounds = nullptr;  // host_abi::kArgBounds: (base, bytes) per argument, or null
  bool synchronizes = false;     // calls a barrier or a shuffle: its threads must run as fibers
  void* dylib = nullptr;         // the JIT's bookkeeping, for jit_release
};

// Parses, optimizes (O1 for this CPU) and compiles `image`. Throws InternalError when the IR does
// not parse or LLVM cannot compile it (a bug of the host target).
JitCode jit_compile(const KernelImage& image);
// Frees the code of `dylib` (JitCode::dylib); no kernel of it may run any more.
void jit_release(void* dylib) noexcept;

// The CPU the code is compiled for: "x86-64-v3" (AVX2, FMA, F16C) where this one has those, else
// "x86-64"; TESSERA_HOST_CPU overrides it (e.g. "x86-64", so that f16 conversions go through the
// executor's own routines, half_conversions.cpp). Every choice computes the same results.
const char* jit_cpu();

}  // namespace tessera::host
