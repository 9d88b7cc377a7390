// The disk cache's file format and key hashing (see disk_cache.hpp): pure functions over bytes,
// no file system. disk_cache.cpp does the I/O.
#include "jit/runtime/cache_format.hpp"

#include <fmt/format.h>

namespace tessera::runtime {
namespace {

// ---- hashing: our own, so the cache needs no dependency. Each 64-bit lane runs the input, eight
// bytes at a time, through splitmix64's finalizer (a bijection with full avalanche); the 128-bit
// name is two lanes with independent seeds. Not cryptographic: the stored key text is compared.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t load_le(const char* p, std::size_t n) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < n; ++i) w |= std::uint64_t(static_cast<unsigned char>(p[i])) << (8 * i);
  return w;
}

std::uint64_t hash64(std::string_view s, std::uint64_t seed) {
  // The length goes into the start value, so zero padding of the last word is unambiguous.
  std::uint64_t h = mix64(seed ^ (s.size() * 0x9e3779b97f4a7c15ull));
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) h = mix64(h ^ load_le(s.data() + i, 8));
  if (i < s.size()) h = mix64(h ^ load_le(s.data() + i, s.size() - i));
  return h;
}

constexpr std::uint64_t kNameSeedHi = 0x7465737365726131ull, kNameSeedLo = 0x6b65792d68617368ull;
constexpr std::uint64_t kChecksumSeed = 0x636865636b73756dull;

// ---- the entry format (see the header).
constexpr std::string_view kMagic = "TSRCACHE";

template <class T>
void put_le(std::string& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Reads what put_le and appending wrote; every read is bounds-checked.
struct Reader {
  std::string_view bytes;
  std::size_t pos = 0;
  bool take(std::uint64_t n, std::string_view& out) {
    if (bytes.size() - pos < n) return false;
    out = bytes.substr(pos, n);
    pos += n;
    return true;
  }
  template <class T>
  bool le(T& v) {
    std::string_view s;
    if (!take(sizeof(T), s)) return false;
    v = static_cast<T>(load_le(s.data(), sizeof(T)));
    return true;
  }
};

}  // namespace

namespace cache_format {

std::string too_large_problem(std::uint64_t file_size) {
  return fmt::format("{} bytes, larger than any entry ({} bytes at most)", file_size, kMaxEntryBytes);
}

// Checks the fixed header (at the start of `bytes`) against the size of the whole file.
std::string read_header(std::string_view bytes, std::uint64_t file_size, Header& h) {
  if (file_size < kHeaderSize + kChecksumSize || bytes.size() < kHeaderSize)
    return fmt::format("{} bytes, too short for an entry (truncated?)", file_size);
  if (file_size > kMaxEntryBytes) return too_large_problem(file_size);
  Reader r{bytes};
  std::string_view magic;
  std::uint32_t version = 0;
  r.take(kMagic.size(), magic);
  if (magic != kMagic) return "not a tessera cache entry (bad magic)";
  r.le(version), r.le(h.meta_count), r.le(h.key_len), r.le(h.meta_len), r.le(h.payload_len);
  if (version != kCacheFormatVersion) return fmt::format("format version {}, expected {}", version, kCacheFormatVersion);
  // Compare each length with the file size first, so that the sum cannot overflow.
  bool fits = h.key_len <= file_size && h.meta_len <= file_size && h.payload_len <= file_size;
  if (!fits || kHeaderSize + h.key_len + h.meta_len + h.payload_len + kChecksumSize != file_size)
    return fmt::format("{} bytes, not the size its header announces (truncated?)", file_size);
  return "";
}

std::string read_meta(std::string_view section, std::uint32_t count, std::map<std::string, std::string>& meta) {
  Reader r{section};
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t name_len = 0, value_len = 0;
    std::string_view name, value;
    if (!r.le(name_len) || !r.take(name_len, name) || !r.le(value_len) || !r.take(value_len, value))
      return "meta field runs past its section";
    meta.emplace(name, value);
  }
  return r.pos == section.size() ? "" : "meta section longer than its fields";
}

}  // namespace cache_format

using cache_format::Header;
using cache_format::kChecksumSize;
using cache_format::kHeaderSize;
using cache_format::read_header;
using cache_format::read_meta;

std::string make_key_text(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) out += fmt::format("{}={}:", name, value.size()) + value + "\n";
  return out;
}

std::string key_hash_hex(std::string_view key_text) {
  return fmt::format("{:016x}{:016x}", hash64(key_text, kNameSeedHi), hash64(key_text, kNameSeedLo));
}

std::string encode_entry(std::string_view key_text, const CacheEntry& entry) {
  std::string meta;
  for (const auto& [name, value] : entry.meta) {
    put_le(meta, static_cast<std::uint32_t>(name.size()));
    meta += name;
    put_le(meta, static_cast<std::uint32_t>(value.size()));
    meta += value;
  }
  std::string out(kMagic);
  put_le(out, kCacheFormatVersion);
  put_le(out, static_cast<std::uint32_t>(entry.meta.size()));
  put_le(out, static_cast<std::uint64_t>(key_text.size()));
  put_le(out, static_cast<std::uint64_t>(meta.size()));
  put_le(out, static_cast<std::uint64_t>(entry.payload.size()));
  out.append(key_text).append(meta).append(entry.payload);
  put_le(out, hash64(out, kChecksumSeed));
  return out;
}

DecodedEntry decode_entry(std::string_view bytes) {
  DecodedEntry d;
  Header h;
  d.problem = read_header(bytes, bytes.size(), h);
  if (!d.problem.empty()) return d;
  std::string_view body = bytes.substr(0, bytes.size() - kChecksumSize);
  if (load_le(bytes.data() + body.size(), kChecksumSize) != hash64(body, kChecksumSeed)) {
    d.problem = "checksum mismatch";
    return d;
  }
  Reader r{body, kHeaderSize};
  std::string_view key, meta, payload;
  r.take(h.key_len, key), r.take(h.meta_len, meta), r.take(h.payload_len, payload);
  d.problem = read_meta(meta, h.meta_count, d.entry.meta);
  d.key_text = key;
  d.entry.payload = payload;
  return d;
}

}  // namespace tessera::runtime
