// Random tile programs (tests/random/random_program.hpp, GPU mode) on the GPU against the
// interpreter: each program is optimized, laid out and compiled as a launch would (the default
// pipeline, runtime::codegen, ptxas when installed), run on the GPU over its grid with the inputs of
// its seed and poisoned outputs, and compared with the interpreter's run of the generated module
// (integers exactly; floats within the per-buffer error bound the generator derived plus a
// relative tolerance per dtype: random_harness.hpp, compare_close).
//
//   tessera_random_gpu_tests [--seed S] [--count N]      (env TESSERA_RANDOM_SEED, TESSERA_RANDOM_COUNT)
//   tessera_random_gpu_tests --seed S --tir FILE...       the program of seed S (grid, arguments,
//       buffers) with its module replaced by each FILE in turn: to cut a failing program down by
//       hand (same kernel signature; stores may go, but not arguments)
//   RANDOM_GPU_DUMP=1 prints each module with layouts and its PTX; RANDOM_PTXAS_OPT=N assembles
//   with ptxas -ON instead of -O3 (BUG-4 in tests/random/README.md was a ptxas bug that -O0 hides)
//
// Exit status: 0 when every program matched, 1 when one did not (each failure prints its seed, the
// differing elements and the IR), 77 with "SKIPPED" on a machine without a CUDA GPU.
// A separate binary from tessera_gpu_tests: it needs the code generator and the interpreter, which
// libtessera.so keeps hidden, so it links the runtime statically.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.hpp"
#include "backends/cuda/ptxas.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/runtime/build.hpp"
#include "jit/runtime/compile.hpp"
#include "jit/transforms/passes.hpp"
#include "random_harness.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using namespace tessera::random_program;

namespace {

constexpr int kSkipped = 77;
const std::string kNotRun = "not run: ";  // run_one's answer for a program it does not run

std::uint64_t number(const char* s, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (end == s || *end != '\0') {
    std::fprintf(stderr, "tessera_random_gpu_tests: %s must be a number, got '%s'\n", what, s);
    std::exit(2);
  }
  return v;
}

// Device buffers for a program's memory, freed on destruction.
struct DeviceMemory {
  const cuda::CudaDriver& drv;
  std::vector<cuda::CUdeviceptr> ptrs;
  DeviceMemory(const cuda::CudaDriver& d, const Memory& host) : drv(d) {
    for (std::size_t i = 0; i < host.count(); ++i) {
      ptrs.push_back(drv.alloc(std::max<std::size_t>(host.bytes(i), 16)));
      if (host.bytes(i) > 0) drv.copy_to_device(ptrs.back(), host.data(i), host.bytes(i));
    }
  }
  ~DeviceMemory() {
    for (auto p : ptrs) drv.free(p);
  }
  void copy_back(Memory& host) const {
    for (std::size_t i = 0; i < host.count(); ++i)
      if (host.bytes(i) > 0) drv.copy_to_host(host.data(i), ptrs[i], host.bytes(i));
  }
};

struct LoadedModule {
  const cuda::CudaDriver& drv;
  cuda::CUmodule module = nullptr;
  ~LoadedModule() {
    if (module) drv.unload_module(module);
  }
};

// Compiles, runs and compares one program; "" when the GPU matched the interpreter, else what
// differed. Throws on a compile or driver error.
std::string run_one(const cuda::CudaDriver& drv, const std::string& target, const std::string& ptxas, const Program& p) {
  const Memory initial(p, data_seed(p));
  const Memory want = run_interpreter(p, *p.module, initial);

  auto m = p.module->clone();
  transforms::run_pass_pipeline(*m, transforms::default_pipeline());
  const lower::DeviceBinary bin = runtime::codegen(*m, target, CompileOptions{});
  // Known compiler limits (tests/random/README.md), skipped and counted rather than failed:
  // BUG-2, so many elements per thread that LLVM and ptxas take minutes; more shared memory than
  // the GPU has (a matmul loop's rings; a launch refuses it).
  if (max_slots_per_thread(*m) > 128) return kNotRun + "more than 128 elements per thread after layouts (BUG-2)";
  if (bin.shared_bytes > 227 * 1024) return kNotRun + std::to_string(bin.shared_bytes) + " bytes of shared memory (over the H200's 227 KB)";
  if (std::getenv("RANDOM_GPU_DUMP")) std::printf("%s\n--- PTX:\n%s\n", ir::print(*m).c_str(), bin.assembly.c_str());
  // Machine code from ptxas where installed (as a launch builds it), else the driver compiles the PTX.
  const int opt = std::getenv("RANDOM_PTXAS_OPT") ? std::atoi(std::getenv("RANDOM_PTXAS_OPT")) : 3;
  const std::string image = ptxas.empty() ? bin.data : backend::run_ptxas(ptxas, bin.data, target, opt, 0, false).cubin;
  LoadedModule loaded{drv, drv.load_module(image)};
  cuda::CUfunction f = drv.get_function(loaded.module, bin.kernel_name);
  // NVIDIA kernels declare their shared memory dynamic: its size goes with the launch (and above
  // 48 KB the function must be allowed it first), as the runtime's launch does (build.cpp).
  const auto shared = static_cast<unsigned>(bin.shared_bytes);
  if (shared > 48 * 1024)
    drv.set_function_attribute(f, cuda::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(shared));

  DeviceMemory dev(drv, initial);
  KernelParams params = kernel_params(p, [&](std::size_t b) { return static_cast<std::uint64_t>(dev.ptrs[b]); });
  drv.launch(f, {p.grid[0], p.grid[1], p.grid[2]}, {static_cast<unsigned>(bin.num_threads), 1, 1}, shared, nullptr,
             params.pointers.data());
  drv.context_synchronize();
  Memory got(initial);
  dev.copy_back(got);
  return compare_close(p, want, got);
}

}  // namespace

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot open " + path);
  std::string text;
  for (char buf[4096]; std::size_t n = std::fread(buf, 1, sizeof buf, f);) text.append(buf, n);
  std::fclose(f);
  return text;
}

int main(int argc, char** argv) {
  std::uint64_t seed = 1, count = 300;
  std::vector<std::string> tir_files;
  if (const char* s = std::getenv("TESSERA_RANDOM_SEED"); s && *s) seed = number(s, "TESSERA_RANDOM_SEED");
  if (const char* s = std::getenv("TESSERA_RANDOM_COUNT"); s && *s) count = number(s, "TESSERA_RANDOM_COUNT");
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--seed") seed = number(argv[i + 1], "--seed");
    else if (a == "--count") count = number(argv[i + 1], "--count");
    else if (a == "--tir") tir_files.push_back(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: tessera_random_gpu_tests [--seed S] [--count N]\n");
      return 2;
    }
  }
  std::string why;
  if (!cuda::CudaDriver::available(&why)) {
    std::printf("SKIPPED: no CUDA GPU (%s)\n", why.c_str());
    return kSkipped;
  }
  try {
    const cuda::CudaDriver& drv = cuda::CudaDriver::require();
    drv.ensure_context();
    const std::string target = runtime::cuda_target_name();
    const std::string ptxas = backend::find_ptxas();
    if (!tir_files.empty()) {
      int rc = 0;
      for (const std::string& file : tir_files) {
        Program p = generate(seed, Mode::Gpu);
        p.module = ir::parse_module(read_file(file), file);
        const std::string problem = run_one(drv, target, ptxas, p);
        std::printf("%s: %s\n", file.c_str(), problem.empty() ? "the GPU matches the interpreter" : problem.c_str());
        rc |= problem.empty() ? 0 : 1;
      }
      return rc;
    }
    std::printf("tessera_random_gpu_tests: seeds %llu..%llu (gpu mode) on %s%s; rerun with TESSERA_RANDOM_SEED=%llu "
                "TESSERA_RANDOM_COUNT=%llu\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed + count - 1), target.c_str(),
                ptxas.empty() ? " (driver JIT)" : " (ptxas)", static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(count));
    std::fflush(stdout);
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::uint64_t> failed;
    int not_run = 0;
    for (std::uint64_t s = seed; s < seed + count; ++s) {
      const Program p = generate(s, Mode::Gpu);
      std::string problem;
      bool fatal = false;
      try {
        problem = run_one(drv, target, ptxas, p);
        if (problem.rfind(kNotRun, 0) == 0) {
          ++not_run;
          std::printf("seed %llu %s\n", static_cast<unsigned long long>(s), problem.c_str());
          continue;
        }
        if (!problem.empty()) problem = "the GPU differs from the interpreter:\n" + problem;
      } catch (const DriverError& e) {
        problem = std::string("driver error: ") + e.what();
        fatal = true;  // a fault leaves the context unusable: later programs would fail for nothing
      } catch (const std::exception& e) {
        problem = std::string("error: ") + e.what();
      }
      if (problem.empty()) continue;
      failed.push_back(s);
      std::printf("FAILED: seed %llu (gpu mode; %s)\n  rerun: tessera_random_gpu_tests --seed %llu --count 1\n  %s\n"
                  "--- generated module:\n%s\n",
                  static_cast<unsigned long long>(s), p.summary.c_str(), static_cast<unsigned long long>(s),
                  problem.c_str(), ir::print(*p.module, {.locations = false}).c_str());
      std::fflush(stdout);
      if (fatal || failed.size() >= 20) {
        std::printf("stopping after this failure\n");
        break;
      }
    }
    const double s_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%zu failed of %llu programs in %.1f s (%d not run: known limits)", failed.size(),
                static_cast<unsigned long long>(count), s_total, not_run);
    for (std::size_t i = 0; i < failed.size(); ++i)
      std::printf("%s%llu", i == 0 ? ": seeds " : " ", static_cast<unsigned long long>(failed[i]));
    std::printf("\n%s\n", failed.empty() ? "PASSED" : "FAILED");
    return failed.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}
