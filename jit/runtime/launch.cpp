// detail::launch, detail::warmup and detail::compile_only: validate, find or build the
// specialization, launch it. The in-memory cache lives in the KernelDef's runtime_state, keyed by
// (executor, num_warps, num_stages, compile options, per-argument specialization bits, which list
// of meta-parameter names, their values); a second launch of the same specialization builds
// nothing and costs one hash lookup over integers: no string is hashed and nothing is allocated.
// Building (jit/runtime/build.cpp) happens once per key and process: concurrent callers of one
// key wait for the one build (single flight); different keys build in parallel.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "jit/interp/interpreter.hpp"
#include "jit/ir/printer.hpp"
#include "jit/runtime/build.hpp"
#include "jit/runtime/compile.hpp"
#include "jit/runtime/device.hpp"
#include "jit/runtime/disk_cache.hpp"
#include "jit/runtime/host_registry.hpp"
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

// One specialization: built once, by the first caller; the others wait for it.
struct Slot {
  std::atomic<Compiled*> ready{nullptr};
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::exception_ptr error;
  std::unique_ptr<Compiled> compiled;
};

struct KernelState {
  std::shared_mutex mutex;
  std::unordered_map<std::vector<std::int64_t>, std::shared_ptr<Slot>, KeyHash> cache;
  // The lists of meta-parameter names launches used, in order; a key holds the index of its list.
  std::vector<std::vector<std::string>> name_lists;
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

bool same_names(const std::vector<std::string>& names, const MetaValues& meta) {
  if (names.size() != meta.size()) return false;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] != meta[i].first) return false;
  return true;
}

// The index of this launch's list of meta names: string compares against the few lists the
// kernel has seen (usually one), no hashing; a new list is added once.
std::int64_t name_list_index(KernelState& state, const MetaValues& meta) {
  {
    std::shared_lock lock(state.mutex);
    for (std::size_t i = 0; i < state.name_lists.size(); ++i)
      if (same_names(state.name_lists[i], meta)) return static_cast<std::int64_t>(i);
  }
  std::unique_lock lock(state.mutex);
  for (std::size_t i = 0; i < state.name_lists.size(); ++i)
    if (same_names(state.name_lists[i], meta)) return static_cast<std::int64_t>(i);
  std::vector<std::string> names;
  for (const auto& [name, value] : meta) names.push_back(name);
  state.name_lists.push_back(std::move(names));
  return static_cast<std::int64_t>(state.name_lists.size() - 1);
}

void build_key(std::vector<std::int64_t>& key, KernelState& state, Executor ex, const LaunchOptions& opts,
               const std::vector<ir::ArgFacts>& facts) {
  key.clear();
  key.push_back(static_cast<std::int64_t>(ex));
  key.push_back(opts.num_warps);
  key.push_back(opts.num_stages);
  key.push_back(opts.compile.opt_level);
  key.push_back(opts.compile.maxnreg);
  key.push_back(opts.compile.line_info ? 1 : 0);
  key.push_back(opts.compile.fp_fusion ? 1 : 0);
  key.push_back(debug_checks(opts.compile) ? 1 : 0);
  for (const auto& f : facts) key.push_back(f.divisibility * 2 + (f.equal_to_one ? 1 : 0));
  key.push_back(name_list_index(state, opts.meta));
  for (const auto& [name, value] : opts.meta) key.push_back(value);
}

// Builds the slot's specialization (the caller created the slot) and publishes the outcome. A
// failed build leaves the key free, so that a later call tries again and reports its own error.
void build_into(Slot& slot, KernelState& state, const std::vector<std::int64_t>& key, detail::KernelDef& def,
                Executor ex, const LaunchOptions& opts, const std::vector<ir::ArgFacts>& facts) {
  std::unique_ptr<Compiled> built;
  std::exception_ptr error;
  try {
    built = build_specialization(def, ex, opts, facts);
    ++g_compiles;
  } catch (...) {
    error = std::current_exception();
  }
  if (error) {
    std::unique_lock lock(state.mutex);
    auto it = state.cache.find(key);
    if (it != state.cache.end() && it->second.get() == &slot) state.cache.erase(it);
  }
  std::lock_guard<std::mutex> lock(slot.mutex);
  slot.error = error;
  slot.compiled = std::move(built);
  slot.finished = true;
  slot.ready.store(slot.compiled.get(), std::memory_order_release);
  slot.done.notify_all();
}

// The specialization of `key`, built here or by a concurrent caller. `on_miss` runs before this
// thread would build (the CUDA-graph capture check).
template <class OnMiss>
Compiled& find_or_build(KernelState& state, const std::vector<std::int64_t>& key, detail::KernelDef& def,
                              Executor ex, const LaunchOptions& opts, const std::vector<ir::ArgFacts>& facts,
                              OnMiss&& on_miss) {
  std::shared_ptr<Slot> slot;
  {
    std::shared_lock lock(state.mutex);
    auto it = state.cache.find(key);
    if (it != state.cache.end()) {
      if (Compiled* c = it->second->ready.load(std::memory_order_acquire)) return *c;
      slot = it->second;
    }
  }
  bool leader = false;
  if (!slot) {
    on_miss();
    std::unique_lock lock(state.mutex);
    auto& entry = state.cache[key];
    if (!entry) {
      entry = std::make_shared<Slot>();
      leader = true;
    }
    slot = entry;
  }
  if (leader) build_into(*slot, state, key, def, ex, opts, facts);
  std::unique_lock<std::mutex> lock(slot->mutex);
  slot->done.wait(lock, [&] { return slot->finished; });
  if (slot->error) std::rethrow_exception(slot->error);
  return *slot->compiled;
}

// Kernel parameters as the drivers want them: an array of pointers to each value's bytes; with
// `extents` (Compiled::takes_extents), each pointer argument's size in bytes after them all,
// UINT64_MAX where it is not known (a raw pointer: not checked).
struct ParamBuffer {
  std::vector<std::uint64_t> slots;
  std::vector<void*> ptrs;
  void** fill(const detail::KernelDef& def, std::span<const ArgValue> args, bool extents = false) {
    std::size_t count = args.size();
    if (extents)
      for (const auto& spec : def.args) count += spec.dtype == DType::Ptr ? 1 : 0;
    slots.assign(count, 0);
    ptrs.resize(count);
    for (std::size_t i = 0, hidden = args.size(); extents && i < args.size(); ++i) {
      if (def.args[i].dtype != DType::Ptr) continue;  // in the kernel's order (lower::declare_kernel)
      slots[hidden] = args[i].sized ? static_cast<std::uint64_t>(args[i].bytes) : ~std::uint64_t{0};
      ptrs[hidden] = &slots[hidden];
      ++hidden;
    }
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

int cuda_launch_device(const detail::KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                       const cuda::CudaDriver& drv, cuda::CUcontext current) {
  const int device = argument_device(def, opts.device, args);
  if (device >= 0) return device;
  return std::max(0, drv.device_of(current));
}

}  // namespace runtime

ExecutorChoice default_executor() {
  static const ExecutorChoice choice = [] {
    const std::string& named = runtime::env_options().executor;
    if (named == "interpreter") return ExecutorChoice{Executor::Interpreter, "interpreter (TESSERA_EXECUTOR=interpreter)"};
    if (named == "host") return ExecutorChoice{Executor::Host, "host SIMT target, warps of 32 (TESSERA_EXECUTOR=host)"};
    if (named == "host64") return ExecutorChoice{Executor::Host64, "host SIMT target, warps of 64 (TESSERA_EXECUTOR=host64)"};
    if (named == "cuda") return ExecutorChoice{Executor::Cuda, "CUDA GPU (TESSERA_EXECUTOR=cuda)"};
    if (named == "hip") return ExecutorChoice{Executor::Hip, "HIP GPU (TESSERA_EXECUTOR=hip)"};
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

namespace {

// Arguments as the interpreter binds them: validate_arguments lets an integer feed a float
// parameter (the type-erased path), converted here once, as C++ would.
std::span<const ArgValue> bind_arguments(const KernelDef& def, std::span<const ArgValue> args) {
  thread_local std::vector<ArgValue> converted;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ArgValue::Kind::Int || !ir::is_float(def.args[i].dtype)) continue;
    converted.assign(args.begin(), args.end());
    for (std::size_t j = i; j < converted.size(); ++j)
      if (converted[j].kind == ArgValue::Kind::Int && ir::is_float(def.args[j].dtype))
        converted[j] = ArgValue::floating(static_cast<double>(converted[j].i), def.args[j].dtype);
    return std::span<const ArgValue>(converted.data(), converted.size());
  }
  return args;
}

void validate_options(const KernelDef& def, const LaunchOptions& opts) {
  runtime::validate_num_warps(def, opts.num_warps);
  if (opts.num_stages < 1 || opts.num_stages > 8)
    throw LaunchError(fmt::format("kernel '{}': num_stages must be 1 to 8, got {}", def.name, opts.num_stages));
  if (opts.compile.opt_level < 0 || opts.compile.opt_level > 3)
    throw LaunchError(fmt::format("kernel '{}': CompileOptions::opt_level must be 0 to 3, got {}", def.name,
                                  opts.compile.opt_level));
  if (opts.compile.maxnreg < 0 || opts.compile.maxnreg > 255)
    throw LaunchError(fmt::format("kernel '{}': CompileOptions::maxnreg must be 0 (no cap) to 255, got {}", def.name,
                                  opts.compile.maxnreg));
}

// Every entry point's checks, then its arguments as bound (one binding for every path, so that a
// warmup or a compile for a named target specializes exactly as the launch will).
std::span<const ArgValue> checked_arguments(const KernelDef& def, const LaunchOptions& opts,
                                            std::span<const ArgValue> args) {
  // Any other name compiles: code generation turns it into a valid symbol (lower::kernel_symbol).
  if (def.name.empty())
    throw ProgramError(fmt::format("{}:{}: a kernel needs a name: ts::kernel(\"\", ...) has none",
                                   def.where.file_name(), def.where.line()));
  runtime::validate_arguments(def, args);
  validate_options(def, opts);
  return bind_arguments(def, args);
}

// The specialization these options and arguments select, built if needed. Reused per thread: a
// lookup of a cached specialization allocates nothing.
runtime::Compiled& specialization(KernelDef& def, Executor ex, const LaunchOptions& opts,
                                        std::span<const ArgValue> args) {
  using namespace runtime;
  KernelState& state = state_of(def);
  thread_local std::vector<std::int64_t> key;
  thread_local std::vector<ir::ArgFacts> facts;
  specialization_facts_into(def, args, facts);
  build_key(key, state, ex, opts, facts);
  return find_or_build(state, key, def, ex, opts, facts, [&] {
    // Under CUDA graph capture nothing may compile, load or synchronize: the specialization must
    // exist before capture begins (warmup).
    if (ex == Executor::Cuda && cuda::CudaDriver::require().is_capturing(static_cast<cuda::CUstream>(opts.stream)))
      throw LaunchError(fmt::format("kernel '{}': this specialization is not compiled yet and the stream is capturing a "
                                    "CUDA graph, where tessera cannot compile or load; call warmup(...) with the same "
                                    "options and arguments before capturing",
                                    def.name));
  });
}

// Runs an entry point so that only tessera::Error leaves it: running out of host memory (a huge
// specialization, the interpreter's tiles, a cache entry) or a standard-library length error
// becomes an Error naming the kernel, instead of an exception a caller catching tessera::Error
// would miss. A try block costs nothing on the launch fast path unless something throws.
template <class F>
decltype(auto) only_tessera_errors(const KernelDef& def, const char* what, F&& f) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc& e) {
    throw Error(fmt::format("kernel '{}': out of host memory during {} ({})", def.name, what, e.what()));
  } catch (const std::length_error& e) {
    throw Error(fmt::format("kernel '{}': a size too large for host memory during {} ({})", def.name, what, e.what()));
  }
}

void launch_unguarded(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args) {
  using namespace runtime;
  args = checked_arguments(def, opts, args);
  const Executor ex = launch_executor(def, opts.executor, args);
  const auto grid = resolve_grid(def, opts, grid_limits(ex));
  const Dim3 g3{static_cast<std::uint32_t>(grid[0]), static_cast<std::uint32_t>(grid[1]),
                static_cast<std::uint32_t>(grid[2])};
  if (ex == Executor::Cuda) {
    const OnLaunchDevice on_device(def, opts, args);  // for the build, the load and the launch
    Compiled& c = specialization(def, ex, opts, args);
    ++g_launches;
    thread_local ParamBuffer params;
    on_device.driver().launch(cuda_function(c, on_device.device()), {g3[0], g3[1], g3[2]}, {c.num_threads, 1, 1},
                              c.shared_bytes, static_cast<cuda::CUstream>(opts.stream),
                              params.fill(def, args, c.takes_extents));
    return;
  }
  const Compiled* c = &specialization(def, ex, opts, args);
  ++g_launches;
  if (ex == Executor::Interpreter) {
    interp::run(*c->module, g3, args);
    return;
  }
  thread_local ParamBuffer params;
  void** p = params.fill(def, args);
  if (ex == Executor::Host || ex == Executor::Host64) {
    host::registered_executor().launch(c->host_kernel.get(), g3, args, p);
    return;
  }
  hip::HipDriver::require().launch(c->hip_function, {g3[0], g3[1], g3[2]}, {c->num_threads, 1, 1}, c->shared_bytes,
                                   static_cast<hip::hipStream_t>(opts.stream), p);
}

}  // namespace

void launch(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args) {
  only_tessera_errors(def, "a launch", [&] { launch_unguarded(def, opts, args); });
}

ResourceReport warmup(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args) {
  using namespace runtime;
  return only_tessera_errors(def, "a warmup", [&] {
    auto checked = checked_arguments(def, opts, args);
    const Executor ex = launch_executor(def, opts.executor, checked);
    if (ex == Executor::Cuda) {
      const OnLaunchDevice on_device(def, opts, checked);
      Compiled& c = specialization(def, ex, opts, checked);
      cuda_function(c, on_device.device());  // loaded there too, so that a launch under graph capture loads nothing
      return c.resources;
    }
    return specialization(def, ex, opts, checked).resources;
  });
}

std::string kernel_fingerprint(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args) {
  using namespace runtime;
  return only_tessera_errors(def, "tracing", [&] {
    auto checked = checked_arguments(def, opts, args);
    auto m = trace_verified(def, opts.meta, specialization_facts(def, checked), opts.num_warps, opts.num_stages);
    return key_hash_hex(ir::print(*m));
  });
}

namespace {
Artifact compile_only_unguarded(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                                const std::string& target) {
  using namespace runtime;
  args = checked_arguments(def, opts, args);
  auto m = trace_verified(def, opts.meta, specialization_facts(def, args), opts.num_warps, opts.num_stages);
  const std::string key = disk_cache_key(ir::print(*m), target, opts);
  optimize(*m, debug_checks(opts.compile));
  std::string ir_text;
  auto bin = codegen(*m, target, opts.compile, &ir_text);
  // Publish for a later process on a GPU of this target (it assembles PTX to a cubin and
  // republishes it); an entry already there (perhaps a cubin) is left alone.
  DiskCache& cache = DiskCache::global();
  if (!cache.get(key)) cache.put(key, device_entry(def.name, target, bin));
  return Artifact{bin.format, bin.assembly, bin.data, std::move(ir_text)};
}
}  // namespace

Artifact compile_only(KernelDef& def, const LaunchOptions& opts, std::span<const ArgValue> args,
                      const std::string& target) {
  return only_tessera_errors(def, "a compile", [&] { return compile_only_unguarded(def, opts, args, target); });
}

}  // namespace detail
}  // namespace tessera
