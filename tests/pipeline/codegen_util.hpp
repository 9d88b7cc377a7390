// Shared by the codegen tests of the tensor-core examples (matmul, attention): counting PTX
// instructions, and ptxas's verdict on a kernel.
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "backend/tool_paths.hpp"

namespace tessera::test {

// How often `what` occurs in `text`.
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// `ptxas -v` on `ptx` for `arch`: it assembles, spills nothing, serializes no wgmma (C7515:
// accumulators read early; C7511: too few registers) and adds no warpgroup.arrive (C7519: a
// register that a wgmma reads written after the wgmma.fence).
inline void check_ptxas_accepts_without_spills(const std::string& ptxas, const std::string& ptx, const std::string& arch) {
  ScratchFile file(ptx, ".ptx");
  const auto r = run_command(ptxas + " -v -arch=" + arch + " " + file.path() + " -o /dev/null");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("0 bytes spill stores") != std::string::npos);
  CHECK(r.output.find("C7515") == std::string::npos);
  CHECK(r.output.find("C7511") == std::string::npos);
  CHECK(r.output.find("C7519") == std::string::npos);
}

}  // namespace tessera::test
