// detail::launch: validate, find or compile the specialization, launch it. The cache lives in the
// KernelDef's runtime_state, keyed by (executor/target, num_warps, per-argument specialization
// bits, meta-parameter values), so that a second launch of the same specialization compiles
// nothing and costs one hash lookup.
#include <fmt/format.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>
#include <unordered_map>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "jit/interp/interpreter.hpp"
#include "jit/ir/printer.hpp"
#include "jit/runtime/compile.hpp"
#include "jit/runtime/options.hpp"
#include "jit/runtime/validate.hpp"
#include "tessera/runtime.hpp"

namespace tessera {
namespace runtime {
namespace {

std::atomic<std::size_t> g_compiles{0}, g_launches{0};

struct KeyHash {
  std::size_t operator()(const std::vector<std::int64_t>& k) const noexcept {
    std::size_t h = 1469598103934665603ull;
    for (auto w : k) h = (h ^ static_cast<std::size_t>(w)) * 1099511628211ull;
    return h;
  }
};

struct Compiled {
  Executor executor;
  MetaValues meta;                         // names checked on a hit: the key holds values only
  std::unique_ptr<ir::Module> module;      // interpreter
  cuda::CUfunction cu_function = nullptr;  // CUDA
  cuda::CUmodule cu_module = nullptr;
  hip::hipFunction_t hip_function = nullptr;
  hip::hipModule_t hip_module = nullptr;
  unsigned num_threads = 0, shared_bytes = 0;
};

struct KernelState {
  std::shared_mutex mutex;
  std::mutex compile_mutex;  // one compile at a time per kernel: concurrent callers wait, then hit
  std::unordered_map<std::vector<std::int64_t>, std::unique_ptr<Compiled>, KeyHash> cache;
  // Entries displaced from `cache` (a key collision with different meta names). Another thread
  // may still be running one, having looked it up before the swap, so they live as long as the
  // kernel does.
  std::vector<std::unique_ptr<Compiled>> retired;
};

KernelState& state_of(detail::KernelDef& def) {
  static std::mutex create_mutex;
  auto existing = std::atomic_load(&def.runtime_state);
  if (existing) return *static_cast<KernelState*>(existing.get());
  std::lock_guard<std::mutex> lock(create_mutex);
  existing = std::atomic_load(&def.runtime_state);
  if (!existing) {
    existing = std::make_shared<KernelState>();
    std::atomic_store(&def.runtime_state, existing);
  }
  return *static_cast<KernelState*>(existing.get());
}

std::string cuda_target_name() {
  auto [major, minor] = cuda::CudaDriver::require().compute_capability();
  // Hopper's architecture-specific features (wgmma, setmaxnreg) need the 'a' target.
  return fmt::format("sm_{}{}{}", major, minor, major == 9 ? "a" : "");
}

std::string hip_target_name() {
  const char* arch = std::getenv("TESSERA_HIP_ARCH");
  return arch && *arch ? arch : "gfx942";
}

Executor resolve_executor(Executor requested) {
  if (requested != Executor::Auto) return requested;
  return default_executor().executor;
}

void build_key(std::vector<std::int64_t>& key, Executor ex, const LaunchOptions& opts,
               const std::vector<ir::ArgFacts>& facts) {
  key.clear();
  key.push_back(static_cast<std::int64_t>(ex));
  key.push_back(opts.num_warps);
  for (const auto& f : facts) key.push_back(f.divisibility * 2 + (f.equal_to_one ? 1 : 0));
  // The names go into the key too: otherwise {A=64, B=64} and {B=64, A=64}, or {BLOCK=64} and
  // {SIZE=64}, share a key and evict each other on every alternate launch (a compile each time).
  for (const auto& [name, value] : opts.meta) {
    key.push_back(static_cast<std::int64_t>(std::hash<std::string>{}(name)));
    key.push_back(value);
  }
}

std::unique_ptr<Compiled> compile(detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                  const std::vector<ir::ArgFacts>& facts) {
  auto c = std::make_unique<Compiled>();
  c->executor = ex;
  c->meta = opts.meta;
  if (ex == Executor::Interpreter) {
    c->module = trace_and_optimize(def, opts.meta, facts, opts.num_warps);
  } else if (ex == Executor::Cuda) {
    auto& drv = cuda::CudaDriver::require();
    auto bin = compile_for_target(def, opts.meta, facts, opts.num_warps, cuda_target_name());
    c->cu_module = drv.load_module(bin.data);
    c->cu_function = drv.get_function(c->cu_module, bin.kernel_name);
    c->num_threads = static_cast<unsigned>(bin.num_threads);
    c->shared_bytes = 0;  // static shared memory is declared in the module itself
  } else {
    auto& drv = hip::HipDriver::require();
    auto bin = compile_for_target(def, opts.meta, facts, opts.num_warps, hip_target_name());
    c->hip_module = drv.load_module(bin.data);
    c->hip_function = drv.get_function(c->hip_module, bin.kernel_name);
    c->num_threads = static_cast<unsigned>(bin.num_threads);
  }
  ++g_compiles;
  return c;
}

// Kernel parameters as the drivers want them: an array of pointers to each value's bytes.
struct ParamBuffer {
  std::vector<std::uint64_t> slots;
  std::vector<void*> ptrs;
  void** fill(const detail::KernelDef& def, std::span<const ArgValue> args) {
    slots.assign(args.size(), 0);
    ptrs.resize(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ArgValue& a = args[i];
      DType d = def.args[i].dtype;
      void* slot = &slots[i];
      if (a.kind == ArgValue::Kind::Pointer) {
        std::memcpy(slot, &a.p, sizeof(void*));
      } else if (d == DType::F32) {
        float f = a.kind == ArgValue::Kind::Float ? static_cast<float>(a.f) : static_cast<float>(a.i);
        std::memcpy(slot, &f, sizeof f);
      } else if (d == DType::F64) {
        double f = a.kind == ArgValue::Kind::Float ? a.f : static_cast<double>(a.i);
        std::memcpy(slot, &f, sizeof f);
      } else if (ir::is_float(d)) {
        throw LaunchError(fmt::format("kernel '{}': scalar arguments of type {} are not supported yet; pass f32",
                                      def.name, ir::dtype_name(d)));
      } else {
        std::memcpy(slot, &a.i, sizeof a.i);  // little-endian: the low bytes are the narrower int
      }
      ptrs[i] = slot;
    }
    return ptrs.data();
  }
};

std::array<std::int64_t, 3> grid_limits(Executor ex) {
  if (ex == Executor::Cuda) {
    // Asked once: three driver calls per launch would be a third of a launch's cost.
    static const std::array<std::int64_t, 3> limits = [] {
      auto g = cuda::CudaDriver::require().max_grid_dims();
      return std::array<std::int64_t, 3>{g[0], g[1], g[2]};
    }();
    return limits;
  }
  return {2147483647, 65535, 65535};
}

}  // namespace
}  // namespace runtime

ExecutorChoice default_executor() {
  static const ExecutorChoice choice = [] {
    if (runtime::env_options().interpret) return ExecutorChoice{Executor::Interpreter, "interpreter (TESSERA_INTERPRET=1)"};
    std::string why_cuda, why_hip;
    if (cuda::CudaDriver::available(&why_cuda))
      return ExecutorChoice{Executor::Cuda, "CUDA GPU, target " + runtime::cuda_target_name()};
    if (hip::HipDriver::available(&why_hip))
      return ExecutorChoice{Executor::Hip, "HIP GPU, target " + runtime::hip_target_name()};
    return ExecutorChoice{Executor::Interpreter, "interpreter: no GPU (" + why_cuda + "; " + why_hip + ")"};
  }();
  return choice;
}

RuntimeStats runtime_stats() { return {runtime::g_compiles.load(), runtime::g_launches.load()}; }

namespace detail {

void launch(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args) {
  using namespace runtime;
  validate_arguments(def, args);
  validate_num_warps(def, opts.num_warps);
  // validate_arguments lets an integer feed a float parameter (the type-erased path); the
  // interpreter binds strictly by kind, so convert here, as C++ would, once for everything below.
  thread_local std::vector<ArgValue> converted;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgValue::Kind::Int || !ir::is_float(def.args[i].dtype)) continue;
    converted.assign(args.begin(), args.end());
    for (std::size_t j = i; j < converted.size(); ++j)
      if (converted[j].kind == ArgValue::Kind::Int && ir::is_float(def.args[j].dtype))
        converted[j] = ArgValue::floating(static_cast<double>(converted[j].i), def.args[j].dtype);
    args = std::span<const ArgValue>(converted.data(), converted.size());
    break;
  }
  const Executor ex = resolve_executor(opts.executor);
  const auto grid = resolve_grid(def, opts, grid_limits(ex));
  KernelState& state = state_of(def);

  // Reused per thread: a launch of a cached specialization allocates nothing here.
  thread_local std::vector<std::int64_t> key;
  thread_local std::vector<ir::ArgFacts> facts;
  specialization_facts_into(def, args, facts);
  build_key(key, ex, opts, facts);

  const Compiled* c = nullptr;
  {
    std::shared_lock lock(state.mutex);
    auto it = state.cache.find(key);
    if (it != state.cache.end() && it->second->meta == opts.meta) c = it->second.get();
  }
  if (!c) {
    std::lock_guard<std::mutex> compiling(state.compile_mutex);
    std::shared_lock lock(state.mutex);
    auto it = state.cache.find(key);
    if (it != state.cache.end() && it->second->meta == opts.meta) {
      c = it->second.get();
    } else {
      lock.unlock();
      auto fresh = compile(def, ex, opts, facts);
      std::unique_lock wlock(state.mutex);
      auto& slot = state.cache[key];
      // A (hash-colliding) entry with other meta names is replaced but kept alive: see `retired`.
      if (slot) state.retired.push_back(std::move(slot));
      slot = std::move(fresh);
      c = slot.get();
    }
  }
  ++g_launches;

  const Dim3 g3{static_cast<std::uint32_t>(grid[0]), static_cast<std::uint32_t>(grid[1]),
                static_cast<std::uint32_t>(grid[2])};
  if (ex == Executor::Interpreter) {
    interp::run(*c->module, g3, args);
    return;
  }
  thread_local ParamBuffer params;
  void** p = params.fill(def, args);
  if (ex == Executor::Cuda) {
    auto& drv = cuda::CudaDriver::require();
    thread_local bool context_set = false;
    if (!context_set) {
      drv.ensure_context();
      context_set = true;
    }
    drv.launch(c->cu_function, {g3[0], g3[1], g3[2]}, {c->num_threads, 1, 1}, c->shared_bytes,
               static_cast<cuda::CUstream>(opts.stream), p);
    return;
  }
  hip::HipDriver::require().launch(c->hip_function, {g3[0], g3[1], g3[2]}, {c->num_threads, 1, 1}, c->shared_bytes,
                                   static_cast<hip::hipStream_t>(opts.stream), p);
}

Artifact compile_only(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                      const std::string& target) {
  using namespace runtime;
  validate_arguments(def, args);
  validate_num_warps(def, opts.num_warps);
  auto facts = specialization_facts(def, args);
  std::string ir_text;
  auto bin = compile_for_target(def, opts.meta, facts, opts.num_warps, target, &ir_text);
  return Artifact{bin.format, bin.assembly, bin.data, std::move(ir_text)};
}

}  // namespace detail
}  // namespace tessera
