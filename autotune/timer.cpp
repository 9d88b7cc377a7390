// The default timers, measured as triton.testing.do_bench measures (so that tuning results and
// the tuning's wall time compare with Triton's): a few runs estimate the time of one, then
// warm-up runs fill warmup_ms and timed runs fill rep_ms. On a GPU each timed run is bracketed
// by device events and preceded by a 256 MB memset, which evicts the L2 (60 MB on an H200) so
// that no config is timed on data its previous run left cached; the memset also keeps the GPU
// busy while the host queues the run, so the events time the kernel, not the launch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <vector>

#include "autotune/autotune_internal.hpp"
#include "backends/cuda/cuda_driver.hpp"
#include "backends/hip/hip_driver.hpp"
#include "tessera/buffer.hpp"

namespace tessera {
namespace tuning {
namespace {

constexpr std::size_t kFlushBytes = std::size_t{256} << 20;
constexpr int kEstimateRuns = 5;
constexpr std::int64_t kMaxRuns = 100000;  // a bound on events for a kernel that measures ~0 ms

std::int64_t runs_for(double budget_ms, double estimate_ms) {
  if (!(estimate_ms > 0)) return 1;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(budget_ms / estimate_ms), 1, kMaxRuns);
}

void prepare(const Benchmark& b) {
  if (b.prepare) b.prepare();
}

// The driver calls one event timer needs, for CUDA and HIP alike.
struct CudaOps {
  using Event = cuda::CUevent;
  using Stream = cuda::CUstream;
  static const cuda::CudaDriver& drv() { return cuda::CudaDriver::require(); }
  // Overwrites the L2 of the current context's device, ordered on `stream` (the caller's): a
  // memset on the legacy default stream would wait for every other stream's work.
  static void flush_l2(Stream stream) {
    // One buffer per device, allocated on its first timing and kept: 256 MB is small next to a
    // training job's memory, and an allocation per timing would cost more than the timing.
    static std::mutex mutex;
    static std::vector<cuda::CUdeviceptr> buffers;
    const int device = drv().current_device();
    cuda::CUdeviceptr buffer = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (buffers.empty()) buffers.assign(static_cast<std::size_t>(drv().device_count()), 0);
      auto& slot = buffers[static_cast<std::size_t>(device)];
      if (slot == 0) slot = drv().alloc(kFlushBytes);
      buffer = slot;
    }
    drv().memset_d8_async(buffer, 0, kFlushBytes, stream);
  }
};
struct HipOps {
  using Event = hip::hipEvent_t;
  using Stream = hip::hipStream_t;
  static const hip::HipDriver& drv() { return hip::HipDriver::require(); }
  // Not yet ordered on the caller's stream (HipDriver has no async memset): device 0 only.
  static void flush_l2(Stream) {
    static void* const buffer = drv().alloc(kFlushBytes);
    drv().memset_d8(buffer, 0, kFlushBytes);
  }
};

// Events created for one measurement and destroyed whatever happens (a run may throw).
template <class Ops>
class Events {
 public:
  explicit Events(std::size_t n) {
    events_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) events_.push_back(Ops::drv().create_event());
  }
  ~Events() {
    for (auto e : events_) {
      try {
        Ops::drv().destroy_event(e);
      } catch (...) {
        // A failed destroy leaks one event; throwing from a destructor would end the process.
      }
    }
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  typename Ops::Event operator[](std::size_t i) const { return events_[i]; }

 private:
  std::vector<typename Ops::Event> events_;
};

template <class Ops>
class EventTimer final : public Timer {
 public:
  std::vector<double> measure(const Config&, const Benchmark& b) override {
    const auto& drv = Ops::drv();
    const auto stream = static_cast<typename Ops::Stream>(b.stream);
    double estimate = 0;
    {
      Events<Ops> ev(2);
      drv.record_event(ev[0], stream);
      for (int i = 0; i < kEstimateRuns; ++i) {
        prepare(b);
        Ops::flush_l2(stream);
        b.run();
      }
      drv.record_event(ev[1], stream);
      drv.synchronize_event(ev[1]);
      estimate = drv.elapsed_ms(ev[0], ev[1]) / kEstimateRuns;
    }
    const std::int64_t warmups = runs_for(b.warmup_ms, estimate), repeats = runs_for(b.rep_ms, estimate);
    for (std::int64_t i = 0; i < warmups; ++i) {
      prepare(b);
      b.run();
    }
    Events<Ops> ev(static_cast<std::size_t>(2 * repeats));
    for (std::int64_t i = 0; i < repeats; ++i) {
      prepare(b);
      Ops::flush_l2(stream);
      drv.record_event(ev[2 * i], stream);
      b.run();
      drv.record_event(ev[2 * i + 1], stream);
    }
    drv.synchronize_event(ev[2 * repeats - 1]);
    std::vector<double> times(static_cast<std::size_t>(repeats));
    for (std::int64_t i = 0; i < repeats; ++i) times[i] = drv.elapsed_ms(ev[2 * i], ev[2 * i + 1]);
    return times;
  }
};

// The interpreter runs a launch to completion on the calling thread: the wall clock times it.
class WallClockTimer final : public Timer {
 public:
  std::vector<double> measure(const Config&, const Benchmark& b) override {
    const double estimate = once(b);  // also the warm-up: an interpreter has no caches to warm
    const std::int64_t repeats = runs_for(b.rep_ms, estimate);
    std::vector<double> times;
    times.reserve(static_cast<std::size_t>(repeats));
    for (std::int64_t i = 0; i < repeats; ++i) times.push_back(once(b));
    return times;
  }

 private:
  static double once(const Benchmark& b) {
    prepare(b);
    const auto t0 = std::chrono::steady_clock::now();
    b.run();
    synchronize(b.executor);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
};

}  // namespace
}  // namespace tuning

std::shared_ptr<Timer> default_timer(Executor ex) {
  switch (detail::resolve(ex)) {
    case Executor::Cuda: return std::make_shared<tuning::EventTimer<tuning::CudaOps>>();
    case Executor::Hip: return std::make_shared<tuning::EventTimer<tuning::HipOps>>();
    default: return std::make_shared<tuning::WallClockTimer>();
  }
}

}  // namespace tessera
