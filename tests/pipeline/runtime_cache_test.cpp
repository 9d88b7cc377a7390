// The runtime's disk cache and compile options, without a GPU: warmup for a named target
// (compile_only) publishes to the disk cache of TESSERA_CACHE_DIR (set per test run by ctest),
// compile options reach the PTX, and many processes compiling one kernel at once all succeed.
#include <catch2/catch.hpp>
#include <tessera/tessera.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "jit/runtime/disk_cache.hpp"
#include "pipeline/scale_kernel.hpp"

namespace ts = tessera;
namespace fs = std::filesystem;
using runtime_test::make_scale;
using runtime_test::unique_tag;
using tessera::runtime::DiskCache;

namespace {

// Entries of the test cache for kernel `name`: each test names its kernel alone, since other test
// processes share the folder and may publish at the same time.
std::size_t count_entries(const std::string& name) {
  std::size_t n = 0;
  for (const auto& info : DiskCache::global().list()) n += info.meta.count("kernel") && info.meta.at("kernel") == name;
  return n;
}

float* aligned_fake(std::uintptr_t at) { return reinterpret_cast<float*>(at); }  // never dereferenced

// The options of one launch of a make_scale kernel with tag `tag`.
ts::LaunchOptions scale_options(float tag) {
  return {.grid = {1}, .meta = runtime_test::scale_meta(tag, 256), .num_warps = 4};
}

}  // namespace

TEST_CASE("warmup for a named target publishes PTX to the disk cache once", "[runtime][cache]") {
  REQUIRE(DiskCache::global().enabled());
  auto k = make_scale("scale_publish");
  const auto kOpts = scale_options(unique_tag());
  const std::size_t before = count_entries("scale_publish");
  auto a = k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(a.format == "ptx");
  CHECK(count_entries("scale_publish") == before + 1);
  bool found = false;
  for (const auto& info : DiskCache::global().list())
    if (info.meta.count("format") && info.meta.at("format") == "ptx" && info.meta.at("kernel") == "scale_publish") found = true;
  CHECK(found);
  // The same specialization again: the entry is there, nothing new.
  k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(count_entries("scale_publish") == before + 1);
  // Another specialization (n not divisible by 16) and other compile options are other entries.
  k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1001);
  CHECK(count_entries("scale_publish") == before + 2);
  ts::LaunchOptions lines = kOpts;
  lines.compile.line_info = true;
  k.warmup("sm_90a", lines, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(count_entries("scale_publish") == before + 3);
  ts::LaunchOptions unfused = kOpts;
  unfused.compile.fp_fusion = false;
  k.warmup("sm_90a", unfused, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(count_entries("scale_publish") == before + 4);
  ts::LaunchOptions debug = kOpts;
  debug.compile.debug = true;
  k.warmup("sm_90a", debug, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(count_entries("scale_publish") == before + 5);
}

TEST_CASE("compile options reach the PTX: line info, maxnreg, bad values are clear errors", "[runtime][options]") {
  auto k = make_scale("scale_options");
  const auto kOpts = scale_options(unique_tag());
  ts::LaunchOptions opts = kOpts;
  opts.compile.line_info = true;
  opts.compile.maxnreg = 40;
  auto a = k.warmup("sm_90a", opts, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(a.assembly.find(".maxnreg 40") != std::string::npos);
  CHECK(a.assembly.find(".loc") != std::string::npos);
  CHECK(a.assembly.find("scale_kernel.hpp") != std::string::npos);  // .file names the kernel's source
  auto plain = k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
  CHECK(plain.assembly.find(".loc") == std::string::npos);
  CHECK(plain.assembly.find(".maxnreg") == std::string::npos);

  ts::LaunchOptions bad = kOpts;
  bad.compile.opt_level = 5;
  CHECK_THROWS_WITH(k.warmup("sm_90a", bad, aligned_fake(256), aligned_fake(512), 1024), Catch::Contains("opt_level must be 0 to 3"));
  bad = kOpts;
  bad.compile.maxnreg = 300;
  CHECK_THROWS_WITH(k.warmup("sm_90a", bad, aligned_fake(256), aligned_fake(512), 1024), Catch::Contains("maxnreg must be 0"));
  bad = kOpts;
  bad.num_stages = 0;
  CHECK_THROWS_WITH(k.warmup("sm_90a", bad, aligned_fake(256), aligned_fake(512), 1024), Catch::Contains("num_stages must be 1 to 8"));
  bad = kOpts;
  bad.compile.maxnreg = 64;
  CHECK_THROWS_WITH(k.warmup("gfx942", bad, aligned_fake(256), aligned_fake(512), 1024), Catch::Contains("no register cap"));
}

TEST_CASE("8 processes compiling one kernel into one cache folder at once all succeed", "[runtime][cache][fault]") {
  const auto kOpts = scale_options(unique_tag());
  const std::size_t before = count_entries("scale_processes");
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      int status = 0;
      try {
        auto k = make_scale("scale_processes");
        auto a = k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
        status = a.assembly.find(".entry scale_processes") != std::string::npos ? 0 : 2;
      } catch (...) {
        status = 3;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = -1;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(count_entries("scale_processes") == before + 1);
  for (const auto& info : DiskCache::global().list())
    if (info.meta.count("kernel") && info.meta.at("kernel") == "scale_processes") CHECK(info.problem.empty());
}

TEST_CASE("a truncated or garbage cache entry is replaced by a fresh compile", "[runtime][cache][fault]") {
  auto k = make_scale("scale_corrupt");
  const auto kOpts = scale_options(unique_tag());
  auto files = [] {
    std::set<std::string> out;
    for (const auto& info : DiskCache::global().list()) out.insert(info.file);
    return out;
  };
  const auto before = files();
  k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
  // Our entry: the one of this test's kernel that was not there before.
  fs::path file;
  for (const auto& info : DiskCache::global().list())
    if (!before.count(info.file) && info.meta.count("kernel") && info.meta.at("kernel") == "scale_corrupt") file = info.file;
  REQUIRE(!file.empty());
  const auto size = fs::file_size(file);
  for (int round = 0; round < 2; ++round) {
    if (round == 0) {
      fs::resize_file(file, size / 2);
    } else {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << "not a tessera cache entry";
    }
    k.warmup("sm_90a", kOpts, aligned_fake(256), aligned_fake(512), 1024);
    REQUIRE(fs::exists(file));
    CHECK(fs::file_size(file) == size);  // republished whole
    for (const auto& info : DiskCache::global().list())
      if (info.file == file) CHECK(info.problem.empty());
  }
}
