// detail::Autotuner: per key values, find the winning config (memory, then disk, else tune:
// compile all in parallel, time the ones that compiled, keep the fastest), then launch it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <tuple>

#include "autotune/autotune_internal.hpp"
#include "jit/runtime/device.hpp"
#include "jit/runtime/validate.hpp"
#include "jit/ir/types.hpp"
#include "tessera/buffer.hpp"

namespace tessera::detail {

using tuning::current_exception_text;

namespace {

double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;  // as torch.quantile(0.5)
}

std::string indent_continuations(const std::string& text) {
  std::string s;
  for (char c : text) s += c == '\n' ? std::string("\n      ") : std::string(1, c);
  return s;
}

std::string meta_text(const MetaValues& meta) {
  std::string s;
  for (const auto& [name, value] : meta) s += fmt::format("{}={};", name, value);
  return s;
}

}  // namespace

struct Autotuner::Impl {
  KernelDef& def;
  std::vector<Config> configs;
  AutotuneOptions options;
  std::string fingerprint;
  // By (executor, key values, the launch's own meta): what a tuning depends on besides the
  // kernel and the configs, which are this object's.
  using Key = std::tuple<int, std::vector<std::int64_t>, MetaValues>;
  std::shared_mutex mutex;
  std::map<Key, std::shared_ptr<const TuningReport>> tuned;
  std::mutex tuning;  // one tuning at a time; a second caller for the same key waits, then hits

  Impl(KernelDef& d, std::vector<Config> c, AutotuneOptions o)
      : def(d), configs(std::move(c)), options(std::move(o)), fingerprint(tuning::fingerprint(configs)) {}

  void validate() const {
    if (configs.empty()) throw LaunchError(fmt::format("autotune of kernel '{}': the config list is empty", def.name));
    for (const auto& k : options.key) {
      if (k.index < 0 || static_cast<std::size_t>(k.index) >= def.args.size())
        throw LaunchError(fmt::format("autotune of kernel '{}': key names argument {}, but the kernel has {} arguments",
                                      def.name, k.index, def.args.size()));
      const DType d = def.args[static_cast<std::size_t>(k.index)].dtype;
      if (d == DType::Ptr || ir::is_float(d))
        throw LaunchError(fmt::format("autotune of kernel '{}': key names argument {}, a {} argument; a key names integer "
                                      "arguments (sizes, strides), whose values select a tuning",
                                      def.name, k.index, d == DType::Ptr ? "pointer" : "floating-point"));
    }
    for (const auto* list : {&options.reset_to_zero, &options.restore_value})
      for (int i : *list)
        if (i < 0 || static_cast<std::size_t>(i) >= def.args.size() || def.args[static_cast<std::size_t>(i)].dtype != DType::Ptr)
          throw LaunchError(fmt::format("autotune of kernel '{}': {} names argument {}, which is not a pointer argument",
                                        def.name, list == &options.reset_to_zero ? "reset_to_zero" : "restore_value", i));
    for (const auto& h : options.heuristics)
      if (h.name.empty() || !h.value)
        throw LaunchError(fmt::format("autotune of kernel '{}': a heuristic needs a name and a function", def.name));
  }

  std::vector<std::int64_t> key_values(std::span<const ArgValue> args) const {
    std::vector<std::int64_t> v;
    v.reserve(options.key.size());
    for (const auto& k : options.key) {
      const auto i = static_cast<std::size_t>(k.index);
      if (i >= args.size() || args[i].kind != ArgValue::Kind::Int)
        throw LaunchError(fmt::format("autotune of kernel '{}': key argument {} is not an integer in this call",
                                      def.name, k.index));
      v.push_back(args[i].i);
    }
    return v;
  }

  // The launch options of one config: the caller's grid, stream and meta, the config's meta,
  // num_warps, num_stages and compile options, then the heuristics' meta.
  LaunchOptions launch_options(const LaunchOptions& base, Executor ex, const Config& c,
                               std::span<const ArgValue> args) const {
    LaunchOptions o;
    o.grid = base.grid;
    o.stream = base.stream;
    o.executor = ex;
    o.num_warps = c.num_warps;
    o.num_stages = c.num_stages;
    o.compile = c.compile;
    o.meta = base.meta;
    for (const auto& m : c.meta) {
      for (const auto& b : base.meta)
        if (b.first == m.first)
          throw LaunchError(fmt::format("autotune of kernel '{}': meta-parameter {} is set by the launch and by the "
                                        "config [{}]; leave tuned meta-parameters to the configs", def.name, m.first,
                                        c.str()));
      o.meta.push_back(m);
    }
    for (const auto& h : options.heuristics) {
      const std::int64_t value = h.value(args, o.meta);
      auto it = std::find_if(o.meta.begin(), o.meta.end(), [&](const auto& m) { return m.first == h.name; });
      if (it != o.meta.end()) it->second = value;
      else o.meta.emplace_back(h.name, value);
    }
    return o;
  }

  std::shared_ptr<const TuningReport> find(const Key& key) {
    std::shared_lock lock(mutex);
    auto it = tuned.find(key);
    return it == tuned.end() ? nullptr : it->second;
  }
  std::shared_ptr<const TuningReport> remember(const Key& key, TuningReport r) {
    auto p = std::make_shared<const TuningReport>(std::move(r));
    std::unique_lock lock(mutex);
    return tuned.emplace(key, std::move(p)).first->second;
  }

  // What the kernel's body computes: the traced IR of the first config that traces, so that a
  // persisted result is not reused after the body changes.
  std::string body_fingerprint(const LaunchOptions& base, Executor ex, std::span<const ArgValue> args) const {
    for (const auto& c : configs) {
      try {
        return detail::kernel_fingerprint(def, launch_options(base, ex, c, args), args);
      } catch (const Error&) {
        // this config does not trace (it will be skipped when tuning): try the next
      }
    }
    return "";
  }

  std::string disk_key(const Key& key, const std::string& device, const std::string& body) const {
    tuning::DiskKey k{def.name, {}, std::get<1>(key), device, fingerprint + ";body " + body, meta_text(std::get<2>(key))};
    for (const auto& a : options.key) k.key_indices.push_back(a.index);
    for (const auto& h : options.heuristics) k.fixed_meta += "heuristic " + h.name + ";";
    return tuning::disk_key_text(k);
  }

  // Memory, then disk (remembered in memory on a hit).
  std::shared_ptr<const TuningReport> known(const Key& key, Executor ex, const std::string& body) {
    if (auto r = find(key)) return r;
    if (!options.persist) return nullptr;
    const std::string device = tuning::device_text(ex);
    auto hit = tuning::load_best(disk_key(key, device, body));
    if (!hit) return nullptr;
    TuningReport r{def.name, std::get<1>(key), device, hit->first, hit->second, true, {}};
    return remember(key, std::move(r));
  }

  std::shared_ptr<const TuningReport> get_or_tune(const LaunchOptions& base, Executor ex,
                                                  std::span<const ArgValue> args) {
    Key key{static_cast<int>(ex), key_values(args), base.meta};
    if (auto r = find(key)) return r;
    std::lock_guard<std::mutex> one_at_a_time(tuning);
    const std::string body = options.persist ? body_fingerprint(base, ex, args) : "";
    if (auto r = known(key, ex, body)) return r;
    TuningReport r = run_tuning(base, ex, args, std::get<1>(key));
    // A single candidate was neither compared nor timed: nothing a later process could skip.
    if (options.persist && r.results.size() > 1) tuning::store_best(disk_key(key, r.device, body), r);
    return remember(key, std::move(r));
  }

  TuningReport run_tuning(const LaunchOptions& base, Executor ex, std::span<const ArgValue> args,
                          const std::vector<std::int64_t>& kv);
};

TuningReport Autotuner::Impl::run_tuning(const LaunchOptions& base, Executor ex, std::span<const ArgValue> args,
                                         const std::vector<std::int64_t>& kv) {
  const std::string label = tuning::key_label(options.key, kv);
  std::vector<Config> candidates = options.prune ? options.prune(configs, kv) : configs;
  if (candidates.empty())
    throw AutotuneError(fmt::format("autotune of kernel '{}' ({}): the prune hook left no config", def.name, label));
  TuningReport report{def.name, kv, tuning::device_text(ex), {}, -1, false, {}};
  const std::size_t n = candidates.size();
  report.results.resize(n);
  // Before compiling: a wrong reset_to_zero/restore_value argument is the caller's error, not a config's.
  const tuning::ArgMemory memory(def.name, ex, base.stream, args, options);

  std::vector<LaunchOptions> launch(n);
  std::vector<std::string> errors(n);
  for (std::size_t i = 0; i < n; ++i) {
    report.results[i].config = candidates[i];
    try {
      launch[i] = launch_options(base, ex, candidates[i], args);
    } catch (...) {
      errors[i] = current_exception_text();
    }
  }
  const auto compile_errors = tuning::run_parallel(n, [&](std::size_t i) {
    if (errors[i].empty()) report.results[i].resources = detail::warmup(def, launch[i], args);
  });

  tuning::Progress progress(def.name, label, n);
  std::size_t done = 0;
  std::vector<std::size_t> compiled;
  for (std::size_t i = 0; i < n; ++i) {
    if (errors[i].empty()) errors[i] = compile_errors[i];
    if (errors[i].empty()) {
      compiled.push_back(i);
      continue;
    }
    report.results[i].error = errors[i];
    progress.note_skipped(candidates[i], errors[i]);
    ++done;
  }

  const ConfigResult* best = nullptr;
  if (compiled.size() == 1) {
    best = &report.results[compiled[0]];  // nothing to compare it with: not timed, as in Triton
  } else if (!compiled.empty()) {
    auto timer = options.timer ? options.timer : default_timer(ex);
    Benchmark bench;
    if (!memory.empty()) bench.prepare = [&memory] { memory.zero(); memory.restore(); };
    bench.executor = ex;
    bench.stream = base.stream;
    bench.warmup_ms = options.warmup_ms;
    bench.rep_ms = options.rep_ms;
    progress.update(done, best);
    for (std::size_t i : compiled) {
      auto& result = report.results[i];
      bench.run = [&, i] { detail::launch(def, launch[i], args); };
      try {
        auto times = timer->measure(candidates[i], bench);
        if (times.empty()) throw InternalError("the timer returned no times");
        result.ms = median(std::move(times));
        if (!best || result.ms < best->ms) best = &result;
      } catch (...) {
        result.error = current_exception_text();
        progress.note_skipped(candidates[i], result.error);
      }
      progress.update(++done, best);
    }
  }
  // The state the launch that follows expects: zeroed outputs, inputs as the caller left them.
  memory.zero();
  memory.restore();
  progress.finish();
  if (!best) {
    std::string why;
    for (const auto& r : report.results)
      why += fmt::format("\n  [{}]: {}", r.config.str(), indent_continuations(r.error));
    throw AutotuneError(fmt::format("autotune of kernel '{}'{}: every config failed ({} of them):{}", def.name,
                                    label.empty() ? "" : " (" + label + ")", n, why));
  }
  report.best = best->config;
  report.best_ms = best->ms;
  return report;
}

Autotuner::Autotuner(KernelDef& def, std::vector<Config> configs, AutotuneOptions options)
    : impl_(std::make_unique<Impl>(def, std::move(configs), std::move(options))) {
  impl_->validate();
}

Autotuner::~Autotuner() = default;

namespace {
// Tuning on CUDA runs with the launch device's primary context current, so that its timing
// events, the zeroing and restoring of arguments and its launches all belong to that device.
template <class F>
decltype(auto) on_launch_device(const KernelDef& def, Executor ex, const LaunchOptions& base,
                                std::span<const ArgValue> args, F&& f) {
  if (ex != Executor::Cuda) return f();
  const runtime::OnLaunchDevice on_device(def, base, args);
  return f();
}
}  // namespace

void Autotuner::launch(const LaunchOptions& base, std::span<const ArgValue> args) {
  const Executor ex = runtime::launch_executor(impl_->def, base.executor, args);
  const auto report = on_launch_device(impl_->def, ex, base, args, [&] { return impl_->get_or_tune(base, ex, args); });
  detail::launch(impl_->def, impl_->launch_options(base, ex, report->best, args), args);
}

TuningReport Autotuner::tune(const LaunchOptions& base, std::span<const ArgValue> args) {
  const Executor ex = runtime::launch_executor(impl_->def, base.executor, args);
  return *on_launch_device(impl_->def, ex, base, args, [&] { return impl_->get_or_tune(base, ex, args); });
}

std::optional<TuningReport> Autotuner::lookup(const LaunchOptions& base, std::span<const ArgValue> args) {
  const Executor ex = runtime::launch_executor(impl_->def, base.executor, args);
  const Impl::Key key{static_cast<int>(ex), impl_->key_values(args), base.meta};
  auto r = impl_->find(key);
  if (!r && impl_->options.persist) r = impl_->known(key, ex, impl_->body_fingerprint(base, ex, args));
  if (!r) return std::nullopt;
  return *r;
}

}  // namespace tessera::detail
