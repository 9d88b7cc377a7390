// Shared by the autotuner tests: a scripted timer, a private cache folder per test, stderr
// capture, and small kernels whose results prove which config ran.
#pragma once
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Relative to this file: the GPU tests include it too, with another include path.
#include "../api/launch_test_util.hpp"
#include "../common/capture_output.hpp"
#include "../scoped_env.hpp"

namespace ts = tessera;

namespace autotune_test {

using tessera_test::ScopedEnv;

// A fresh TESSERA_CACHE_DIR, removed at the end; TESSERA_QUIET=1 unless a test says otherwise.
class TestEnv {
 public:
  TestEnv() : dir_(make_dir()), cache_("TESSERA_CACHE_DIR", dir_.string()), on_("TESSERA_CACHE", std::nullopt),
              quiet_("TESSERA_QUIET", "1") {}
  ~TestEnv() { std::filesystem::remove_all(dir_); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  static std::filesystem::path make_dir() {
    std::string t = (std::filesystem::temp_directory_path() / "tessera_autotune_XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    return t;
  }
  std::filesystem::path dir_;
  ScopedEnv cache_, on_, quiet_;
};

// Returns scripted times per config (by default 1 ms), counts its calls, and launches each
// config `runs` times through prepare/run, so that the arguments see what real timing does.
struct FakeTimer : ts::Timer {
  std::function<std::vector<double>(const ts::Config&)> script;
  std::function<void(const ts::Config&)> on_measure;
  int runs = 2;
  std::atomic<int> calls{0};
  std::vector<std::string> timed;  // config strings, in order
  std::vector<double> measure(const ts::Config& c, const ts::Benchmark& b) override {
    ++calls;
    timed.push_back(c.str());
    if (on_measure) on_measure(c);
    for (int i = 0; i < runs; ++i) {
      if (b.prepare) b.prepare();
      b.run();
    }
    return script ? script(c) : std::vector<double>{1.0};
  }
};

inline std::int64_t meta_of(const ts::MetaValues& meta, const std::string& name) {
  for (const auto& [n, v] : meta)
    if (n == name) return v;
  FAIL("no meta-parameter " << name);
  return 0;
}

// A grid of cdiv(n, BLOCK) programs for whatever BLOCK the tuner chose.
inline ts::Grid grid_for(std::int64_t n) {
  return ts::Grid([n](const ts::MetaValues& m) {
    return ts::Dim3{static_cast<std::uint32_t>(ts::cdiv(n, meta_of(m, "BLOCK"))), 1, 1};
  });
}

inline ts::LaunchOptions interp(std::int64_t n) {
  return {.grid = grid_for(n), .executor = ts::Executor::Interpreter};
}

// out = x + y. With a Log, counts traces and the threads they ran on (to see the parallel
// compile). The log is a template argument (an object of static storage), not a capture: a kernel
// function captures nothing.
struct TraceLog {
  std::atomic<int> traces{0};
  std::mutex mutex;
  std::vector<std::thread::id> threads;
};
template <TraceLog* Log = nullptr>
auto make_add(const char* name) {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int block = static_cast<int>(ts::meta("BLOCK"));
    if (block > 1024) throw ts::ProgramError("BLOCK " + std::to_string(block) + " is too large for this kernel");
    // A runtime test: GCC 12 with -fsanitize=undefined does not take `Log != nullptr` for a constant.
    if (TraceLog* log = Log; log != nullptr) {
      ++log->traces;
      std::lock_guard<std::mutex> lock(log->mutex);
      log->threads.push_back(std::this_thread::get_id());
    }
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) + ts::load(y + offs, mask), mask);
  });
}

inline std::vector<ts::Config> block_configs(std::initializer_list<std::int64_t> blocks) {
  std::vector<ts::Config> c;
  for (auto b : blocks) c.push_back({.meta = {{"BLOCK", b}}, .num_warps = 4});
  return c;
}

struct AddData {
  std::vector<float> hx, hy;
  ts::Buffer<float> x, y, out;
  explicit AddData(std::size_t n) : hx(n), hy(n), out(n, ts::Executor::Interpreter) {
    for (std::size_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i) * 0.5f, hy[i] = 3.0f - static_cast<float>(i);
    x = ts::Buffer<float>::from_host(hx, ts::Executor::Interpreter);
    y = ts::Buffer<float>::from_host(hy, ts::Executor::Interpreter);
  }
  bool correct() const {
    const auto got = out.to_host();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != hx[i] + hy[i]) return false;
    return true;
  }
};

// out[i] += x[i] with atomics: each run adds once more.
inline auto make_accumulate(const char* name) {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int block = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    ts::atomic_add(out + offs, ts::load(x + offs, offs < n), offs < n);
  });
}
// x[i] = x[i] * 2 + 1 in place: each run applies it once more.
inline auto make_in_place(const char* name) {
  return ts::kernel(name, [](ts::Ptr<float> x, ts::Int n) {
    const int block = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    ts::store(x + offs, ts::load(x + offs, offs < n) * 2.0f + 1.0f, offs < n);
  });
}
inline std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 17) - 4.0f;
  return v;
}

// What the process writes to stderr while `f` runs.
template <class F>
std::string capture_stderr(F&& f) {
  return test_output::capture_fd(2, std::forward<F>(f));
}

}  // namespace autotune_test
