// tessera's on-disk compile cache: compiled kernels (cubin, PTX, HSACO) kept across processes.
//
// Content-addressed: the caller passes the full key text (IR text, target, compile options, the
// versions of tessera and LLVM: everything the binary depends on), and the entry's file name is a
// 128-bit hash of that text. The entry stores the key text as well, so a hit is confirmed by
// comparing it: a hash collision is a miss, never a wrong kernel.
//
// Layout: <dir>/v1/<first two hex digits>/<32 hex digits>. The "v1" folder is the file format's
// version, so a later format never reads these files (and these never read a later format's).
//
// Robustness, which the tests pin down:
//  - Publishing writes a temporary file in the entry's folder, fsyncs it and renames it over the
//    final name, so readers never see a partial entry and concurrent publishers all succeed.
//  - Every read validates magic, version, lengths and a checksum. A bad entry is reported once
//    (a "tessera: " line on stderr naming the file), removed, and treated as a miss.
//  - Only regular files are opened (lstat first, then O_NONBLOCK): a FIFO, a folder or a link at
//    an entry's name is skipped with that warning and left alone; a file larger than any entry
//    (cache_format.hpp's kMaxEntryBytes, 1 GiB) is refused by its size, never read.
//  - An unwritable, read-only or full cache directory turns publishing off with one warning;
//    the cache never throws on I/O trouble and never crashes. Reading goes on (a cache directory
//    filled in advance on a read-only mount still serves hits).
//  - "Once" means once per DiskCache object; DiskCache::global() is the one object per process.
//
// No LLVM and no GPU driver here: this library links into the `tessera-cache` tool on its own.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::runtime {

// One cached compile result.
struct CacheEntry {
  std::string payload;                        // binary bytes (cubin, PTX, HSACO); NULs allowed
  std::map<std::string, std::string> meta;    // small fields: format, kernel, target, shared_bytes...
  bool operator==(const CacheEntry&) const = default;
};

// Where the cache lives and whether it is on, resolved from environment variables:
//   TESSERA_CACHE=0       turns the cache off (dir is still resolved, for the tool)
//   TESSERA_CACHE_DIR     the cache folder; default $HOME/.cache/tessera, where an unset or empty
//                         HOME falls back to the passwd entry's home folder. With neither, the
//                         cache is off and `warning` says why (DiskCache::global() prints it once).
struct CacheSettings {
  bool enabled = false;
  std::filesystem::path dir;
  std::string warning;  // non-empty when the cache is off against the user's wish
};
// An environment lookup: the variable's value, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
// The home folder of the passwd entry of the effective user, or nullopt.
using HomeLookup = std::function<std::optional<std::string>()>;
// Pure: the lookups are injected so that tests need not mutate the process environment.
CacheSettings resolve_cache_settings(const EnvLookup& env, const HomeLookup& passwd_home);
// The same over the real environment (getenv, getpwuid_r).
CacheSettings cache_settings_from_environment();

// Joins named fields into one unambiguous key text ("name=<length>:value\n" each, in the order
// given), so that fields whose text runs together ("ab"+"c", "a"+"bc") never give the same key.
std::string make_key_text(const std::vector<std::pair<std::string, std::string>>& fields);

// The 32 lowercase hex digits that name the entry of a key text (a 128-bit hash, our own).
std::string key_hash_hex(std::string_view key_text);

// The entry file format, exposed for tests and the tool:
//   "TSRCACHE" | u32 version | u32 meta count | u64 key length | u64 meta length | u64 payload length
//   | key text | meta (u32 name length, name, u32 value length, value; sorted by name) | payload
//   | u64 checksum of everything before it.                             (integers little-endian)
inline constexpr std::uint32_t kCacheFormatVersion = 1;
std::string encode_entry(std::string_view key_text, const CacheEntry& entry);
struct DecodedEntry {
  std::string key_text;
  CacheEntry entry;
  std::string problem;  // empty when the bytes are a valid entry; else what is wrong, in words
};
DecodedEntry decode_entry(std::string_view bytes);

class DiskCache {
 public:
  // The process's cache, from cache_settings_from_environment(); never destroyed (threads may
  // still compile while static destructors run).
  static DiskCache& global();
  explicit DiskCache(std::filesystem::path dir, bool enabled = true);
  explicit DiskCache(const CacheSettings& s) : DiskCache(s.dir, s.enabled) {}
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  bool enabled() const { return enabled_; }
  const std::filesystem::path& dir() const { return dir_; }
  // The file an entry of this key text lives in (whether or not it exists).
  std::filesystem::path entry_path(std::string_view key_text) const;

  // A valid entry whose stored key text equals key_text, or nullopt (absent, invalid, collision).
  std::optional<CacheEntry> get(const std::string& key_text);
  // Publishes atomically; I/O trouble turns publishing off with one warning, never throws.
  void put(const std::string& key_text, const CacheEntry& entry);
  // Single flight: a disk lookup; on a miss, at most one thread of this process runs `make` for
  // a key at a time while the others wait for and share its result, which is then published.
  // If make throws, the waiting threads get the same exception and nothing is published.
  // With the cache off, still single flight, with no disk access. (A make that asks for its own
  // key again would wait for itself: don't.)
  CacheEntry get_or_create(const std::string& key_text, const std::function<CacheEntry()>& make);

  // Entries on disk, sorted by file name; temporary files are not entries. A file whose header
  // or meta is bad is listed with its problem (list reads no payloads); one that is not a regular
  // file or too large to be an entry is listed with `skipped` and is never opened.
  struct Info {
    std::string file;  // full path
    std::uint64_t bytes = 0;
    std::filesystem::file_time_type mtime;
    std::map<std::string, std::string> meta;
    std::string problem;  // empty when the header and meta read fine
    bool skipped = false;  // not a regular file, or larger than any entry: not opened, not an entry
  };
  std::vector<Info> list() const;
  std::uint64_t total_bytes() const;  // of the entries that list() does not mark skipped
  // Removes every entry and every temporary file left by a killed process; returns how many
  // files it removed. A publisher whose temporary file vanishes just skips that publish.
  // Something that is not a regular file at such a name stays; `skipped` gets "path: why".
  std::size_t clear(std::vector<std::string>* skipped = nullptr);

  // Counters, for tests and TESSERA_DEBUG.
  struct Stats {
    std::uint64_t hits = 0, misses = 0, invalid = 0, collisions = 0, publishes = 0;
  };
  Stats stats() const;

 private:
  std::optional<CacheEntry> lookup(const std::string& key_text);  // get() without the counters
  void report_invalid(const std::filesystem::path& file, const std::string& problem, bool removed);
  void report_unwritable(const std::string& what);
  bool publish(const std::string& key_text, const CacheEntry& entry);

  std::filesystem::path dir_;  // as given
  std::filesystem::path root_; // dir_ / "v1": the folder of this format's entries
  bool enabled_;
  std::atomic<bool> writable_{true};
  std::atomic<bool> reported_invalid_{false}, reported_unwritable_{false};
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, invalid_{0}, collisions_{0}, publishes_{0};
  std::mutex flights_mutex_;
  std::map<std::string, std::shared_future<CacheEntry>> flights_;  // by key text
};

}  // namespace tessera::runtime
