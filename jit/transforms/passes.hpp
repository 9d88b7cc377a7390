// The registry of IR passes by name, for tessera-opt, the golden tests and the compile driver.
#pragma once
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::transforms {

struct PassInfo {
  std::string_view name;
  std::string_view summary;  // one line, for --list-passes
  void (*run)(ir::Module&);
};

const PassInfo* find_pass(std::string_view name);  // null when unknown
std::vector<std::string> pass_names();             // in registration order
std::vector<std::string> default_pipeline();       // canonicalize, cse, dce

// Runs the named passes in order on a verified module, verifying after each. An unknown name is a
// ProgramError (before any pass runs); a pass that leaves invalid IR is an InternalError naming it.
void run_pass_pipeline(ir::Module& m, std::span<const std::string> names);

}  // namespace tessera::transforms
