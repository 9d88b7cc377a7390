// libFuzzer target for the tile IR: the text parser, the verifier, the printer and every pass
// registered in jit/transforms/passes.hpp, then the shared-memory plan of the laid-out result.
//
// A tessera::Error that is the input's fault (ProgramError: text or IR refused with a message) is
// the expected answer to a bad input. A finding is anything else: a crash, a sanitizer report, a
// hang, another exception, an InternalError (a pass that breaks verified IR, an analysis that
// meets IR the verifier let through), or a printed module that does not parse back to itself.
// tests/fuzz/run_ir_fuzz.sh builds and runs it; each finding fixed has a regression test in
// tests/unit/ir_fuzz_regressions_test.cpp.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "jit/analysis/shared_memory.hpp"
#include "jit/ir/parser.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/transforms/passes.hpp"
#include "tessera/error.hpp"

namespace {

using namespace tessera;

[[noreturn]] void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "ir_fuzz finding: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

// print() must be the inverse of parse_module(), and clone() must copy everything it prints.
void check_round_trip(const ir::Module& m, const std::string& stage) {
  const std::string text = ir::print(m);
  std::unique_ptr<ir::Module> again;
  try {
    again = ir::parse_module(text, "printed.tir");
    ir::verify(*again);
  } catch (const Error& e) {
    finding("the printed module " + stage + " does not parse or verify: " + e.what(), text);
  }
  if (std::string back = ir::print(*again); back != text)
    finding("print(parse(print(m))) != print(m) " + stage, text + "\n---- reprinted:\n" + back);
  if (ir::print(*m.clone()) != text) finding("print(clone(m)) != print(m) " + stage, text);
}

void run(std::string_view text) {
  std::unique_ptr<ir::Module> m;
  try {
    m = ir::parse_module(text, "fuzz.tir");
    ir::verify(*m);
  } catch (const ProgramError&) {
    return;  // refused, with a message: the right answer
  }
  check_round_trip(*m, "after parsing");
  for (const std::string& name : transforms::pass_names()) {
    try {
      transforms::run_pass_pipeline(*m, std::vector<std::string>{name});  // verifies after the pass
    } catch (const InternalError& e) {
      finding("pass '" + name + "' on verified IR: " + e.what(), ir::print(*m));
    } catch (const ProgramError&) {
      return;  // a pass may refuse what it cannot handle, with a message
    }
  }
  check_round_trip(*m, "after every pass");
  try {
    analysis::SharedMemoryPlan plan(*m);  // what the lowering asks of the laid-out module
  } catch (const InternalError& e) {
    finding(std::string("shared-memory plan: ") + e.what(), ir::print(*m));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const InternalError& e) {
    finding(std::string("InternalError: ") + e.what(), "");
  } catch (const Error& e) {
    finding(std::string("a tessera::Error other than ProgramError: ") + e.what(), "");
  } catch (const std::exception& e) {
    finding(std::string("a non-tessera exception: ") + e.what(), "");
  }
  return 0;
}
