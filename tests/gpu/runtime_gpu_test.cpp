// The runtime on the GPU: disk cache hits (cubin, and PTX published by a warmup for a named
// target), a corrupted entry, resource reports and compile options, CUDA graph capture, and many
// threads launching and compiling one kernel at once. Every launch's output is checked.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "compare.hpp"
#include "tests/pipeline/scale_kernel.hpp"

namespace ts = tessera;
namespace fs = std::filesystem;

namespace {

// out = x * tag, a kernel no earlier run has cached (tests/pipeline/scale_kernel.hpp); the tag is
// a meta-parameter, given by options() below.
auto make_scale() { return runtime_test::make_scale("scale"); }
using runtime_test::unique_tag;

struct Data {
  std::vector<float> host;
  ts::Buffer<float> x, out;
  explicit Data(int n) : host(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i % 97) - 40.0f;
    x = ts::Buffer<float>::from_host(host, ts::Executor::Cuda);
    out = ts::Buffer<float>::from_host(std::vector<float>(host.size(), -12345.0f), ts::Executor::Cuda);
  }
  void check(float tag) const {
    std::vector<float> want(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) want[i] = host[i] * tag;
    gpu_test::check_equal("x * tag", out.to_host(), want);
  }
};

ts::LaunchOptions options(float tag, int n, int block = 256) {
  return {.grid = {ts::cdiv(n, block)}, .meta = runtime_test::scale_meta(tag, block), .num_warps = 4,
          .executor = ts::Executor::Cuda};
}

fs::path newest_cache_file() {
  const char* dir = std::getenv("TESSERA_CACHE_DIR");
  fs::path root = dir && *dir ? fs::path(dir) : fs::path(std::getenv("HOME")) / ".cache/tessera";
  fs::path newest;
  auto when = fs::file_time_type::min();
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename().string().find("tmp") == std::string::npos && e.last_write_time() >= when) {
      when = e.last_write_time();
      newest = e.path();
    }
  return newest;
}

}  // namespace

TEST_CASE("GPU: a second kernel object finds the cubin on disk, reports say what was used", "[gpu][runtime]") {
  const float tag = unique_tag();
  const int n = 100003;
  Data d(n);
  auto first = make_scale();
  const auto r1 = first.warmup(options(tag, n), d.x, d.out, n);
  CHECK_FALSE(r1.from_disk_cache);
  CHECK(r1.registers > 0);
  CHECK(r1.max_threads >= r1.num_threads);
  CHECK(r1.num_threads == 128);
  CHECK(r1.spill_store_bytes == 0);
  CHECK(r1.local_bytes == 0);
  CHECK(r1.times_ms.codegen > 0);
  CHECK(r1.str().find("registers") != std::string::npos);
  first[options(tag, n)](d.x, d.out, n);
  ts::synchronize(ts::Executor::Cuda);
  d.check(tag);

  auto second = make_scale();  // a new kernel object: no in-memory entry, the disk has one
  const auto r2 = second.warmup(options(tag, n), d.x, d.out, n);
  CHECK(r2.from_disk_cache);
  CHECK(r2.registers == r1.registers);
  CHECK(r2.times_ms.codegen == 0);
  Data d2(n);
  second[options(tag, n)](d2.x, d2.out, n);
  ts::synchronize(ts::Executor::Cuda);
  d2.check(tag);
}

TEST_CASE("GPU: PTX published by a warmup for sm_90a is assembled and run by a later process", "[gpu][runtime]") {
  const float tag = unique_tag();
  const int n = 4096;
  Data d(n);
  auto builder = make_scale();
  auto a = builder.warmup("sm_90a", options(tag, n), d.x, d.out, n);
  REQUIRE(a.format == "ptx");
  auto user = make_scale();
  const auto r = user.warmup(options(tag, n), d.x, d.out, n);
  CHECK(r.from_disk_cache);
  CHECK(r.times_ms.assemble > 0);  // the PTX went through ptxas here
  user[options(tag, n)](d.x, d.out, n);
  ts::synchronize(ts::Executor::Cuda);
  d.check(tag);
}

TEST_CASE("GPU: a truncated cubin entry is detected and the kernel compiled again", "[gpu][runtime][fault]") {
  const float tag = unique_tag();
  const int n = 5000;
  Data d(n);
  make_scale().warmup(options(tag, n), d.x, d.out, n);
  const fs::path file = newest_cache_file();
  REQUIRE(!file.empty());
  fs::resize_file(file, fs::file_size(file) / 3);
  auto k = make_scale();
  const auto r = k.warmup(options(tag, n), d.x, d.out, n);
  CHECK_FALSE(r.from_disk_cache);
  k[options(tag, n)](d.x, d.out, n);
  ts::synchronize(ts::Executor::Cuda);
  d.check(tag);
}

TEST_CASE("GPU: maxnreg caps registers, line info and -O0 still run correctly", "[gpu][runtime][options]") {
  const float tag = unique_tag();
  const int n = 77777;
  for (int variant = 0; variant < 3; ++variant) {
    Data d(n);
    auto k = make_scale();
    auto opts = options(tag, n, 1024);
    if (variant == 0) opts.compile.maxnreg = 24;
    if (variant == 1) opts.compile.line_info = true;
    if (variant == 2) opts.compile.opt_level = 0;
    const auto r = k.warmup(opts, d.x, d.out, n);
    INFO("variant " << variant << ": " << r.str());
    if (variant == 0) CHECK(r.registers <= 24);
    k[opts](d.x, d.out, n);
    ts::synchronize(ts::Executor::Cuda);
    d.check(tag);
  }
}

TEST_CASE("GPU: launches inside CUDA graph capture, a missing specialization is a clear error", "[gpu][runtime][graph]") {
  auto& drv = ts::cuda::CudaDriver::require();
  const auto& f = drv.functions();
  drv.ensure_context();
  ts::cuda::CUstream stream = nullptr;
  REQUIRE(f.cuStreamCreate(&stream, ts::cuda::CU_STREAM_NON_BLOCKING) == 0);
  const float tag = unique_tag();
  const int n = 65536;
  Data d(n);
  auto k = make_scale();
  auto opts = options(tag, n);
  opts.stream = stream;
  k.warmup(opts, d.x, d.out, n);

  REQUIRE(f.cuStreamBeginCapture(stream, ts::cuda::CU_STREAM_CAPTURE_MODE_GLOBAL) == 0);
  k[opts](d.x, d.out, n);  // compiled: recorded into the graph, nothing synchronizes
  auto other = opts;
  other.meta = runtime_test::scale_meta(tag, 512);
  other.grid = {ts::cdiv(n, 512)};
  CHECK_THROWS_WITH(k[other](d.x, d.out, n), Catch::Contains("capturing a CUDA graph"));
  ts::cuda::CUgraph graph = nullptr;
  REQUIRE(f.cuStreamEndCapture(stream, &graph) == 0);
  ts::cuda::CUgraphExec exec = nullptr;
  REQUIRE(f.cuGraphInstantiate(&exec, graph, 0) == 0);
  REQUIRE(f.cuGraphLaunch(exec, stream) == 0);
  drv.stream_synchronize(stream);
  d.check(tag);
  f.cuGraphExecDestroy(exec);
  f.cuGraphDestroy(graph);
  f.cuStreamDestroy(stream);
}

TEST_CASE("GPU: 8 threads launching and compiling one kernel at once", "[gpu][runtime][threads]") {
  const float tag = unique_tag();
  auto k = make_scale();
  const auto compiles_before = ts::runtime_stats().compiles;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      try {
        for (int round = 0; round < 5; ++round) {
          const int block = 128 << ((t + round) % 4);  // 4 specializations, each wanted by many threads
          const int n = 10000 + 17 * t;
          Data d(n);
          auto opts = options(tag, n, block);
          k[opts](d.x, d.out, n);
          ts::synchronize(ts::Executor::Cuda);
          auto r = d.out.to_host();
          for (std::size_t i = 0; i < r.size(); ++i)
            if (r[i] != d.host[i] * tag) {
              ++failures;
              break;
            }
        }
      } catch (const std::exception& e) {
        ++failures;
      }
    });
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  // n = 10000 + 17 t is divisible by 16 for some t and not others: 4 blocks x 2 facts at most.
  CHECK(ts::runtime_stats().compiles - compiles_before <= 8);
  CHECK(ts::runtime_stats().compiles - compiles_before >= 4);
}
