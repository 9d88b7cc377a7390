// Internal to the disk cache (cache_format.cpp, disk_cache.cpp): the fixed header of an entry
// file, which DiskCache::list reads without reading payloads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "jit/runtime/disk_cache.hpp"

namespace tessera::runtime::cache_format {

constexpr std::size_t kHeaderSize = 40, kChecksumSize = 8;
// No entry is larger (a kernel's binary is megabytes): a bigger file at an entry's name, such as
// a sparse file of terabytes, is refused by its size alone, never read, so that a lookup neither
// reads for minutes nor allocates its length.
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{1} << 30;

struct Header {
  std::uint32_t meta_count = 0;
  std::uint64_t key_len = 0, meta_len = 0, payload_len = 0;
};

// The problem of a file larger than kMaxEntryBytes, in words.
std::string too_large_problem(std::uint64_t file_size);
// Checks the fixed header (at the start of `bytes`) against the size of the whole file; returns
// the problem, or "" when it is sound.
std::string read_header(std::string_view bytes, std::uint64_t file_size, Header& h);
// Reads `count` name/value fields from the meta section; returns the problem, or "".
std::string read_meta(std::string_view section, std::uint32_t count, std::map<std::string, std::string>& meta);

}  // namespace tessera::runtime::cache_format
