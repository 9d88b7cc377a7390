#include "jit/runtime/options.hpp"

#include "jit/runtime/env_flag.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace tessera::runtime {
namespace {
constexpr const char* kDumpWords = "ir, llvm, ptx, amdgcn, resources, times, all";

EnvOptions read_env() {
  EnvOptions o;
  o.interpret = env_flag("TESSERA_INTERPRET", false);
  o.debug = env_flag("TESSERA_DEBUG", false);
  if (const char* e = std::getenv("TESSERA_EXECUTOR"); e && *e) {
    const std::string v = e;
    if (v == "auto" || v == "interpreter" || v == "cuda" || v == "hip" || v == "host" || v == "host64")
      o.executor = v;
    else
      std::fputs(fmt::format("tessera: warning: TESSERA_EXECUTOR is '{}', which is not one of auto, interpreter, "
                             "cuda, hip, host, host64; ignoring it\n", v).c_str(), stderr);
  }
  if (const char* d = std::getenv("TESSERA_DUMP")) {
    std::stringstream ss(d);
    std::string item;
    while (std::getline(ss, item, ',')) {
      const bool all = item == "all";
      bool known = all || item.empty();
      auto word = [&](const char* w, bool& flag) {
        if (item == w) known = true;
        flag |= item == w || all;
      };
      word("ir", o.dump_ir);
      word("llvm", o.dump_llvm);
      word("ptx", o.dump_ptx);
      word("amdgcn", o.dump_amdgcn);
      word("resources", o.dump_resources);
      word("times", o.dump_times);
      if (!known)
        std::fputs(fmt::format("tessera: warning: TESSERA_DUMP names '{}', which is not one of {}; ignoring it\n",
                               item, kDumpWords).c_str(), stderr);
    }
  }
  return o;
}
}  // namespace

const EnvOptions& env_options() {
  static const EnvOptions options = read_env();
  return options;
}

bool debug_checks(const CompileOptions& options) { return options.debug || env_options().debug; }

}  // namespace tessera::runtime
