// make_target: the one place that maps a target name to its implementation. It sits in
// backends/cuda/ only because CMake globs *_target.cpp there; it serves every backend.
#include <array>
#include <memory>
#include <string>

#include "backends/target_factories.hpp"
#include "jit/lower/target.hpp"
#include "tessera/error.hpp"

namespace tessera::lower {
namespace {

struct KnownTarget {
  const char* name;
  std::unique_ptr<Target> (*make)(const std::string&);
};

constexpr std::array<KnownTarget, 6> known_targets{{
    {"sm_80", &backend::make_nvptx_target},
    {"sm_90a", &backend::make_nvptx_target},
    {"gfx90a", &backend::make_amdgpu_target},
    {"gfx942", &backend::make_amdgpu_target},
    {"host", &backend::make_host_target},
    {"host64", &backend::make_host_target},
}};

}  // namespace

std::unique_ptr<Target> make_target(const std::string& name) {
  for (const KnownTarget& t : known_targets)
    if (name == t.name) return t.make(name);
  std::string known;
  for (const KnownTarget& t : known_targets) known += (known.empty() ? "" : ", ") + std::string(t.name);
  throw Error("tessera: unknown target '" + name + "'; known targets: " + known);
}

}  // namespace tessera::lower
