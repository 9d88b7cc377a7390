// Reading tessera's on/off environment variables (TESSERA_INTERPRET, TESSERA_CACHE, TESSERA_DEBUG,
// TESSERA_QUIET) one way everywhere: a user who writes `TESSERA_INTERPRET=false` must get what
// they wrote, not "set, so on".
#pragma once
#include <optional>
#include <string_view>

namespace tessera::runtime {

// "1", "true", "yes", "on" are true; "0", "false", "no", "off" are false (any case); empty is
// unset. Anything else is nullopt (the caller warns).
std::optional<bool> parse_flag(std::string_view value);

// The flag `name` from the environment: unset or empty gives `fallback`; a value parse_flag does
// not accept gives `fallback` too, after one warning on stderr naming the variable, its value and
// the accepted values.
bool env_flag(const char* name, bool fallback);

}  // namespace tessera::runtime
