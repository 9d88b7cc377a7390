// The autotuner, as Triton's @triton.autotune: a list of configs (meta-parameters, num_warps,
// num_stages, compile options); the first call with new key values compiles every config in
// parallel, times each, keeps the fastest and launches it; later calls launch it at once.
//
//   auto tuned = ts::autotune(softmax, {{.meta = {{"BLOCK", 4096}}, .num_warps = 4},
//                                       {.meta = {{"BLOCK", 4096}}, .num_warps = 8}},
//                             {.key = {{3, "n_cols"}}});
//   tuned[{.grid = {rows}, .stream = s}](x, out, stride, n_cols);
//
// - Key: the integer arguments whose values select a tuning (Triton's `key`). Pointer and float
//   arguments are rejected as keys: only an integer's value is a property of the problem.
// - The winner per (kernel name, key values, device, tessera version, config list, and a hash of
//   the tile IR the kernel's body traces to) is kept in memory and in the disk cache
//   (TESSERA_CACHE_DIR; TESSERA_CACHE=0 turns it off), so a second process tunes nothing and an
//   edited body tunes again.
// - A config that fails to compile or launch is skipped (a note on stderr, its reason in the
//   report); if all fail, AutotuneError lists each config and why.
// - While tuning, one progress line on stderr; TESSERA_QUIET=1 silences it and the notes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/args.hpp"
#include "tessera/error.hpp"
#include "tessera/export.hpp"
#include "tessera/kernel.hpp"
#include "tessera/launch.hpp"
#include "tessera/runtime.hpp"

namespace tessera {

// Every config failed (or tuning was asked for with none); the message lists each and why.
class TESSERA_API AutotuneError : public Error {
 public:
  using Error::Error;
};

// One candidate: what it adds to a launch's options.
struct Config {
  MetaValues meta;
  int num_warps = 4;
  int num_stages = 1;
  CompileOptions compile;
  // "BLOCK=1024 num_warps=8"; num_stages and compile options only when not the default.
  TESSERA_API std::string str() const;
  bool operator==(const Config&) const = default;
};

// What one timing needs. `prepare` (untimed) resets and restores arguments before a run;
// `run` launches the config once on `stream`.
struct Benchmark {
  std::function<void()> prepare;
  std::function<void()> run;
  Executor executor = Executor::Interpreter;  // resolved, never Auto
  void* stream = nullptr;
  double warmup_ms = 25, rep_ms = 100;        // budgets, as triton.testing.do_bench
};

// Measures a config; the tuner takes the median of what it returns. Injectable (tests script it).
class Timer {
 public:
  virtual ~Timer() = default;
  // Milliseconds of each timed run of `b.run`; throwing skips the config with the message.
  virtual std::vector<double> measure(const Config& config, const Benchmark& b) = 0;
};
// As do_bench: a few runs estimate the time per run, then warm-up and repeats fill the budgets.
// CUDA/HIP: device events around each run, the L2 flushed (a 256 MB memset) before each one.
// The memset goes to the legacy default stream, which orders it before work on the launch's
// stream unless that stream was created non-blocking. Interpreter: the wall clock.
TESSERA_API std::shared_ptr<Timer> default_timer(Executor ex);

// A key argument: its index and, for the progress line only, a name.
struct KeyArg {
  int index = 0;
  std::string name;
  KeyArg(int i) : index(i) {}  // NOLINT: `.key = {3}` reads as Triton's key=["n"]
  KeyArg(int i, std::string n) : index(i), name(std::move(n)) {}
};

// A meta-parameter computed at each launch from the arguments and the config's meta (Triton's
// @heuristics), added to the config's meta before compiling and launching.
struct Heuristic {
  std::string name;
  std::function<std::int64_t(std::span<const ArgValue> args, const MetaValues& meta)> value;
};

struct AutotuneOptions {
  std::vector<KeyArg> key;
  // Triton's prune_configs_by/early_config_prune: (configs, key values) -> the configs to time.
  std::function<std::vector<Config>(const std::vector<Config>&, std::span<const std::int64_t>)> prune;
  std::vector<Heuristic> heuristics;
  // Pointer arguments zeroed before each timed run and before the launch that follows tuning,
  // for kernels that accumulate into outputs (atomics).
  std::vector<int> reset_to_zero;
  // Pointer arguments saved before tuning and restored before each timed run and after tuning,
  // for kernels that update an input in place.
  std::vector<int> restore_value;
  // The byte size of pointer argument `index`, for the two lists above. Default: ArgValue::bytes,
  // which a ts::Buffer, a container or a tensor argument carries; a raw pointer needs this.
  std::function<std::size_t(int index, std::span<const ArgValue> args)> arg_bytes;
  double warmup_ms = 25, rep_ms = 100;
  std::shared_ptr<Timer> timer;  // null: default_timer(executor)
  bool persist = true;           // keep winners in the disk cache
};

// One config's outcome: its median time, or why it was skipped.
struct ConfigResult {
  Config config;
  double ms = -1;               // median of the timed runs; -1 when skipped or not timed
  std::string error;            // non-empty: skipped, and why
  ResourceReport resources;     // from its compile (registers, shared memory), when it compiled
};

struct TuningReport {
  std::string kernel;
  std::vector<std::int64_t> key_values;
  std::string device;           // the executor and GPU the tuning holds for
  Config best;
  double best_ms = -1;
  bool from_disk = false;       // read from the disk cache: no config was compiled or timed here
  std::vector<ConfigResult> results;  // empty when from_disk
  TESSERA_API std::string str() const;  // a summary line, then one line per config
};

namespace detail {
// The type-erased autotuner behind Autotuned<...> (autotune/autotuner.cpp).
class TESSERA_API Autotuner {
 public:
  Autotuner(KernelDef& def, std::vector<Config> configs, AutotuneOptions options);
  ~Autotuner();
  Autotuner(const Autotuner&) = delete;
  Autotuner& operator=(const Autotuner&) = delete;
  // Tunes these key values if not known yet (memory, then disk), then launches the winner.
  void launch(const LaunchOptions& base, std::span<const ArgValue> args);
  TuningReport tune(const LaunchOptions& base, std::span<const ArgValue> args);
  // Memory, then disk; nullopt when these key values were never tuned. Never tunes.
  std::optional<TuningReport> lookup(const LaunchOptions& base, std::span<const ArgValue> args);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
}  // namespace detail

// What autotune() returns: index it with launch options (grid, stream, executor; the grid may be
// a function of the chosen meta), call the result with the kernel's arguments.
template <class... Params>
class Autotuned {
 public:
  Autotuned(Kernel<Params...> k, std::shared_ptr<detail::Autotuner> t) : kernel_(std::move(k)), tuner_(std::move(t)) {}

  class Launch {
   public:
    Launch(detail::Autotuner& t, LaunchOptions base) : tuner_(t), base_(std::move(base)) {}
    template <class... Args>
    void operator()(Args&&... args) const {
      const auto v = Kernel<Params...>::arg_values(std::forward<Args>(args)...);
      tuner_.launch(base_, std::span<const ArgValue>(v.data(), v.size()));
    }
    // Tunes (if not known yet) without the launch that would follow; returns the report.
    template <class... Args>
    TuningReport tune(Args&&... args) const {
      const auto v = Kernel<Params...>::arg_values(std::forward<Args>(args)...);
      return tuner_.tune(base_, std::span<const ArgValue>(v.data(), v.size()));
    }
    template <class... Args>
    std::optional<TuningReport> tuning_report(Args&&... args) const {
      const auto v = Kernel<Params...>::arg_values(std::forward<Args>(args)...);
      return tuner_.lookup(base_, std::span<const ArgValue>(v.data(), v.size()));
    }
    template <class... Args>
    std::optional<Config> best_config(Args&&... args) const {
      auto r = tuning_report(std::forward<Args>(args)...);
      return r ? std::optional<Config>(r->best) : std::nullopt;
    }

   private:
    detail::Autotuner& tuner_;
    LaunchOptions base_;
  };
  Launch operator[](LaunchOptions base) const { return Launch(*tuner_, std::move(base)); }

  // The winner for these arguments' key values on the default executor, if tuned (never tunes).
  template <class... Args>
  std::optional<Config> best_config(Args&&... args) const {
    return (*this)[LaunchOptions{}].best_config(std::forward<Args>(args)...);
  }
  template <class... Args>
  std::optional<TuningReport> tuning_report(Args&&... args) const {
    return (*this)[LaunchOptions{}].tuning_report(std::forward<Args>(args)...);
  }
  // Type-erased launch, as Kernel::launch.
  void launch(const LaunchOptions& base, const std::vector<ArgValue>& args) const {
    tuner_->launch(base, std::span<const ArgValue>(args.data(), args.size()));
  }
  const Kernel<Params...>& kernel() const { return kernel_; }

 private:
  Kernel<Params...> kernel_;  // keeps the KernelDef the tuner refers to alive
  std::shared_ptr<detail::Autotuner> tuner_;
};

// Throws LaunchError for an empty config list or a key/reset/restore index that does not name an
// argument of the right kind.
template <class... Params>
Autotuned<Params...> autotune(const Kernel<Params...>& k, std::vector<Config> configs, AutotuneOptions options = {}) {
  auto copy = k;
  auto t = std::make_shared<detail::Autotuner>(copy.def(), std::move(configs), std::move(options));
  return Autotuned<Params...>(std::move(copy), std::move(t));
}

}  // namespace tessera
