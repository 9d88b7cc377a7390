// tessera-opt on inputs that are not IR files: a folder, a missing file, IR nested too deeply
// (which crashed it by stack overflow). Each is exit status 1 and one "tessera-opt: " line.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Run {
  int status;
  std::string output;
};

Run run_opt(const std::string& args) {
  std::string cmd = std::string("\"") + TESSERA_OPT + "\" " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tessera_opt_test_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("tessera-opt: a folder, a missing file", "[ir][tools]") {
  TempDir d;
  Run r = run_opt("\"" + d.path.string() + "\"");
  CHECK(r.status == 1);
  CHECK(r.output == "tessera-opt: '" + d.path.string() + "' is a directory\n");

  const std::string missing = (d.path / "missing.tir").string();
  r = run_opt("\"" + missing + "\"");
  CHECK(r.status == 1);
  CHECK(r.output == "tessera-opt: cannot open '" + missing + "': No such file or directory\n");
}

TEST_CASE("tessera-opt: 20,000 nested ifs are a parse error, not a crash", "[ir][tools]") {
  TempDir d;
  const fs::path file = d.path / "deep.tir";
  {
    std::ofstream out(file);
    out << "kernel @deep(%c: i1) num_warps = 4 {\n";
    for (int i = 0; i < 20000; ++i) out << "if %c {\n";
    for (int i = 0; i < 20000; ++i) out << "yield\n} else {\nyield\n}\n";
    out << "return\n}\n";
  }
  Run r = run_opt("\"" + file.string() + "\"");
  CHECK(r.status == 1);
  CHECK(r.output == "tessera-opt: " + file.string() + ":514:1: regions nested more than 512 deep\n");
}

TEST_CASE("tessera-opt: --target sets what the passes see", "[ir][tools]") {
  // The layout pass marks a wgmma-eligible dot (64 x 64 x 64 f16, one warpgroup) on sm_90a only.
  TempDir d;
  const fs::path file = d.path / "dot.tir";
  std::ofstream(file) << "kernel @dot(%a: <64x64xf16>, %b: <64x64xf16>, %c: <64x64xf32>) num_warps = 4 {\n"
                         "  %0 = dot %a, %b, %c : <64x64xf32>\n  return\n}\n";
  Run r = run_opt("--target sm_90a --pass coalesce \"" + file.string() + "\"");
  CHECK(r.status == 0);
  CHECK(r.output.find("wgmma = 1") != std::string::npos);
  r = run_opt("--pass coalesce \"" + file.string() + "\"");  // sm_80 by default
  CHECK(r.status == 0);
  CHECK(r.output.find("wgmma") == std::string::npos);
  r = run_opt("--target=vax --pass coalesce \"" + file.string() + "\"");
  CHECK(r.status == 1);
  CHECK(r.output == "tessera-opt: unknown target 'vax' (known: sm_80, sm_90a, gfx90a, gfx942, host, host64)\n");
}
