// Configs as text: the human line (Config::str, reports) and the exact serialization that the
// disk entry and the config-list fingerprint are made of.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sstream>

#include "autotune/autotune_internal.hpp"
#include "jit/runtime/disk_cache.hpp"

namespace tessera {

std::string Config::str() const {
  std::string s;
  for (const auto& [name, value] : meta) s += fmt::format("{}={} ", name, value);
  s += fmt::format("num_warps={}", num_warps);
  if (num_stages != 1) s += fmt::format(" num_stages={}", num_stages);
  const CompileOptions defaults;
  if (compile.opt_level != defaults.opt_level) s += fmt::format(" opt_level={}", compile.opt_level);
  if (compile.maxnreg != defaults.maxnreg) s += fmt::format(" maxnreg={}", compile.maxnreg);
  if (compile.line_info) s += " line_info";
  if (!compile.fp_fusion) s += " fp_fusion=0";
  if (compile.debug) s += " debug";
  return s;
}

std::string TuningReport::str() const {
  std::string s = fmt::format("autotuned '{}' ({}) on {}: best [{}]", kernel, fmt::join(key_values, ","), device,
                              best.str());
  if (from_disk) return s + " (from the disk cache)\n";
  if (best_ms >= 0) s += fmt::format(" {:.4f} ms", best_ms);
  s += "\n";
  for (const auto& r : results) {
    if (!r.error.empty())
      s += fmt::format("  [{}] skipped: {}\n", r.config.str(), tuning::first_line(r.error));
    else if (r.ms >= 0)
      s += fmt::format("  [{}] {:.4f} ms\n", r.config.str(), r.ms);
    else
      s += fmt::format("  [{}] not timed (the only config)\n", r.config.str());
  }
  return s;
}

namespace tuning {

std::string serialize(const Config& c) {
  std::string s;
  // Names are C++ identifiers in practice; the length prefix keeps any other name unambiguous.
  for (const auto& [name, value] : c.meta) s += fmt::format("meta {} {} {}\n", name.size(), name, value);
  s += fmt::format("num_warps {}\nnum_stages {}\n", c.num_warps, c.num_stages);
  s += fmt::format("opt_level {}\nmaxnreg {}\nline_info {}\nfp_fusion {}\n", c.compile.opt_level, c.compile.maxnreg,
                   c.compile.line_info ? 1 : 0, c.compile.fp_fusion ? 1 : 0);
  if (c.compile.debug) s += "debug 1\n";  // only when set: entries written before it existed still parse
  return s;
}

std::optional<Config> parse_config(std::string_view text) {
  Config c;
  std::istringstream in{std::string(text)};
  std::string field;
  int seen = 0;  // bit per scalar field: a complete entry names each once
  while (in >> field) {
    if (field == "meta") {
      std::size_t length = 0;
      std::int64_t value = 0;
      if (!(in >> length) || in.get() != ' ') return std::nullopt;
      std::string name(length, '\0');
      if (!in.read(name.data(), static_cast<std::streamsize>(length)) || !(in >> value)) return std::nullopt;
      c.meta.emplace_back(std::move(name), value);
      continue;
    }
    int value = 0;
    if (!(in >> value)) return std::nullopt;
    if (field == "num_warps") c.num_warps = value, seen |= 1;
    else if (field == "num_stages") c.num_stages = value, seen |= 2;
    else if (field == "opt_level") c.compile.opt_level = value, seen |= 4;
    else if (field == "maxnreg") c.compile.maxnreg = value, seen |= 8;
    else if (field == "line_info") c.compile.line_info = value != 0, seen |= 16;
    else if (field == "fp_fusion") c.compile.fp_fusion = value != 0, seen |= 32;
    else if (field == "debug") c.compile.debug = value != 0;
    else return std::nullopt;
  }
  if (seen != 63) return std::nullopt;
  return c;
}

std::string fingerprint(const std::vector<Config>& configs) {
  std::string all;
  for (const auto& c : configs) all += serialize(c) + "--\n";
  return runtime::key_hash_hex(all);
}

std::string first_line(std::string_view text) {
  const auto end = text.find('\n');
  return std::string(end == std::string_view::npos ? text : text.substr(0, end));
}

std::string key_label(const std::vector<KeyArg>& key, std::span<const std::int64_t> values) {
  std::string s;
  for (std::size_t i = 0; i < key.size() && i < values.size(); ++i) {
    if (i) s += ", ";
    s += key[i].name.empty() ? fmt::format("arg{}={}", key[i].index, values[i])
                             : fmt::format("{}={}", key[i].name, values[i]);
  }
  return s;
}

}  // namespace tuning
}  // namespace tessera
