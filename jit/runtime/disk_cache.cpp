#include "jit/runtime/disk_cache.hpp"

#include "jit/runtime/env_flag.hpp"

#include "jit/runtime/cache_format.hpp"

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

using cache_format::Header;
using cache_format::kHeaderSize;
using cache_format::read_header;
using cache_format::read_meta;

void warn(const std::string& message) {
  // One fputs of one line: stderr is unbuffered, so lines of concurrent processes stay whole.
  std::fputs(("tessera: " + message + "\n").c_str(), stderr);
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// Why a file that lstat describes is not read as an entry, or "". Only regular files of a
// plausible size are opened: opening a FIFO blocks until a writer comes, a device may act on
// open, and a sparse giant would be read (and allocated) whole.
std::string skip_reason(const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return fmt::format("not a regular file ({})", file_kind(st.st_mode));
  if (static_cast<std::uint64_t>(st.st_size) > cache_format::kMaxEntryBytes)
    return cache_format::too_large_problem(static_cast<std::uint64_t>(st.st_size));
  return "";
}

// A file read with POSIX calls, to tell "absent" (a plain miss) from other trouble and to know
// the inode we read (see remove_if_same).
struct FileBytes {
  std::string bytes;
  std::uint64_t size = 0;  // of the whole file; bytes may hold a prefix
  dev_t dev = 0;
  ino_t ino = 0;
  int err = 0;
  std::string skipped;  // non-empty: not read, and why (skip_reason)
  bool regular = false;
};

FileBytes read_file(const fs::path& path, std::uint64_t limit = UINT64_MAX) {
  FileBytes f;
  struct stat st {};
  auto describe = [&f, &st] {
    f.size = static_cast<std::uint64_t>(st.st_size), f.dev = st.st_dev, f.ino = st.st_ino;
    f.regular = S_ISREG(st.st_mode);
    f.skipped = skip_reason(st);
  };
  // lstat before open; then O_NONBLOCK and fstat on the descriptor, in case another process put
  // something else at the name in between (O_NOFOLLOW: a link to a FIFO is refused as well).
  if (::lstat(path.c_str(), &st) != 0) {
    f.err = errno;
    return f;
  }
  describe();
  if (!f.skipped.empty()) return f;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    f.err = errno;
    return f;
  }
  if (::fstat(fd, &st) != 0) f.err = errno;
  describe();
  try {
    f.bytes.resize(f.err || !f.skipped.empty() ? 0 : std::min(f.size, limit));
  } catch (const std::bad_alloc&) {  // at most kMaxEntryBytes, but memory may be short
    f.err = ENOMEM;
  }
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
  s.enabled = true;
  if (auto v = value("TESSERA_CACHE")) {
    const std::optional<bool> on = parse_flag(*v);
    if (!on) s.warning = fmt::format("TESSERA_CACHE={} is not a flag (use 1/true/yes/on or 0/false/no/off); the disk "
                                     "cache stays on", *v);
    s.enabled = on.value_or(true);
  }
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
  try {
    FileBytes f = read_file(path);
    if (f.err) return std::nullopt;  // absent, or unreadable: either way we compile
    // A regular file of the wrong size or content is ours to replace; something else at the
    // name (a FIFO, a folder) was put there by someone else and stays.
    std::string problem = f.skipped;
    DecodedEntry d;
    if (problem.empty()) {
      d = decode_entry(f.bytes);
      problem = d.problem;
    }
    if (!problem.empty()) {
      report_invalid(path, problem, f.regular);
      if (f.regular) remove_if_same(path, f);
      return std::nullopt;
    }
    if (d.key_text != key_text) {
      ++collisions_;
      return std::nullopt;
    }
    return std::move(d.entry);
  } catch (const std::bad_alloc&) {
    // Lengths are checked against the file's size before anything is allocated, so this is a
    // process short of memory: compile instead, as for any entry we cannot read.
    report_invalid(path, "out of memory while reading it", false);
    return std::nullopt;
  }
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
    // ENOENT: a concurrent `clear` removed our temporary file. EISDIR: a folder sits at the
    // entry's name (lookup skips it, with a warning). Skip this one publish quietly; publishing
    // other entries goes on.
    if (errno == ENOENT || errno == EISDIR) {
      ::unlink(tmp.c_str());
      return false;
    }
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
    info.skipped = !f.err && !f.skipped.empty();
    info.problem = f.err ? std::strerror(f.err) : info.skipped ? f.skipped : read_header(f.bytes, f.size, h);
    if (info.problem.empty()) {
      try {
        f = read_file(path, kHeaderSize + h.key_len + h.meta_len);
        std::string_view meta = std::string_view(f.bytes).substr(std::min<std::size_t>(f.bytes.size(), kHeaderSize + h.key_len));
        info.problem = meta.size() == h.meta_len ? read_meta(meta, h.meta_count, info.meta) : "changed while listing";
      } catch (const std::bad_alloc&) {
        info.problem = "out of memory while reading its meta";
      }
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
    struct stat st {};
    if (is_entry && ::lstat(path.c_str(), &st) == 0 && skip_reason(st).empty()) total += static_cast<std::uint64_t>(st.st_size);
  });
  return total;
}

std::size_t DiskCache::clear(std::vector<std::string>* skipped) {
  std::size_t removed = 0;
  if (dir_.empty()) return removed;
  for_each_file(root_, [&](const fs::path& path, bool) {
    // Regular files at our names are ours, whatever their size (removing reads nothing); other
    // things there (a folder, a FIFO) were made by someone else and stay.
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return;
    if (!S_ISREG(st.st_mode)) {
      if (skipped) skipped->push_back(fmt::format("{}: {}", path.string(), skip_reason(st)));
      return;
    }
    removed += ::unlink(path.c_str()) == 0 ? 1 : 0;
  });
  return removed;
}

DiskCache::Stats DiskCache::stats() const {
  return {hits_.load(), misses_.load(), invalid_.load(), collisions_.load(), publishes_.load()};
}

void DiskCache::report_invalid(const fs::path& file, const std::string& problem, bool removed) {
  ++invalid_;
  if (!reported_invalid_.exchange(true))
    warn(fmt::format("invalid disk cache entry {}: {}; {} it, the kernel is compiled again", file.string(), problem,
                     removed ? "removed" : "skipped"));
}

void DiskCache::report_unwritable(const std::string& what) {
  writable_ = false;
  if (!reported_unwritable_.exchange(true))
    warn(fmt::format("cannot write the disk cache in {} ({}); going on without publishing to it", dir_.string(), what));
}

}  // namespace tessera::runtime
