#include "jit/runtime/env_flag.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tessera::runtime {

std::optional<bool> parse_flag(std::string_view value) {
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

bool env_flag(const char* name, bool fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  if (auto flag = parse_flag(v)) return *flag;
  // Each caller reads its variable once per process (or once per object), so this warns rarely.
  std::fputs(fmt::format("tessera: warning: {}={} is not a flag (use 1/true/yes/on or 0/false/no/off); treating it "
                         "as unset ({})\n", name, v, fallback ? "on" : "off").c_str(), stderr);
  return fallback;
}

}  // namespace tessera::runtime
