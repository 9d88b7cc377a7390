// Reads the textual IR that print (printer.hpp) writes: print(parse_module(print(m))) == print(m).
// Value names are scoped like the regions that define them; `//` starts a comment. Errors are
// tessera::ProgramError with "file:line:col: message". Ops without loc(...) get no location.
#pragma once
#include <memory>
#include <string_view>

#include "jit/ir/ir.hpp"

namespace tessera::ir {

std::unique_ptr<Module> parse_module(std::string_view text, std::string_view file_name = "<input>");

}  // namespace tessera::ir
