#include "jit/runtime/build.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/cuda/ptxas.hpp"
#include "backends/hip/hip_driver.hpp"
#include "jit/ir/printer.hpp"
#include "jit/runtime/compile.hpp"
#include "jit/runtime/disk_cache.hpp"
#include "jit/runtime/host_registry.hpp"
#include "jit/runtime/options.hpp"

namespace tessera::runtime {
namespace {

class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The number written just before `suffix` in a ptxas log ("24 bytes spill stores"), or -1.
int number_before(const std::string& log, const std::string& suffix) {
  const std::size_t at = log.find(suffix);
  if (at == std::string::npos) return -1;
  std::size_t begin = at;
  while (begin > 0 && log[begin - 1] == ' ') --begin;
  std::size_t end = begin;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(log[begin - 1]))) --begin;
  return begin == end ? -1 : std::atoi(log.substr(begin, end - begin).c_str());
}

int meta_int(const CacheEntry& e, const char* name) {
  auto it = e.meta.find(name);
  return it == e.meta.end() ? 0 : std::atoi(it->second.c_str());
}

cuda::JitOptions jit_options(const CompileOptions& o) {
  return cuda::JitOptions{.opt_level = o.opt_level, .max_registers = o.maxnreg, .line_info = o.line_info};
}

// PTX to a cubin: CUDA's ptxas where installed (the faster code, see backends/cuda/ptxas.hpp),
// else the driver's own assembler. Which one is not part of the disk cache key (a PTX entry that
// a build machine published must be found on the GPU machine).
cuda::JitResult assemble_ptx(const std::string& ptx, const std::string& target, const CompileOptions& o) {
  if (const std::string ptxas = backend::find_ptxas(); !ptxas.empty()) {
    auto r = backend::run_ptxas(ptxas, ptx, target, o.opt_level, o.maxnreg, o.line_info);
    return cuda::JitResult{std::move(r.cubin), std::move(r.log)};
  }
  return cuda::CudaDriver::require().compile_ptx(ptx, jit_options(o));
}

// Replaces a PTX payload by the cubin assembled from it for `arch`, the device's own architecture
// (PTX for an older target, TESSERA_CUDA_ARCH=sm_80, assembles for a newer GPU; a cubin would
// not load there), with the assembler's -v log.
void assemble_in_place(CacheEntry& e, const std::string& target, const CompileOptions& o, CompileTimes& times,
                       Stopwatch& clock) {
  auto jit = assemble_ptx(e.payload, target, o);
  times.assemble = clock.lap();
  e.payload = std::move(jit.cubin);
  e.meta["format"] = "cubin";
  e.meta["jit_log"] = std::move(jit.info_log);
}

// Trace -> disk cache (or passes, codegen and, for CUDA, ptxas to a cubin) -> an entry to load.
// The entry's payload is a cubin (CUDA) or an HSACO (HIP); a PTX entry, published by a warmup
// for a named target on a machine without a GPU, is assembled here and republished as a cubin.
struct Built {
  CacheEntry entry;
  bool from_disk = false;
};

Built build_entry(const detail::KernelDef& def, const LaunchOptions& opts, const std::vector<ir::ArgFacts>& facts,
                  const std::string& target, bool cuda, CompileTimes& times, Stopwatch& clock, bool bypass_disk) {
  auto m = trace_verified(def, opts.meta, facts, opts.num_warps, opts.num_stages);
  times.trace = clock.lap();
  const std::string key = disk_cache_key(ir::print(*m), target, opts);
  bool compiled_here = false;
  auto make = [&] {
    compiled_here = true;
    times.disk += clock.lap();
    optimize(*m, debug_checks(opts.compile));
    times.passes = clock.lap();
    CacheEntry e = device_entry(def.name, target, codegen(*m, target, opts.compile));
    times.codegen = clock.lap();
    if (cuda) assemble_in_place(e, cuda_device_arch(), opts.compile, times, clock);
    return e;
  };
  DiskCache& cache = DiskCache::global();
  Built b;
  b.entry = bypass_disk ? make() : cache.get_or_create(key, make);
  if (bypass_disk) cache.put(key, b.entry);
  b.from_disk = !compiled_here;
  if (b.from_disk) times.disk += clock.lap();
  if (cuda && b.entry.meta["format"] == "ptx") {
    assemble_in_place(b.entry, cuda_device_arch(), opts.compile, times, clock);
    cache.put(key, b.entry);
  }
  return b;
}

void finish_report(ResourceReport& r, const Compiled& c, const CompileTimes& times) {
  r.times_ms = {times.trace, times.passes, times.codegen, times.assemble, times.disk, times.load};
  if (env_options().dump_resources) std::fprintf(stderr, "tessera: %s\n", r.str().c_str());
  if (env_options().dump_times)
    std::fprintf(stderr, "tessera: kernel '%s' [%s] built in %s\n", r.kernel.c_str(), r.target.c_str(), times.str().c_str());
  if (r.max_threads >= 0 && r.max_threads < static_cast<int>(c.num_threads))
    throw LaunchError(fmt::format("kernel '{}': num_warps needs {} threads per program, but the compiled code allows "
                                  "at most {} ({} registers per thread); lower num_warps or set CompileOptions::maxnreg",
                                  r.kernel, c.num_threads, r.max_threads, r.registers));
}

// Loads a module on the current context and returns its function, allowed the shared memory it
// launches with.
cuda::CUfunction load_cuda_function(const std::string& image, const std::string& name, unsigned shared_bytes) {
  auto& drv = cuda::CudaDriver::require();
  cuda::CUmodule module = drv.load_module(image);
  cuda::CUfunction f = drv.get_function(module, name);
  // NVIDIA kernels declare their shared memory dynamic: its size goes with every launch, and above
  // the default 48 KB the function must be allowed it first (up to the device's opt-in limit).
  if (shared_bytes > 48 * 1024) {
    const int limit = drv.device_attribute(cuda::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    if (static_cast<long long>(shared_bytes) > limit)
      throw LaunchError(fmt::format("kernel '{}' needs {} bytes of shared memory per block; this device allows {} "
                                    "(smaller blocks or fewer num_stages)", name, shared_bytes, limit));
    drv.set_function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared_bytes));
  }
  return f;
}

// Loads the entry's module and function on the current context's device; fills what the driver
// reports about it.
void load_cuda(Compiled& c, CacheEntry& e) {
  auto& drv = cuda::CudaDriver::require();
  c.shared_bytes = static_cast<unsigned>(meta_int(e, "shared_bytes"));
  c.cu_function_name = e.meta["function"];
  const cuda::CUfunction f = load_cuda_function(e.payload, c.cu_function_name, c.shared_bytes);
  c.cu_image = e.payload;
  c.cu_functions.reset(new std::atomic<cuda::CUfunction>[static_cast<std::size_t>(drv.device_count())]);
  for (int i = 0; i < drv.device_count(); ++i) c.cu_functions[i].store(nullptr);
  const int device = drv.current_device();
  c.cu_functions[device].store(f, std::memory_order_release);
  ResourceReport& r = c.resources;
  r.registers = drv.function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_NUM_REGS);
  r.local_bytes = drv.function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
  r.shared_bytes = drv.function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) +
                   static_cast<int>(c.shared_bytes);
  r.max_threads = drv.function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  r.jit_log = e.meta["jit_log"];
  r.spill_store_bytes = number_before(r.jit_log, "bytes spill stores");
  r.spill_load_bytes = number_before(r.jit_log, "bytes spill loads");
}

void load_hip(Compiled& c, CacheEntry& e) {
  auto& drv = hip::HipDriver::require();
  c.hip_module = drv.load_module(e.payload);
  c.hip_function = drv.get_function(c.hip_module, e.meta["function"]);
  c.resources.shared_bytes = meta_int(e, "shared_bytes");
}

std::unique_ptr<Compiled> build_gpu(const detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                    const std::vector<ir::ArgFacts>& facts) {
  const bool cuda = ex == Executor::Cuda;
  const std::string target = cuda ? cuda_target_name() : hip_target_name();
  auto c = std::make_unique<Compiled>();
  c->executor = ex;
  CompileTimes times;
  Stopwatch clock;
  auto load = [&](Built& b) { cuda ? load_cuda(*c, b.entry) : load_hip(*c, b.entry); };
  Built b = build_entry(def, opts, facts, target, cuda, times, clock, /*bypass_disk=*/false);
  try {
    load(b);
  } catch (const DriverError&) {
    // Code from the disk cache that this driver or GPU does not take: compile afresh.
    if (!b.from_disk) throw;
    times = {};
    b = build_entry(def, opts, facts, target, cuda, times, clock, /*bypass_disk=*/true);
    load(b);
  }
  times.load = clock.lap();
  c->num_threads = static_cast<unsigned>(meta_int(b.entry, "num_threads"));
  c->takes_extents = cuda && debug_checks(opts.compile);
  ResourceReport& r = c->resources;
  r.kernel = def.name;
  r.target = target;
  r.num_threads = static_cast<int>(c->num_threads);
  r.from_disk_cache = b.from_disk;
  finish_report(r, *c, times);
  return c;
}

// The host targets: trace, passes, the lowering for "host" or "host64" (with line info, so that a
// bad access names its source line), then the host executor compiles the IR for the CPU. No disk
// cache: the executor's own compile is most of the time, and it cannot be cached.
std::unique_ptr<Compiled> build_host(const detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                     const std::vector<ir::ArgFacts>& facts) {
  const host::ExecutorHooks& executor = host::registered_executor();  // before any work: link tessera::host
  const std::string target = ex == Executor::Host64 ? "host64" : "host";
  auto c = std::make_unique<Compiled>();
  c->executor = ex;
  CompileTimes times;
  Stopwatch clock;
  auto m = trace_verified(def, opts.meta, facts, opts.num_warps, opts.num_stages);
  times.trace = clock.lap();
  optimize(*m, debug_checks(opts.compile));
  times.passes = clock.lap();
  host::KernelImage image;
  for (const auto& a : m->entry().args) image.arg_names.push_back(a->name_hint);
  CompileOptions with_lines = opts.compile;
  with_lines.line_info = true;
  lower::DeviceBinary bin = codegen(*m, target, with_lines);
  times.codegen = clock.lap();
  image.kernel = def.name;
  image.function = bin.kernel_name;
  image.llvm_ir = std::move(bin.data);
  image.num_threads = bin.num_threads;
  image.warp_size = lower::target_warp_size(target);
  image.shared_bytes = bin.shared_bytes;
  c->host_kernel = std::shared_ptr<void>(executor.load(image), executor.release);
  times.load = clock.lap();
  c->num_threads = static_cast<unsigned>(bin.num_threads);
  c->shared_bytes = static_cast<unsigned>(bin.shared_bytes);
  ResourceReport& r = c->resources;
  r.kernel = def.name;
  r.target = target;
  r.num_threads = bin.num_threads;
  r.shared_bytes = bin.shared_bytes;
  finish_report(r, *c, times);
  return c;
}

}  // namespace

std::string cuda_device_arch() {
  auto [major, minor] = cuda::CudaDriver::require().compute_capability();
  return fmt::format("sm_{}{}{}", major, minor, major == 9 ? "a" : "");
}

std::string cuda_target_name() {
  auto [major, minor] = cuda::CudaDriver::require().compute_capability();
  const std::string native = cuda_device_arch();
  // TESSERA_CUDA_ARCH=sm_80 runs the sm_80 code (mma.sync, no wgmma) on a newer GPU, which the
  // driver accepts as PTX for an older architecture: how the H200 tests sm_80's lowering.
  const char* arch = std::getenv("TESSERA_CUDA_ARCH");
  if (!arch || !*arch || native == arch) return native;
  if (std::string(arch) == "sm_80" && major >= 8) return arch;
  throw Error(fmt::format("TESSERA_CUDA_ARCH is '{}', which this GPU ({}) cannot run; use sm_80 (compute capability "
                          "8.0 or newer) or leave it unset", arch, native));
}

std::string hip_target_name() {
  const char* arch = std::getenv("TESSERA_HIP_ARCH");
  return arch && *arch ? arch : "gfx942";
}

}  // namespace tessera::runtime

namespace tessera {
std::string ResourceReport::str() const {
  auto known = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
  return fmt::format("kernel '{}' [{}]: {} registers, {} B spill stores, {} B spill loads, {} B local, {} B shared, "
                     "{} threads (at most {}){}",
                     kernel, target, known(registers), known(spill_store_bytes), known(spill_load_bytes),
                     known(local_bytes), known(shared_bytes), num_threads, known(max_threads),
                     from_disk_cache ? ", from the disk cache" : "");
}
}  // namespace tessera

namespace tessera::runtime {

cuda::CUfunction load_on_device(Compiled& c, int ordinal) {
  std::lock_guard<std::mutex> lock(c.cu_load_mutex);
  if (cuda::CUfunction f = c.cu_functions[ordinal].load(std::memory_order_acquire)) return f;
  const cuda::CUfunction f = load_cuda_function(c.cu_image, c.cu_function_name, c.shared_bytes);
  c.cu_functions[ordinal].store(f, std::memory_order_release);
  return f;
}

CacheEntry device_entry(const std::string& kernel, const std::string& target, lower::DeviceBinary bin) {
  return CacheEntry{std::move(bin.data),
                    {{"kernel", kernel}, {"function", bin.kernel_name}, {"target", target}, {"format", bin.format},
                     {"num_threads", std::to_string(bin.num_threads)}, {"shared_bytes", std::to_string(bin.shared_bytes)}}};
}

std::unique_ptr<Compiled> build_specialization(const detail::KernelDef& def, Executor ex, const LaunchOptions& opts,
                                               const std::vector<ir::ArgFacts>& facts) {
  if (ex == Executor::Cuda || ex == Executor::Hip) return build_gpu(def, ex, opts, facts);
  if (ex == Executor::Host || ex == Executor::Host64) return build_host(def, ex, opts, facts);
  auto c = std::make_unique<Compiled>();
  c->executor = ex;
  CompileTimes times;
  Stopwatch clock;
  c->module = trace_and_optimize(def, opts.meta, facts, opts.num_warps, opts.num_stages);
  times.passes = clock.lap();
  c->resources.kernel = def.name;
  c->resources.target = "interpreter";
  c->resources.num_threads = opts.num_warps * 32;
  finish_report(c->resources, *c, times);
  return c;
}

}  // namespace tessera::runtime
