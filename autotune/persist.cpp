// Tuning results on disk, in the compile cache's folder (jit/runtime/disk_cache.hpp): one entry
// per (kernel, key values, device, tessera version, config list), whose payload is the winning
// config. The entry is found by its full key text, so any change to those fields is a miss.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <memory>
#include <mutex>

#include "autotune/autotune_internal.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "jit/runtime/disk_cache.hpp"

#ifndef TESSERA_VERSION
#error "TESSERA_VERSION is defined by the build (CMakeLists.txt)"
#endif

namespace tessera::tuning {
namespace {

// CUDA's attribute numbers not declared in cuda_api.hpp (stable across driver versions).
constexpr int kCudaAttributeL2CacheSize = 38;

// The cache of the TESSERA_CACHE_DIR in effect now. The compile cache reads the environment once
// per process (DiskCache::global()); the autotuner reads it at each tuning, so that a program (or
// a test) that points TESSERA_CACHE_DIR elsewhere is honoured. One object per folder, never
// destroyed, so that each folder's warnings are printed once.
runtime::DiskCache& current_cache() {
  static std::mutex mutex;
  // The map is never destroyed either: reachable until exit, so that LeakSanitizer sees no leak.
  static auto& by_dir = *new std::map<std::string, runtime::DiskCache*>();
  const runtime::CacheSettings s = runtime::cache_settings_from_environment();
  auto& global = runtime::DiskCache::global();
  if (global.dir() == s.dir && global.enabled() == s.enabled) return global;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string id = fmt::format("{}|{}", s.enabled ? 1 : 0, s.dir.string());
  auto& slot = by_dir[id];
  if (!slot) slot = new runtime::DiskCache(s);
  return *slot;
}

}  // namespace

std::string device_text(Executor ex) {
  const ExecutorChoice auto_choice = default_executor();
  if (ex == Executor::Interpreter) return "interpreter";
  if (ex == Executor::Host || ex == Executor::Host64) return ex == Executor::Host ? "host target" : "host64 target";
  if (ex == Executor::Cuda) {
    auto& drv = cuda::CudaDriver::require();
    const std::string target =
        auto_choice.executor == Executor::Cuda ? auto_choice.description : "CUDA GPU";
    const auto [major, minor] = drv.compute_capability();
    return fmt::format("{} (cc {}.{}, {} SMs, {} B L2)", target, major, minor,
                       drv.device_attribute(cuda::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                       drv.device_attribute(kCudaAttributeL2CacheSize));
  }
  auto& drv = hip::HipDriver::require();
  const std::string target = auto_choice.executor == Executor::Hip ? auto_choice.description : "HIP GPU";
  return fmt::format("{} ({} CUs)", target, drv.multiprocessor_count());
}

std::string disk_key_text(const DiskKey& k) {
  return runtime::make_key_text({{"what", "autotune result v1"},
                                 {"kernel", k.kernel},
                                 {"key_indices", fmt::format("{}", fmt::join(k.key_indices, ","))},
                                 {"key_values", fmt::format("{}", fmt::join(k.key_values, ","))},
                                 {"device", k.device},
                                 {"tessera", TESSERA_VERSION},
                                 {"configs", k.configs},
                                 {"fixed_meta", k.fixed_meta}});
}

std::optional<std::pair<Config, double>> load_best(const std::string& key_text) {
  auto entry = current_cache().get(key_text);
  if (!entry) return std::nullopt;
  auto config = parse_config(entry->payload);
  if (!config) return std::nullopt;  // written by something else under our key: retune
  double ms = -1;
  if (auto it = entry->meta.find("ms"); it != entry->meta.end()) {
    try {
      ms = std::stod(it->second);
    } catch (...) {
      ms = -1;  // a display field only
    }
  }
  return std::pair{*config, ms};
}

void store_best(const std::string& key_text, const TuningReport& report) {
  runtime::CacheEntry entry;
  entry.payload = serialize(report.best);
  // Shown by `tessera-cache list`.
  entry.meta = {{"format", "autotune"},
                {"kernel", report.kernel},
                {"config", report.best.str()},
                {"ms", fmt::format("{:.6f}", report.best_ms)}};
  current_cache().put(key_text, entry);
}

}  // namespace tessera::tuning
