// How a kernel is launched: grid, meta-parameters, num_warps, stream, executor.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/args.hpp"
#include "tessera/error.hpp"
#include "tessera/export.hpp"

namespace tessera {

namespace ir { class Module; struct ArgFacts; }

// Compile-time meta-parameters of one launch, in the order given: {{"BLOCK", 1024}, ...}.
using MetaValues = std::vector<std::pair<std::string, std::int64_t>>;

// A launch grid: up to three dims, or a function of the meta-parameters (as Triton's grid lambda).
class Grid {
 public:
  Grid() = default;
  Grid(std::initializer_list<std::int64_t> dims) {
    if (dims.size() == 0 || dims.size() > 3) throw LaunchError("a grid has 1 to 3 dimensions, got " + std::to_string(dims.size()));
    int i = 0;
    for (auto d : dims) dims_[i++] = d;
  }
  template <class F>
    requires std::is_invocable_r_v<Dim3, F, const MetaValues&>
  Grid(F f) : fn_(std::move(f)) {}
  // The grid for these meta-parameters; throws LaunchError for a zero or negative dimension.
  std::array<std::int64_t, 3> resolve(const MetaValues& meta) const {
    if (!fn_) return dims_;
    Dim3 d = fn_(meta);
    return {d[0], d[1], d[2]};
  }

 private:
  std::array<std::int64_t, 3> dims_{0, 1, 1};
  std::function<Dim3(const MetaValues&)> fn_;
};

// Host and Host64 run the code generated for a GPU-like target on the CPU (warps of 32 or of 64
// threads, each program's threads as fibers, every memory access checked): a test executor, which
// needs the host executor library (link tessera::host; see tessera/host.hpp).
enum class Executor : std::uint8_t { Auto, Cuda, Hip, Interpreter, Host, Host64 };

// Settings of code generation and the device assembler, per launch (so per autotuning config);
// part of the specialization key and of the disk cache key.
struct CompileOptions {
  int opt_level = 3;       // device assembler -O0..-O3 (ptxas / driver JIT: CU_JIT_OPTIMIZATION_LEVEL)
  int maxnreg = 0;         // registers per thread at most (.maxnreg, CU_JIT_MAX_REGISTERS); 0: no cap
  bool line_info = false;  // .loc lines of the kernel's C++ source in the PTX, kept by the JIT (-lineinfo)
  // Lets the GPU code fuse a float multiply and the add or subtract that uses it into one fma
  // (rounded once), as Triton's enable_fp_fusion (on by default there too): fewer instructions
  // and usually a more accurate result, but not the interpreter's bits, which round a*b and then
  // a*b + c. false keeps every multiply and add rounded on its own (mul.rn/add.rn on NVIDIA,
  // which ptxas may not fuse either). The interpreter and the host executors never fuse.
  bool fp_fusion = true;
  // Debug mode, as Triton's debug=True: compiled code checks every ts::device_assert and every
  // signed integer + - * for overflow (the failing program, element and source line reported; on a
  // GPU the launch traps). Slower, larger code. TESSERA_DEBUG=1 turns it on for every launch. The
  // interpreter checks asserts either way (and never overflow: it wraps, as the code without it).
  bool debug = false;
  bool operator==(const CompileOptions&) const = default;
};

struct LaunchOptions {
  Grid grid;
  MetaValues meta;
  int num_warps = 4;
  // Software-pipelining depth of the loads feeding a loop's ts::dot, as Triton's num_stages
  // (1..8, part of the key): 1 loads each K step when it runs; n >= 2 keeps n - 1 steps in flight
  // (cp.async into a ring of n shared-memory stages, or a register prefetch where the loads do
  // not allow it; jit/transforms/pipeline_loads.hpp). Loops without a dot are not affected.
  int num_stages = 1;
  void* stream = nullptr;               // CUstream / hipStream_t; null: the legacy default stream
  // The CUDA device to run on (its ordinal), whose stream `stream` must be. -1: where the tensor
  // arguments are (a ts::Buffer, a DLPack tensor), else the calling thread's current device (the
  // current CUDA context, as a framework's set_device leaves it), else device 0. A kernel is
  // compiled once per process and loaded on each device on its first launch there.
  int device = -1;
  Executor executor = Executor::Auto;   // Auto: TESSERA_EXECUTOR, TESSERA_INTERPRET=1, else the GPU if any, else interp
  CompileOptions compile;
};

namespace detail {

// One kernel argument's declared type (from the C++ signature of the kernel function).
struct ArgSpec {
  DType dtype = DType::I32;     // Ptr for pointers
  DType pointee = DType::F32;   // meaningful for pointers
  bool do_not_specialize = false;
};

struct TraceState;  // defined by the tracer (dsl/src); the kernel body runs against it

// Everything the runtime needs to know about a kernel definition.
struct KernelDef {
  std::string name;
  std::vector<ArgSpec> args;
  std::source_location where;
  // Runs the user's kernel function on symbolic arguments: one per ArgSpec, in order.
  std::function<void(TraceState&)> body;
  // Compiled specializations and the launch fast path's state (owned by jit/runtime).
  std::shared_ptr<void> runtime_state;
};

// Traces, compiles (or fetches from the cache) and launches. Implemented in jit/runtime.
TESSERA_API void launch(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args);

}  // namespace detail
}  // namespace tessera
