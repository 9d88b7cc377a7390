// tessera-cache: look at and empty tessera's on-disk compile cache.
//
//   tessera-cache [--dir DIR] list     one line per entry: hash, bytes, age, kernel, target
//   tessera-cache [--dir DIR] size     entry count and total bytes
//   tessera-cache [--dir DIR] clear    remove every entry (and temporary files left by killed
//                                      processes), and say how many files went
//   tessera-cache [--dir DIR] path     the cache folder
//
// Without --dir, the folder is the one a tessera program uses (TESSERA_CACHE_DIR, else
// $HOME/.cache/tessera). TESSERA_CACHE=0 turns the cache off for programs, not for this tool.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "jit/runtime/disk_cache.hpp"
#include "tessera/error.hpp"

namespace fs = std::filesystem;
using tessera::runtime::DiskCache;

namespace {

constexpr const char* kUsage = "usage: tessera-cache [--dir DIR] list|size|clear|path\n";

struct Options {
  std::string dir;  // empty: from the environment
  std::string command;
};

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (a == "--dir") {
      if (i + 1 >= argc || argv[i + 1][0] == '\0') throw tessera::Error(std::string("--dir needs a folder\n") + kUsage);
      o.dir = argv[++i];
    } else if (a.rfind("--dir=", 0) == 0 && a.size() > 6) {
      o.dir = a.substr(6);
    } else if (a.size() > 1 && a[0] == '-') {
      throw tessera::Error("unknown option '" + a + "'\n" + kUsage);
    } else if (!o.command.empty()) {
      throw tessera::Error("more than one command ('" + o.command + "', '" + a + "')\n" + kUsage);
    } else if (a == "list" || a == "size" || a == "clear" || a == "path") {
      o.command = a;
    } else {
      throw tessera::Error("unknown command '" + a + "'\n" + kUsage);
    }
  }
  if (o.command.empty()) throw tessera::Error(std::string("no command given\n") + kUsage);
  return o;
}

fs::path cache_dir(const Options& o) {
  fs::path dir;
  if (!o.dir.empty()) {
    dir = fs::absolute(o.dir);
  } else {
    tessera::runtime::CacheSettings s = tessera::runtime::cache_settings_from_environment();
    if (s.dir.empty()) throw tessera::Error(s.warning + "; pass --dir DIR");
    dir = s.dir;
  }
  // A folder that does not exist yet is an empty cache; anything else that is not a folder (a
  // file, a FIFO) is a mistake in the argument, not an empty cache. stat follows a symbolic link.
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw tessera::Error(fmt::format("'{}' is not a directory{}", dir.string(), o.dir.empty() ? " (the cache folder, from TESSERA_CACHE_DIR or HOME)" : ""));
  return dir;
}

std::string age(fs::file_time_type mtime) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(fs::file_time_type::clock::now() - mtime).count();
  if (s < 0) s = 0;
  if (s < 120) return fmt::format("{}s", s);
  if (s < 7200) return fmt::format("{}m", s / 60);
  if (s < 172800) return fmt::format("{}h", s / 3600);
  return fmt::format("{}d", s / 86400);
}

std::string field(const DiskCache::Info& info, const std::string& name) {
  auto it = info.meta.find(name);
  return it == info.meta.end() || it->second.empty() ? "-" : it->second;
}

// Something at an entry's name that the cache never opens (a FIFO, a folder, a giant file).
void warn_skipped(const std::string& what) { std::fprintf(stderr, "tessera-cache: warning: skipped %s\n", what.c_str()); }

int run(const Options& o) {
  // Always on here: TESSERA_CACHE=0 is about programs using the cache, not about managing it.
  DiskCache cache(cache_dir(o), true);
  if (o.command == "path") {
    fmt::print("{}\n", cache.dir().string());
  } else if (o.command == "list") {
    for (const DiskCache::Info& info : cache.list()) {
      std::string name = fs::path(info.file).filename().string();
      if (info.problem.empty())
        fmt::print("{}  {:>10}  {:>4}  {}  {}\n", name, info.bytes, age(info.mtime), field(info, "kernel"), field(info, "target"));
      else
        fmt::print("{}  {:>10}  {:>4}  {}: {}\n", name, info.bytes, age(info.mtime), info.skipped ? "skipped" : "invalid",
                   info.problem);
    }
  } else if (o.command == "size") {
    std::size_t entries = 0;
    for (const DiskCache::Info& info : cache.list()) {
      if (info.skipped) warn_skipped(fmt::format("{}: {}", info.file, info.problem));
      else ++entries;
    }
    fmt::print("{} entries, {} bytes\n", entries, cache.total_bytes());
  } else if (o.command == "clear") {
    std::vector<std::string> skipped;
    std::size_t removed = cache.clear(&skipped);
    for (const std::string& s : skipped) warn_skipped(s);
    fmt::print("removed {} files from {}\n", removed, cache.dir().string());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parse_args(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera-cache: %s\n", e.what());
    return 1;
  }
}
