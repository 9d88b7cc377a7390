// Golden IR tests: every tests/ir/*.tir holds
//   // RUN: [--target NAME] pass1 pass2 ...     (the target, sm_80 when absent; the passes, in order)
//   <input IR>
//   // EXPECT:
//   <the exact output of tessera-opt --no-loc [--target NAME] --pass pass1 --pass pass2 ... on the input>
// Each file runs in-process through the pass registry and once more through the tessera-opt binary.
// The comment under the RUN line says what the file pins. When a pass changes on purpose,
// `tests/ir/regenerate.sh [path/to/tessera-opt]` rewrites every expected section from tessera-opt's
// output; review the result with `git diff tests/ir` (and fix the comments it contradicts) before
// committing, so that each change to a golden file is a reviewed diff.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"

namespace fs = std::filesystem;

namespace {

struct GoldenCase {
  std::string target;  // empty: tessera-opt's default
  std::vector<std::string> passes;
  std::string input, expected;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

GoldenCase parse_case(const fs::path& path) {
  std::string text = read_file(path);
  const std::string run = "// RUN:", expect = "// EXPECT:\n";
  GoldenCase c;
  if (text.rfind(run, 0) != 0) FAIL(path.string() << ": the first line must be '// RUN: [--target NAME] <passes>'");
  std::size_t eol = text.find('\n');
  std::istringstream names(text.substr(run.size(), eol - run.size()));
  for (std::string n; names >> n;) {
    if (n == "--target" && names >> c.target) continue;
    c.passes.push_back(n);
  }
  std::size_t split = text.find("\n" + expect);
  if (split == std::string::npos) FAIL(path.string() << ": missing a '// EXPECT:' line");
  c.input = text.substr(eol + 1, split + 1 - (eol + 1));
  c.expected = text.substr(split + 1 + expect.size());
  return c;
}

std::vector<fs::path> golden_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TESSERA_TEST_DIR) / "ir"))
    if (e.path().extension() == ".tir") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// Both texts with line numbers and the first line that differs: readable in a CI log.
std::string describe_mismatch(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected), a(actual);
  std::string el, al, out;
  int line = 1;
  bool more_e = true, more_a = true;
  for (;; ++line) {
    more_e = static_cast<bool>(std::getline(e, el));
    more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) break;
    if (!more_e || !more_a || el != al) {
      out = "first difference at output line " + std::to_string(line) + ":\n  expected: " +
            (more_e ? el : "<end>") + "\n  actual:   " + (more_a ? al : "<end>") + "\n";
      break;
    }
  }
  return out + "--- expected\n" + expected + "--- actual\n" + actual;
}

std::string run_in_process(const GoldenCase& c, const std::string& file) {
  auto m = tessera::ir::parse_module(c.input, file);
  tessera::ir::verify(*m);
  if (c.target.empty())
    tessera::transforms::run_pass_pipeline(*m, c.passes);
  else
    tessera::transforms::run_pass_pipeline(*m, c.passes, tessera::transforms::pass_context(*m, c.target));
  return tessera::ir::print(*m, {.locations = false});
}

std::string run_tool(const GoldenCase& c, const std::string& stem) {
  fs::path input = fs::temp_directory_path() / ("tessera_golden_" + stem + ".tir");
  std::ofstream(input, std::ios::binary) << c.input;
  std::string cmd = std::string("\"") + TESSERA_OPT + "\" --no-loc";
  if (!c.target.empty()) cmd += " --target " + c.target;
  for (const auto& p : c.passes) cmd += " --pass " + p;
  cmd += " \"" + input.string() + "\" 2>&1";
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = pclose(pipe);
  fs::remove(input);
  INFO("command: " << cmd << "\noutput:\n" << out);
  REQUIRE(status == 0);
  return out;
}

}  // namespace

TEST_CASE("golden IR tests (in process)", "[ir][golden]") {
  auto files = golden_files();
  REQUIRE(files.size() >= 9);
  for (const auto& f : files) {
    SECTION(f.filename().string()) {
      GoldenCase c = parse_case(f);
      std::string actual = run_in_process(c, f.string());
      INFO(f.string() << "\n" << describe_mismatch(c.expected, actual));
      CHECK(actual == c.expected);
    }
  }
}

TEST_CASE("golden IR tests (through the tessera-opt binary)", "[ir][golden][tool]") {
  for (const auto& f : golden_files()) {
    SECTION(f.filename().string()) {
      GoldenCase c = parse_case(f);
      std::string actual = run_tool(c, f.stem().string());
      INFO(f.string() << "\n" << describe_mismatch(c.expected, actual));
      CHECK(actual == c.expected);
    }
  }
}

TEST_CASE("tessera-opt reports errors on stderr with exit code 1", "[ir][tool]") {
  fs::path input = fs::temp_directory_path() / "tessera_opt_bad.tir";
  std::ofstream(input) << "kernel @k() num_warps = 4 {\n  %0 = nope : i32\n  return\n}\n";
  std::string cmd = std::string("\"") + TESSERA_OPT + "\" \"" + input.string() + "\" 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[1024];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = pclose(pipe);
  fs::remove(input);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(out.find("tessera_opt_bad.tir:2:8: unknown op 'nope'") != std::string::npos);
}
