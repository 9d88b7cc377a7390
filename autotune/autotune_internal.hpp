// What the autotuner's files share (not public: dsl/include/tessera/autotune.hpp is the API).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/autotune.hpp"

namespace tessera::tuning {

// ---- config.cpp
// Every field of a config, one per line, so that two different configs never serialize alike
// (Config::str() leaves defaults out). The disk entry's payload and the fingerprint's input.
std::string serialize(const Config& c);
// nullopt for text serialize() did not write (a damaged or foreign entry): the caller retunes.
std::optional<Config> parse_config(std::string_view text);
// A hash of a config list: the disk key holds it, so that editing the list retunes.
std::string fingerprint(const std::vector<Config>& configs);
std::string first_line(std::string_view text);
// "n=4096" per key argument (or "arg3=4096" when it has no name), comma-separated.
std::string key_label(const std::vector<KeyArg>& key, std::span<const std::int64_t> values);

// ---- persist.cpp
// The executor and GPU a tuning holds for: "interpreter", or the GPU target with the device's
// SM count and L2 size (an H100 and an H200 share sm_90a, not their best configs).
std::string device_text(Executor ex);
struct DiskKey {
  std::string kernel;
  std::vector<int> key_indices;
  std::vector<std::int64_t> key_values;
  std::string device;
  std::string configs;     // fingerprint()
  std::string fixed_meta;  // the launch's own meta and the heuristics' names: they change the code
};
std::string disk_key_text(const DiskKey& k);
// The config stored under this key text, from the disk cache of the current TESSERA_CACHE_DIR.
std::optional<std::pair<Config, double>> load_best(const std::string& key_text);
void store_best(const std::string& key_text, const TuningReport& report);

// ---- arg_memory.cpp
// reset_to_zero and restore_value: the bytes of the named pointer arguments, on their executor.
class ArgMemory {
 public:
  // Zeroing and restoring are ordered on `stream` (the caller's), never on the legacy default
  // stream or with a device-wide synchronize, so that work on the caller's other streams goes on.
  ArgMemory(const std::string& kernel, Executor ex, void* stream, std::span<const ArgValue> args,
            const AutotuneOptions& o);
  void zero() const;     // every reset_to_zero argument
  void restore() const;  // every restore_value argument, as it was when this object was made
  bool empty() const { return zero_.empty() && saved_.empty(); }

 private:
  struct Region {
    void* p = nullptr;
    std::size_t bytes = 0;
  };
  Executor ex_;
  void* stream_;
  std::vector<Region> zero_;
  std::vector<std::pair<Region, std::vector<unsigned char>>> saved_;
};

// ---- compile_all.cpp
// Runs compile(i) for i < count on min(count, hardware threads) std::threads; returns per index
// the exception's message ("" where compile returned).
std::vector<std::string> run_parallel(std::size_t count, const std::function<void(std::size_t)>& compile);
// The message of the exception in flight, whatever its type (call inside a catch block).
std::string current_exception_text();

// ---- progress.cpp
// The progress line and notes on stderr, silent when TESSERA_QUIET=1 (read at construction).
class Progress {
 public:
  Progress(std::string kernel, std::string key, std::size_t total);
  void note_skipped(const Config& c, const std::string& why);
  void update(std::size_t done, const ConfigResult* best);
  void finish();

 private:
  bool quiet_;
  std::string head_;
  std::size_t total_;
  bool open_ = false;
};

}  // namespace tessera::tuning
