// Runtime queries and compile-only entry points (no launch).
#pragma once
#include <cstddef>
#include <span>
#include <string>

#include "tessera/launch.hpp"

namespace tessera {

// Which executor an Executor::Auto launch uses in this process, and why.
struct ExecutorChoice {
  Executor executor;
  std::string description;   // e.g. "CUDA on NVIDIA H200 (sm_90a)" or "interpreter: no NVIDIA driver (...)"
};
TESSERA_API ExecutorChoice default_executor();

// How many programs run at once at most, to first order: the multiprocessors (NVIDIA SMs, AMD
// CUs) of the executor's device 0 (tessera requires every device to be of one architecture); 1
// for the interpreter and the host targets. What a host-side heuristic sizes a grid by (split-K,
// persistent kernels).
TESSERA_API int multiprocessor_count(Executor ex = Executor::Auto);

// The target a launch on `ex` compiles for: "sm_90a" or "sm_80" (TESSERA_CUDA_ARCH honoured),
// "gfx942", "host", "host64" or "interpreter". What a host-side heuristic picks tiles by where
// the targets' register files or instructions differ (attention's backward on sm_80 and sm_90a).
TESSERA_API std::string target_name(Executor ex = Executor::Auto);

struct RuntimeStats {
  std::size_t compiles = 0;   // specializations compiled (GPU) or traced (interpreter)
  std::size_t launches = 0;
};
TESSERA_API RuntimeStats runtime_stats();

// What one compiled specialization uses, from the device assembler's log and the driver's
// function attributes (-1 where the executor cannot tell, e.g. the interpreter or a target
// compiled without a GPU). Printed for every compile with TESSERA_DUMP=resources.
struct ResourceReport {
  std::string kernel, target;     // target: "sm_90a", "gfx942", "interpreter"
  int registers = -1;             // per thread
  int spill_store_bytes = -1, spill_load_bytes = -1;
  int local_bytes = -1;           // per thread (stack frame and spills)
  int shared_bytes = -1;          // static shared memory per program
  int max_threads = -1;           // the most threads per program this function can launch with
  int num_threads = 0;            // threads per program it is launched with (num_warps x warp size)
  bool from_disk_cache = false;
  std::string jit_log;            // the device assembler's info log, if any
  // Where the build's time went, in milliseconds (a disk hit skips passes, codegen, assemble).
  struct Times {
    double trace = 0, passes = 0, codegen = 0, assemble = 0, disk = 0, load = 0;
    double total() const { return trace + passes + codegen + assemble + disk + load; }
  } times_ms;
  TESSERA_API std::string str() const;  // one line: "kernel 'k' [sm_90a]: 32 registers, 0 B spills, ..."
};

namespace detail {
// Compiles the specialization a launch with these options and arguments would use (memory and
// disk cache), without launching it: what the autotuner compiles in parallel, and what code
// that captures CUDA graphs calls before capturing.
TESSERA_API ResourceReport warmup(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args);

// A hash of the tile IR these options and arguments trace to: what the kernel's body computes,
// for keys that must change when the body does (the autotuner's persisted results).
TESSERA_API std::string kernel_fingerprint(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args);

// What compiling a kernel for a named target produced, without loading or launching it.
struct Artifact {
  std::string format;     // "ptx" or "hsaco"
  std::string assembly;   // PTX or AMDGCN text
  std::string data;       // what the driver loads
  std::string ir;         // the tile IR after layouts
};
// Works without a GPU, for any target ("sm_90a", "sm_80", "gfx942", "gfx90a"), and publishes the
// result to the disk cache, so that a build machine can fill the cache for deployment.
TESSERA_API Artifact compile_only(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                                  const std::string& target);
}  // namespace detail
}  // namespace tessera
