#include "jit/runtime/options.hpp"

#include <cstdlib>
#include <sstream>

namespace tessera::runtime {
namespace {
bool flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

EnvOptions read_env() {
  EnvOptions o;
  o.interpret = flag("TESSERA_INTERPRET");
  o.debug = flag("TESSERA_DEBUG");
  if (const char* d = std::getenv("TESSERA_DUMP")) {
    std::stringstream ss(d);
    std::string item;
    while (std::getline(ss, item, ',')) {
      o.dump_ir |= item == "ir" || item == "all";
      o.dump_llvm |= item == "llvm" || item == "all";
      o.dump_ptx |= item == "ptx" || item == "all";
      o.dump_amdgcn |= item == "amdgcn" || item == "all";
      o.dump_resources |= item == "resources" || item == "all";
      o.dump_times |= item == "times" || item == "all";
    }
  }
  return o;
}
}  // namespace

const EnvOptions& env_options() {
  static const EnvOptions options = read_env();
  return options;
}

}  // namespace tessera::runtime
