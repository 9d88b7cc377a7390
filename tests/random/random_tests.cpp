// tessera_random_tests: random tile programs (random_program.hpp) through the passes, the
// interpreter and ptxas. One program per seed; every failure prints its seed, the stage that broke
// and the IR, and the command that reruns exactly that program.
//
//   tessera_random_tests passes   [--seed S] [--count N] [--mode wide|gpu|mixed]
//       interpret each program before and after every pass (random_harness.hpp: check_passes)
//   tessera_random_tests ptxas    [...]   optimize, lay out and compile to PTX (sm_90a; every
//       fourth program sm_80), assembled by CUDA's ptxas; exits 77 (skipped) without ptxas
//   tessera_random_tests host     [...]   GPU-mode programs compiled for the host targets (odd
//       seeds warps of 32, even seeds warps of 64) and run on the host executor against the
//       interpreter (random_host.hpp): the generated code itself, without a GPU
//   tessera_random_tests coverage [...]   generate without running and count the constructs:
//       fails when one that the generator should make never appears (per mode)
//   tessera_random_tests print    --seed S [--mode ...]   print the program of one seed
//   tessera_random_tests compile FILE.tir [ARCH]   compile a (reduced) module as the ptxas command
//       does and print the PTX's size and the times (for cutting a failing program down by hand;
//       with RANDOM_DUMP=1 also the module with layouts, the LLVM IR and the PTX)
//
// TESSERA_RANDOM_SEED and TESSERA_RANDOM_COUNT set the first seed and the count (flags win);
// seeds are first .. first + count - 1. --mode mixed (the default) makes every fourth seed a
// GPU-mode program (random_program.hpp: default_mode).
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/ptxas.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/lower/codegen.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/passes.hpp"
#include "random_harness.hpp"
#include "random_host.hpp"
#include "tessera/error.hpp"

using namespace tessera;
using namespace tessera::random_program;

namespace {

constexpr int kSkipped = 77;  // ctest SKIP_RETURN_CODE
// The ptxas command compiles programs with at most this many elements of a tile per thread.
constexpr std::int64_t kMaxSlots = 128;

struct Options {
  std::string command;
  std::uint64_t seed = 1;
  std::uint64_t count = 0;  // 0: the command's default
  std::string mode = "mixed";
  int max_failures = 10;
  bool verbose = false;  // one line per program (seed, summary, times)
};

std::uint64_t default_count(const std::string& command) {
  if (command == "passes") return 3000;
  if (command == "ptxas") return 150;
  if (command == "host") return 300;
  if (command == "coverage") return 600;
  return 1;
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "tessera_random_tests: %s\nusage: tessera_random_tests passes|ptxas|host|coverage|print [--seed S] "
               "[--count N] [--mode wide|gpu|mixed] [--max-failures N] [--verbose]\n(env TESSERA_RANDOM_SEED, "
               "TESSERA_RANDOM_COUNT give the defaults of --seed and --count)\n",
               why);
  std::exit(2);
}

std::uint64_t parse_number(const char* s, const char* what) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 0);
  if (end == s || *end != '\0') usage(fmt::format("{} must be a number, got '{}'", what, s).c_str());
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) usage("no command");
  o.command = argv[1];
  if (o.command != "passes" && o.command != "ptxas" && o.command != "host" && o.command != "coverage" && o.command != "print")
    usage(("unknown command " + o.command).c_str());
  if (const char* s = std::getenv("TESSERA_RANDOM_SEED"); s && *s) o.seed = parse_number(s, "TESSERA_RANDOM_SEED");
  if (const char* s = std::getenv("TESSERA_RANDOM_COUNT"); s && *s) o.count = parse_number(s, "TESSERA_RANDOM_COUNT");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (i + 1 >= argc) usage(("missing value after " + a).c_str());
    if (a == "--seed") o.seed = parse_number(argv[++i], "--seed");
    else if (a == "--count") o.count = parse_number(argv[++i], "--count");
    else if (a == "--mode") o.mode = argv[++i];
    else if (a == "--max-failures") o.max_failures = static_cast<int>(parse_number(argv[++i], "--max-failures"));
    else usage(("unknown option " + a).c_str());
  }
  if (o.mode != "wide" && o.mode != "gpu" && o.mode != "mixed") usage("--mode must be wide, gpu or mixed");
  if (o.count == 0) o.count = default_count(o.command);
  return o;
}

Mode mode_of(const Options& o, std::uint64_t seed) {
  if (o.command == "host") return Mode::Gpu;  // programs whose results the interpreter predicts within bounds
  if (o.mode == "wide") return Mode::Wide;
  if (o.mode == "gpu") return Mode::Gpu;
  return default_mode(seed);
}

std::string rerun(const Options& o, const Program& p) {
  return fmt::format("tessera_random_tests {} --seed {} --count 1 --mode {}", o.command, p.seed, mode_name(p.mode));
}

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// Runs `check` on every seed; prints failures; returns the exit code.
template <class Check>
int for_each_program(const Options& o, const char* what, Check&& check) {
  std::printf("tessera_random_tests %s: seeds %llu..%llu (%s modes); rerun with TESSERA_RANDOM_SEED=%llu "
              "TESSERA_RANDOM_COUNT=%llu\n",
              o.command.c_str(), static_cast<unsigned long long>(o.seed),
              static_cast<unsigned long long>(o.seed + o.count - 1), o.mode.c_str(),
              static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.count));
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::uint64_t> failed;
  std::uint64_t done = 0;
  for (std::uint64_t s = o.seed; s < o.seed + o.count; ++s) {
    std::optional<Program> p;
    std::optional<Failure> f;
    try {
      p.emplace(generate(s, mode_of(o, s)));
      f = check(*p);
    } catch (const std::exception& e) {
      if (!p) {
        std::printf("FAILED: seed %llu: the generator failed: %s\n", static_cast<unsigned long long>(s), e.what());
        failed.push_back(s);
        ++done;
        continue;
      }
      f = Failure{what, std::string("unexpected exception: ") + e.what(), "", ""};
    }
    ++done;
    if (f) {
      failed.push_back(s);
      std::printf("%s\n", failure_report(*p, *f, rerun(o, *p)).c_str());
      std::fflush(stdout);
      if (static_cast<int>(failed.size()) >= o.max_failures) {
        std::printf("stopping after %d failures\n", o.max_failures);
        break;
      }
    }
  }
  const double ms = ms_since(start);
  std::printf("%llu programs in %.1f s (%.1f programs/s), %zu failed", static_cast<unsigned long long>(done), ms / 1000,
              done / (ms / 1000), failed.size());
  for (std::size_t i = 0; i < failed.size(); ++i)
    std::printf("%s%llu", i == 0 ? ": seeds " : " ", static_cast<unsigned long long>(failed[i]));
  std::printf("\n");
  return failed.empty() ? 0 : 1;
}

int run_passes(const Options& o) {
  return for_each_program(o, "passes", [](const Program& p) { return check_passes(p); });
}

int run_ptxas(const Options& o) {
  const std::string ptxas = backend::find_ptxas();
  if (ptxas.empty()) {
    std::printf("SKIPPED: no ptxas (TESSERA_PTXAS, $CUDA_HOME/bin, /usr/local/cuda/bin, PATH)\n");
    return kSkipped;
  }
  double codegen_ms = 0, ptxas_ms = 0;
  int too_big = 0;
  const int rc = for_each_program(o, "ptxas", [&](const Program& p) -> std::optional<Failure> {
    const std::string arch = p.seed % 4 == 1 ? "sm_80" : "sm_90a";
    auto m = p.module->clone();
    std::string with_layouts;
    lower::DeviceBinary bin;
    try {
      auto t = std::chrono::steady_clock::now();
      transforms::run_pass_pipeline(*m, transforms::default_pipeline());
      transforms::run_pass_pipeline(*m, transforms::target_pipeline(), transforms::pass_context(*m, arch));
      ir::verify(*m);
      with_layouts = ir::print(*m, {.locations = false});
      // BUG-2 (tests/random/README.md): one layout per rank can replicate another shape of that
      // rank many times over, up to thousands of elements per thread; LLVM and ptxas then take
      // minutes. Such programs are interpreted (passes) but not compiled here.
      if (const std::int64_t slots = max_slots_per_thread(*m); slots > kMaxSlots) {
        ++too_big;
        if (o.verbose) std::printf("seed %llu: not compiled: %lld elements per thread\n", static_cast<unsigned long long>(p.seed),
                                   static_cast<long long>(slots));
        return std::nullopt;
      }
      bin = lower::compile_to_device(*m, arch);
      const double ms = ms_since(t);
      codegen_ms += ms;
      if (o.verbose) std::printf("seed %llu: %s: codegen %.0f ms, %zu bytes of PTX\n", static_cast<unsigned long long>(p.seed),
                                 p.summary.c_str(), ms, bin.data.size());
    } catch (const std::exception& e) {
      return Failure{"code generation for " + arch, e.what(), "", with_layouts};
    }
    try {
      auto t = std::chrono::steady_clock::now();
      backend::run_ptxas(ptxas, bin.data, arch, 3, 0, false);
      const double ms = ms_since(t);
      ptxas_ms += ms;
      if (o.verbose) std::printf("seed %llu: ptxas %.0f ms\n", static_cast<unsigned long long>(p.seed), ms);
    } catch (const std::exception& e) {
      return Failure{"ptxas -arch=" + arch, e.what() + std::string("\n--- PTX:\n") + bin.assembly, "", with_layouts};
    }
    return std::nullopt;
  });
  std::printf("time in code generation (passes, layouts, LLVM) %.1f s, in ptxas %.1f s; not compiled: %d programs with "
              "more than %lld elements per thread after layouts (BUG-2)\n",
              codegen_ms / 1000, ptxas_ms / 1000, too_big, static_cast<long long>(kMaxSlots));
  return rc;
}

int run_host(const Options& o) {
  int not_run = 0;
  const int rc = for_each_program(o, "host", [&](const Program& p) -> std::optional<Failure> {
    const std::string target = p.seed % 2 == 1 ? "host" : "host64";
    std::string problem;
    try {
      problem = run_on_host(p, target);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (problem.rfind(kNotRunPrefix, 0) == 0) {
      ++not_run;
      if (o.verbose) std::printf("seed %llu: %s\n", static_cast<unsigned long long>(p.seed), problem.c_str());
      return std::nullopt;
    }
    if (problem.empty()) return std::nullopt;
    return Failure{"run on the " + target + " target", problem, "", ""};
  });
  std::printf("not run: %d programs with more than 128 elements per thread after layouts (BUG-2)\n", not_run);
  return rc;
}

int run_coverage(const Options& o) {
  int rc = 0;
  for (Mode mode : {Mode::Wide, Mode::Gpu}) {
    std::map<std::string, std::int64_t> total;
    std::map<std::int64_t, int> slots;  // most elements per thread after layouts (warp 32) -> programs
    std::int64_t ops = 0;
    for (std::uint64_t s = o.seed; s < o.seed + o.count; ++s) {
      const Program p = generate(s, mode);
      auto m = p.module->clone();
      transforms::run_pass_pipeline(*m, transforms::default_pipeline());
      transforms::assign_layouts(*m, {.warp_size = 32});
      ++slots[max_slots_per_thread(*m)];
      if (o.verbose) std::printf("seed %llu: %lld slots\n", static_cast<unsigned long long>(s), static_cast<long long>(max_slots_per_thread(*m)));
      for (const auto& [k, v] : count_constructs(*p.module)) {
        total[k] += v;
        if (k.rfind("op:", 0) == 0) ops += v;
      }
    }
    std::printf("%s mode, %llu programs, %lld ops (%.1f per program):\n", mode_name(mode),
                static_cast<unsigned long long>(o.count), static_cast<long long>(ops),
                static_cast<double>(ops) / static_cast<double>(o.count));
    std::string line;
    for (const auto& [k, v] : total) {
      std::string item = fmt::format("{} {}", k, v);
      if (line.size() + item.size() > 110) {
        std::printf("  %s\n", line.c_str());
        line.clear();
      }
      line += (line.empty() ? "" : ", ") + item;
    }
    if (!line.empty()) std::printf("  %s\n", line.c_str());
    std::printf("  elements per thread after layouts (most of any tile) -> programs:");
    for (const auto& [k, v] : slots) std::printf(" %lld:%d", static_cast<long long>(k), v);
    std::printf("\n");
    // The comparison must see a changed program: mutate the last store of the first programs.
    int tried = 0, detected = 0;
    for (std::uint64_t s = o.seed; s < o.seed + std::min<std::uint64_t>(o.count, 200); ++s) {
      ++tried;
      detected += mutation_detected(generate(s, mode)) ? 1 : 0;
    }
    std::printf("  a changed store value was detected in %d of %d programs\n", detected, tried);
    if (detected < tried * 8 / 10) {
      std::printf("FAILED: %s mode: the memory comparison misses most changed programs\n", mode_name(mode));
      rc = 1;
    }
    for (const std::string& k : required_constructs(mode))
      if (total[k] == 0) {
        std::printf("FAILED: %s mode: no program of seeds %llu..%llu contains %s\n", mode_name(mode),
                    static_cast<unsigned long long>(o.seed), static_cast<unsigned long long>(o.seed + o.count - 1),
                    k.c_str());
        rc = 1;
      }
  }
  return rc;
}

int run_print(const Options& o) {
  for (std::uint64_t s = o.seed; s < o.seed + o.count; ++s) {
    const Program p = generate(s, mode_of(o, s));
    std::printf("// seed %llu: %s\n%s\n", static_cast<unsigned long long>(s), p.summary.c_str(),
                ir::print(*p.module, {.locations = false}).c_str());
  }
  return 0;
}

}  // namespace

// Compiles one module from a file as run_ptxas does; prints sizes and times, or the error.
int compile_file(const char* path, const std::string& arch) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) usage(fmt::format("cannot open {}", path).c_str());
  std::string text;
  for (char buf[4096]; std::size_t n = std::fread(buf, 1, sizeof buf, f);) text.append(buf, n);
  std::fclose(f);
  try {
    auto m = ir::parse_module(text, path);
    ir::verify(*m);
    auto t = std::chrono::steady_clock::now();
    transforms::run_pass_pipeline(*m, transforms::default_pipeline());
    transforms::run_pass_pipeline(*m, transforms::target_pipeline(), transforms::pass_context(*m, arch));
    ir::verify(*m);
    const lower::DeviceBinary bin = lower::compile_to_device(*m, arch, {.keep_llvm_ir = std::getenv("RANDOM_DUMP") != nullptr});
    if (std::getenv("RANDOM_DUMP")) std::printf("%s\n--- LLVM IR:\n%s\n--- PTX:\n%s\n", ir::print(*m).c_str(), bin.llvm_ir.c_str(), bin.assembly.c_str());
    std::printf("codegen %.0f ms, %zu bytes of PTX, %d threads, %d bytes of shared memory\n", ms_since(t), bin.data.size(),
                bin.num_threads, bin.shared_bytes);
    const std::string ptxas = backend::find_ptxas();
    if (!ptxas.empty()) {
      t = std::chrono::steady_clock::now();
      const auto r = backend::run_ptxas(ptxas, bin.data, arch, 3, 0, false);
      std::printf("ptxas %.0f ms: %s\n", ms_since(t), r.log.c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "compile") return compile_file(argv[2], argc >= 4 ? argv[3] : "sm_90a");
  const Options o = parse(argc, argv);
  try {
    if (o.command == "passes") return run_passes(o);
    if (o.command == "ptxas") return run_ptxas(o);
    if (o.command == "host") return run_host(o);
    if (o.command == "coverage") return run_coverage(o);
    return run_print(o);
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}
