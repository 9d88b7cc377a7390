#include "jit/runtime/disk_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

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
constexpr std::size_t kHeaderSize = 40, kChecksumSize = 8;

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

struct Header {
  std::uint32_t meta_count = 0;
  std::uint64_t key_len = 0, meta_len = 0, payload_len = 0;
};

// Checks the fixed header (at the start of `bytes`) against the size of the whole file.
std::string read_header(std::string_view bytes, std::uint64_t file_size, Header& h) {
  if (file_size < kHeaderSize + kChecksumSize || bytes.size() < kHeaderSize)
    return fmt::format("{} bytes, too short for an entry (truncated?)", file_size);
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

void warn(const std::string& message) {
  // One fputs of one line: stderr is unbuffered, so lines of concurrent processes stay whole.
  std::fputs(("tessera: " + message + "\n").c_str(), stderr);
}

// A file read with POSIX calls, to tell "absent" (a plain miss) from other trouble and to know
// the inode we read (see remove_if_same).
struct FileBytes {
  std::string bytes;
  std::uint64_t size = 0;  // of the whole file; bytes may hold a prefix
  dev_t dev = 0;
  ino_t ino = 0;
  int err = 0;
};

FileBytes read_file(const fs::path& path, std::uint64_t limit = UINT64_MAX) {
  FileBytes f;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    f.err = errno;
    return f;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) f.err = errno;
  f.size = static_cast<std::uint64_t>(st.st_size), f.dev = st.st_dev, f.ino = st.st_ino;
  f.bytes.resize(f.err ? 0 : std::min(f.size, limit));
  std::size_t got = 0;
  while (got < f.bytes.size()) {
    ssize_t n = ::read(fd, f.bytes.data() + got, f.bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  f.bytes.resize(got);  // a short read shows up as a size mismatch when decoding
  ::close(fd);
  return f;
}

// Another process may have renamed a fresh entry over the bad one since we read it: remove the
// file only while it is still the inode we read.
void remove_if_same(const fs::path& path, const FileBytes& f) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && st.st_dev == f.dev && st.st_ino == f.ino) ::unlink(path.c_str());
}

bool is_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}
bool is_entry_name(std::string_view n) { return n.size() == 32 && is_hex(n); }
bool is_temp_name(std::string_view n) {
  return n.size() > 37 && is_hex(n.substr(0, 32)) && n.substr(32, 5) == ".tmp.";
}

// Calls fn(path, is_entry) for every entry and temporary file under root/<two hex digits>/.
template <class Fn>
void for_each_file(const fs::path& root, Fn fn) {
  std::error_code ec;
  for (fs::directory_iterator shard(root, ec), end; !ec && shard != end; shard.increment(ec)) {
    std::string shard_name = shard->path().filename().string();
    if (shard_name.size() != 2 || !is_hex(shard_name)) continue;
    std::error_code ec2;
    for (fs::directory_iterator f(shard->path(), ec2); !ec2 && f != end; f.increment(ec2)) {
      std::string name = f->path().filename().string();
      if (is_entry_name(name) || is_temp_name(name)) fn(f->path(), is_entry_name(name));
    }
  }
}

std::optional<std::string> passwd_home_dir() {
  long hint = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::string buf(hint > 0 ? static_cast<std::size_t>(hint) : 16384, '\0');
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) != 0 || !found || !pw.pw_dir) return std::nullopt;
  return std::string(pw.pw_dir);
}

}  // namespace

CacheSettings resolve_cache_settings(const EnvLookup& env, const HomeLookup& passwd_home) {
  // An empty variable counts as unset, as a shell's `VAR= cmd` intends.
  auto value = [&](const char* name) {
    std::optional<std::string> v = env(name);
    return v && !v->empty() ? v : std::nullopt;
  };
  CacheSettings s;
  s.enabled = value("TESSERA_CACHE") != "0";
  if (auto dir = value("TESSERA_CACHE_DIR")) {
    s.dir = *dir;
    return s;
  }
  std::optional<std::string> home = value("HOME");
  if (!home) home = passwd_home();
  if (!home || home->empty()) {
    if (s.enabled) s.warning = "no home folder (HOME unset, no passwd entry) and TESSERA_CACHE_DIR unset: the disk cache is off";
    s.enabled = false;
    return s;
  }
  s.dir = fs::path(*home) / ".cache" / "tessera";
  return s;
}

CacheSettings cache_settings_from_environment() {
  CacheSettings s = resolve_cache_settings(
      [](const char* name) -> std::optional<std::string> {
        const char* v = std::getenv(name);
        return v ? std::optional<std::string>(v) : std::nullopt;
      },
      passwd_home_dir);
  // A relative TESSERA_CACHE_DIR means the folder at startup, even if the program changes folder.
  std::error_code ec;
  if (!s.dir.empty() && s.dir.is_relative()) s.dir = fs::absolute(s.dir, ec);
  return s;
}

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

// ---- DiskCache

DiskCache& DiskCache::global() {
  static DiskCache* cache = [] {
    CacheSettings s = cache_settings_from_environment();
    if (!s.warning.empty()) warn(s.warning);
    return new DiskCache(s);
  }();
  return *cache;
}

DiskCache::DiskCache(fs::path dir, bool enabled)
    : dir_(std::move(dir)), root_(dir_ / fmt::format("v{}", kCacheFormatVersion)), enabled_(enabled && !dir_.empty()) {}

fs::path DiskCache::entry_path(std::string_view key_text) const {
  std::string name = key_hash_hex(key_text);
  return root_ / name.substr(0, 2) / name;
}

std::optional<CacheEntry> DiskCache::lookup(const std::string& key_text) {
  if (!enabled_) return std::nullopt;
  fs::path path = entry_path(key_text);
  FileBytes f = read_file(path);
  if (f.err) return std::nullopt;  // absent, or unreadable: either way we compile
  DecodedEntry d = decode_entry(f.bytes);
  if (!d.problem.empty()) {
    report_invalid(path, d.problem);
    remove_if_same(path, f);
    return std::nullopt;
  }
  if (d.key_text != key_text) {
    ++collisions_;
    return std::nullopt;
  }
  return std::move(d.entry);
}

std::optional<CacheEntry> DiskCache::get(const std::string& key_text) {
  std::optional<CacheEntry> e = lookup(key_text);
  ++(e ? hits_ : misses_);
  return e;
}

void DiskCache::put(const std::string& key_text, const CacheEntry& entry) {
  if (!enabled_ || !writable_) return;
  try {
    publish(key_text, entry);
  } catch (const std::exception& e) {  // a path or format error: never the caller's problem
    report_unwritable(e.what());
  }
}

bool DiskCache::publish(const std::string& key_text, const CacheEntry& entry) {
  static std::atomic<std::uint64_t> counter{0};
  auto fail = [&](const std::string& what) {
    report_unwritable(what);
    return false;
  };
  fs::path path = entry_path(key_text);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return fail(fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message()));

  // pid, thread and counter make the name unique among every writer of this folder.
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}.{:x}.{}", ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()), counter++);
  std::string bytes = encode_entry(key_text, entry);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail(fmt::format("cannot create {}: {}", tmp.string(), std::strerror(errno)));
  const char* failed = nullptr;
  for (std::size_t done = 0; !failed && done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) failed = "write";
    else done += static_cast<std::size_t>(n);
  }
  // fsync before rename: after a crash the final name holds the whole entry or nothing.
  if (!failed && ::fsync(fd) != 0) failed = "fsync";
  int err = errno;
  if (::close(fd) != 0 && !failed) failed = "close", err = errno;
  if (!failed && ::rename(tmp.c_str(), path.c_str()) != 0) {
    // ENOENT: a concurrent `clear` removed our temporary file. Skip this one publish quietly.
    if (errno == ENOENT) return false;
    failed = "rename", err = errno;
  }
  if (failed) {
    ::unlink(tmp.c_str());
    return fail(fmt::format("{} {}: {}", failed, tmp.string(), std::strerror(err)));
  }
  ++publishes_;
  return true;
}

CacheEntry DiskCache::get_or_create(const std::string& key_text, const std::function<CacheEntry()>& make) {
  if (std::optional<CacheEntry> hit = lookup(key_text)) {
    ++hits_;
    return std::move(*hit);
  }
  std::promise<CacheEntry> promise;
  {
    std::unique_lock lock(flights_mutex_);
    if (auto it = flights_.find(key_text); it != flights_.end()) {
      std::shared_future<CacheEntry> flight = it->second;
      lock.unlock();
      return flight.get();  // make's result, or its exception rethrown
    }
    flights_.emplace(key_text, promise.get_future().share());
  }
  // This thread leads the flight. Publish before leaving it, so that a thread that arrives after
  // the flight ends finds the entry on disk; and look again first: the previous flight of this
  // key, or another process, may have published since our miss.
  auto leave = [&] {
    std::lock_guard lock(flights_mutex_);
    flights_.erase(key_text);
  };
  try {
    std::optional<CacheEntry> e = lookup(key_text);
    ++(e ? hits_ : misses_);
    if (!e) {
      e = make();
      put(key_text, *e);
    }
    promise.set_value(*e);
    leave();
    return std::move(*e);
  } catch (...) {
    promise.set_exception(std::current_exception());
    leave();
    throw;
  }
}

std::vector<DiskCache::Info> DiskCache::list() const {
  std::vector<Info> out;
  if (dir_.empty()) return out;
  for_each_file(root_, [&](const fs::path& path, bool is_entry) {
    if (!is_entry) return;
    Info info;
    info.file = path.string();
    std::error_code ec;
    info.mtime = fs::last_write_time(path, ec);
    // Two short reads: the header, then the key and meta it announces; never the payload.
    Header h;
    FileBytes f = read_file(path, kHeaderSize);
    info.bytes = f.size;
    info.problem = f.err ? std::strerror(f.err) : read_header(f.bytes, f.size, h);
    if (info.problem.empty()) {
      f = read_file(path, kHeaderSize + h.key_len + h.meta_len);
      std::string_view meta = std::string_view(f.bytes).substr(std::min<std::size_t>(f.bytes.size(), kHeaderSize + h.key_len));
      info.problem = meta.size() == h.meta_len ? read_meta(meta, h.meta_count, info.meta) : "changed while listing";
    }
    out.push_back(std::move(info));
  });
  std::sort(out.begin(), out.end(), [](const Info& a, const Info& b) { return a.file < b.file; });
  return out;
}

std::uint64_t DiskCache::total_bytes() const {
  std::uint64_t total = 0;
  if (dir_.empty()) return total;
  for_each_file(root_, [&](const fs::path& path, bool is_entry) {
    std::error_code ec;
    std::uint64_t n = fs::file_size(path, ec);
    if (is_entry && !ec) total += n;
  });
  return total;
}

std::size_t DiskCache::clear() {
  std::size_t removed = 0;
  if (dir_.empty()) return removed;
  for_each_file(root_, [&](const fs::path& path, bool) {
    std::error_code ec;
    removed += fs::remove(path, ec) ? 1 : 0;
  });
  return removed;
}

DiskCache::Stats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), invalid_.load(), collisions_.load(), publishes_.load()};
}

void DiskCache::report_invalid(const fs::path& file, const std::string& problem) {
  ++invalid_;
  if (!reported_invalid_.exchange(true))
    warn(fmt::format("invalid disk cache entry {}: {}; removed it, the kernel is compiled again", file.string(), problem));
}

void DiskCache::report_unwritable(const std::string& what) {
  writable_ = false;
  if (!reported_unwritable_.exchange(true))
    warn(fmt::format("cannot write the disk cache in {} ({}); going on without publishing to it", dir_.string(), what));
}

}  // namespace tessera::runtime
