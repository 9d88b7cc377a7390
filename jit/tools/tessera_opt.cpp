// tessera-opt: reads textual tile IR, verifies it, runs the named passes in order (verifying after
// each) and prints the result. The golden tests in tests/ir/ drive it; it is also the way to look
// at one pass in isolation while debugging.
//
//   tessera-opt [--target NAME] [--pass NAME]... [--no-loc] [file|-]
//   tessera-opt --list-passes
// --target: the compile target the passes see (their PassContext): sm_80 by default, sm_90a
// (wgmma), gfx* or host64 (warps of 64), host.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "jit/analysis/layouts.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

namespace {

struct Options {
  std::vector<std::string> passes;
  std::string target = tessera::transforms::kDefaultPassTarget;
  bool locations = true;
  bool list_passes = false;
  std::string input = "-";
};

constexpr const char* kUsage =
    "usage: tessera-opt [--target NAME] [--pass NAME]... [--no-loc] [file|-]\n"
    "       tessera-opt --list-passes\n";

Options parse_args(int argc, char** argv) {
  Options o;
  bool have_input = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pass" || a == "-p") {
      if (i + 1 >= argc) throw tessera::Error("--pass needs a pass name");
      o.passes.emplace_back(argv[++i]);
    } else if (a.rfind("--pass=", 0) == 0) {
      o.passes.push_back(a.substr(7));
    } else if (a == "--target" || a.rfind("--target=", 0) == 0) {
      if (a == "--target" && i + 1 >= argc) throw tessera::Error("--target needs a target name");
      o.target = a == "--target" ? argv[++i] : a.substr(9);
      tessera::analysis::target_info(o.target);  // an unknown name is an error here, before reading the input
    } else if (a == "--no-loc") {
      o.locations = false;
    } else if (a == "--list-passes") {
      o.list_passes = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a.size() > 1 && a[0] == '-') {
      throw tessera::Error("unknown option '" + a + "'\n" + kUsage);
    } else if (have_input) {
      throw tessera::Error("more than one input file\n" + std::string(kUsage));
    } else {
      o.input = a;
      have_input = true;
    }
  }
  return o;
}

std::string read_input(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  // An ifstream opens a directory without complaint and then reads nothing, which the parser
  // would report as an empty kernel: say what it is instead. (Pipes and FIFOs, as in
  // `tessera-opt <(gen)`, are read as they come.)
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw tessera::Error("'" + path + "' is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tessera::Error("cannot open '" + path + "': " + std::strerror(errno));
  text << in.rdbuf();
  if (in.bad()) throw tessera::Error("cannot read '" + path + "': " + std::strerror(errno));
  return text.str();
}

int run(const Options& o) {
  if (o.list_passes) {
    for (const auto& name : tessera::transforms::pass_names())
      std::cout << name << "  " << tessera::transforms::find_pass(name)->summary << "\n";
    return 0;
  }
  auto m = tessera::ir::parse_module(read_input(o.input), o.input == "-" ? "<stdin>" : o.input);
  tessera::ir::verify(*m);
  tessera::transforms::run_pass_pipeline(*m, o.passes, tessera::transforms::pass_context(*m, o.target));
  std::cout << tessera::ir::print(*m, {.locations = o.locations});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::cerr << "tessera-opt: " << e.what() << "\n";
    return 1;
  }
}
