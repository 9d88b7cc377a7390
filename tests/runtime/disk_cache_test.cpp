// The on-disk compile cache: format, validation, atomic publish, single flight across threads,
// concurrent processes, unwritable folders, settings, and the tessera-cache tool.
#include <catch2/catch.hpp>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <latch>
#include <random>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jit/runtime/disk_cache.hpp"

namespace fs = std::filesystem;
using namespace tessera::runtime;
using namespace std::chrono_literals;

namespace {

// A fresh folder under the system's temporary folder, removed with everything in it.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tessera_cache_test_XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

// Sends file descriptor 2 to a file while alive: the cache's warnings are real stderr lines.
struct StderrCapture {
  TempDir dir;
  int saved = ::dup(2);
  StderrCapture() {
    int fd = ::open((dir.path / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    REQUIRE(fd >= 0);
    ::dup2(fd, 2);
    ::close(fd);
  }
  ~StderrCapture() {
    ::dup2(saved, 2);
    ::close(saved);
  }
  std::string text() const {
    std::ifstream in(dir.path / "stderr");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // How many lines say "tessera: ..." and contain `needle`.
  int lines_with(const std::string& needle) const {
    std::istringstream s(text());
    int n = 0;
    for (std::string line; std::getline(s, line);) n += line.rfind("tessera: ", 0) == 0 && line.find(needle) != std::string::npos;
    return n;
  }
};

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_bytes(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

std::string binary_payload(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  s[0] = s[n / 2] = s[n - 1] = '\0';  // embedded NULs for sure
  return s;
}

CacheEntry sample_entry(const std::string& kernel, unsigned seed = 1) {
  return {binary_payload(1000 + seed, seed), {{"format", "cubin"}, {"kernel", kernel}, {"target", "sm_90a"}, {"shared_bytes", "4096"}}};
}

// Every regular file under a folder, by name.
std::vector<std::string> file_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  return names;
}

// Two entries, and the temporary file that a publisher of the first, killed, would leave.
fs::path put_two_and_a_stale_temp(DiskCache& cache) {
  cache.put("a", sample_entry("softmax_kernel", 1));
  cache.put("b", sample_entry("matmul_kernel", 2));
  fs::path stale = cache.entry_path("a");
  stale += ".tmp.4242.1f.0";
  write_bytes(stale, "half an entr");
  return stale;
}

}  // namespace

TEST_CASE("disk cache: round trip of binary payload and meta, in this and a fresh object", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  CacheEntry e = sample_entry("add");
  REQUIRE(e.payload.find('\0') != std::string::npos);
  CHECK_FALSE(cache.get("key one"));
  cache.put("key one", e);
  CHECK(cache.get("key one") == e);
  CHECK(DiskCache(d.path).get("key one") == e);

  std::string hash = key_hash_hex("key one");
  CHECK(hash.size() == 32);
  CHECK(hash == key_hash_hex(std::string("key one")));
  CHECK(cache.entry_path("key one") == d.path / "v1" / hash.substr(0, 2) / hash);
  CHECK(fs::is_regular_file(cache.entry_path("key one")));

  CacheEntry empty;  // no payload, no meta
  cache.put("empty", empty);
  CHECK(cache.get("empty") == empty);
  CHECK(cache.stats().publishes == 2);
}

TEST_CASE("disk cache: different keys give different entries", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  CacheEntry a = sample_entry("a", 1), b = sample_entry("b", 2);
  cache.put("ir A | sm_90a", a);
  cache.put("ir A | sm_80", b);  // one field differs
  CHECK(cache.entry_path("ir A | sm_90a") != cache.entry_path("ir A | sm_80"));
  CHECK(cache.get("ir A | sm_90a") == a);
  CHECK(cache.get("ir A | sm_80") == b);
  CHECK_FALSE(cache.get("ir B"));
  CHECK(cache.list().size() == 2);
}

TEST_CASE("disk cache: key texts are joined without ambiguity", "[cache]") {
  CHECK(make_key_text({{"ir", "ab"}, {"target", "c"}}) != make_key_text({{"ir", "a"}, {"target", "bc"}}));
  CHECK(make_key_text({{"ir", "x\n"}}) != make_key_text({{"ir", "x"}}));
  CHECK(make_key_text({{"ir", "k"}, {"llvm", "22"}}) == "ir=1:k\nllvm=2:22\n");
}

TEST_CASE("disk cache: a file with another key's text at this key's name is a miss", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  StderrCapture err;
  // Simulates a hash collision: a valid entry of "other key" stored under the name of "key A".
  write_bytes(cache.entry_path("key A"), encode_entry("other key", sample_entry("other")));
  CHECK_FALSE(cache.get("key A"));
  CHECK(cache.stats().collisions == 1);
  CHECK(cache.stats().invalid == 0);
  CHECK(err.text().empty());  // a collision is no corruption
  int calls = 0;
  CacheEntry mine = sample_entry("mine", 7);
  CHECK(cache.get_or_create("key A", [&] { ++calls; return mine; }) == mine);
  CHECK(calls == 1);
  CHECK(cache.get("key A") == mine);
}

TEST_CASE("disk cache: decode_entry rejects every truncation and any flipped byte", "[cache]") {
  std::string bytes = encode_entry("k", {"pay\0load", {{"kernel", "add"}}});
  DecodedEntry ok = decode_entry(bytes);
  REQUIRE(ok.problem.empty());
  CHECK(ok.key_text == "k");
  CHECK(ok.entry.meta.at("kernel") == "add");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    INFO("prefix of " << n << " bytes");
    CHECK_FALSE(decode_entry(std::string_view(bytes).substr(0, n)).problem.empty());
  }
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string flipped = bytes;
    flipped[i] ^= 0x10;
    INFO("byte " << i << " flipped");
    CHECK_FALSE(decode_entry(flipped).problem.empty());
  }
}

TEST_CASE("disk cache: a truncated entry is a miss, reported once, removed and recreated", "[cache]") {
  TempDir d;
  CacheEntry e = sample_entry("add");
  const std::size_t full = encode_entry("key", e).size();
  for (std::size_t len : {std::size_t(0), std::size_t(7), std::size_t(39), std::size_t(40), std::size_t(45), full / 2, full - 9, full - 1}) {
    DYNAMIC_SECTION("truncated to " << len << " of " << full << " bytes") {
      DiskCache cache(d.path);
      cache.put("key", e);
      fs::path file = cache.entry_path("key");
      fs::resize_file(file, len);
      StderrCapture err;
      CHECK_FALSE(cache.get("key"));
      CHECK(cache.stats().invalid == 1);
      CHECK(err.lines_with(file.string()) == 1);
      CHECK_FALSE(fs::exists(file));
      int calls = 0;
      CHECK(cache.get_or_create("key", [&] { ++calls; return e; }) == e);
      CHECK(calls == 1);
      CHECK(DiskCache(d.path).get("key") == e);
    }
  }
}

TEST_CASE("disk cache: garbage, a bad version and a flipped payload byte are misses", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  CacheEntry e = sample_entry("add");
  StderrCapture err;

  write_bytes(cache.entry_path("garbage"), binary_payload(300, 9));
  CHECK_FALSE(cache.get("garbage"));
  CHECK(err.lines_with("bad magic") == 1);
  CHECK_FALSE(fs::exists(cache.entry_path("garbage")));

  std::string future = encode_entry("future", e);
  future[8] = 2;  // format version 2
  write_bytes(cache.entry_path("future"), future);
  CHECK_FALSE(cache.get("future"));
  CHECK(decode_entry(future).problem.find("format version 2") != std::string::npos);

  cache.put("flip", e);
  std::string bytes = read_bytes(cache.entry_path("flip"));
  bytes[bytes.size() - 8 - e.payload.size() / 2] ^= 1;  // a byte in the middle of the payload
  write_bytes(cache.entry_path("flip"), bytes);
  CHECK(decode_entry(bytes).problem == "checksum mismatch");
  CHECK_FALSE(cache.get("flip"));

  CHECK(cache.stats().invalid == 3);
  CHECK(err.lines_with("invalid disk cache entry") == 1);  // once per object (per process)
  cache.put("flip", e);
  CHECK(cache.get("flip") == e);
}

TEST_CASE("disk cache: single flight among threads", "[cache][threads]") {
  TempDir d;
  DiskCache cache(d.path);
  constexpr int kThreads = 8;
  std::atomic<int> calls{0};
  std::latch start(kThreads);

  SECTION("make runs once and every thread gets its result") {
    std::vector<CacheEntry> got(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        start.arrive_and_wait();
        got[t] = cache.get_or_create("shared key", [&] {
          ++calls;
          std::this_thread::sleep_for(200ms);
          return sample_entry("once", 3);
        });
      });
    for (auto& th : threads) th.join();
    CHECK(calls == 1);
    for (const CacheEntry& g : got) CHECK(g == sample_entry("once", 3));
    CHECK(cache.get("shared key") == sample_entry("once", 3));
  }
  SECTION("when make throws, every waiting thread gets the exception and nothing is published") {
    std::atomic<int> caught{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        start.arrive_and_wait();
        try {
          cache.get_or_create("failing key", [&]() -> CacheEntry {
            ++calls;
            std::this_thread::sleep_for(300ms);
            throw std::runtime_error("ptxas failed");
          });
        } catch (const std::runtime_error& e) {
          caught += std::string(e.what()) == "ptxas failed";
        }
      });
    for (auto& th : threads) th.join();
    CHECK(calls == 1);
    CHECK(caught == kThreads);
    CHECK_FALSE(cache.get("failing key"));
    CHECK_FALSE(fs::exists(cache.entry_path("failing key")));
  }
}

TEST_CASE("disk cache: get, put and get_or_create from many threads at once", "[cache][threads]") {
  TempDir d;
  DiskCache cache(d.path);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 60; ++i) {
        unsigned k = rng() % 5;
        std::string key = "key " + std::to_string(k);
        CacheEntry want = sample_entry("k" + std::to_string(k), k);
        switch (rng() % 3) {
          case 0: cache.put(key, want); break;
          case 1: if (auto got = cache.get(key)) wrong += !(*got == want); break;
          default: wrong += !(cache.get_or_create(key, [&] { return want; }) == want);
        }
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(cache.stats().invalid == 0);
  for (const std::string& name : file_names(d.path)) CHECK(name.size() == 32);  // no temporary files
}

TEST_CASE("disk cache: 8 processes publishing one key at once all succeed", "[cache][processes]") {
  TempDir d;
  DiskCache cache(d.path);
  const CacheEntry want = sample_entry("multi", 5);
  int go[2];
  REQUIRE(::pipe(go) == 0);
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {  // the child: no Catch2 here, only get_or_create and _exit
      ::close(go[1]);
      char c;
      while (::read(go[0], &c, 1) < 0 && errno == EINTR) {}  // returns 0 once every writer closed
      int status = 2;
      try {
        CacheEntry got = cache.get_or_create("process key", [&] {
          std::this_thread::sleep_for(50ms);
          return want;
        });
        status = got == want ? 0 : 1;
      } catch (...) {
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(go[1]);  // start them all at once
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    INFO("child exit status " << status << " (0 ok, 1 wrong payload, 2 exception)");
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  }
  CHECK(DiskCache(d.path).get("process key") == want);
  CHECK(file_names(d.path) == std::vector<std::string>{key_hash_hex("process key")});
}

TEST_CASE("disk cache: an unwritable folder degrades to no disk cache with one warning", "[cache]") {
  TempDir d;
  auto check_degrades = [](const fs::path& dir) {
    DiskCache cache(dir);
    StderrCapture err;
    int calls = 0;
    CacheEntry e = sample_entry("add");
    CHECK(cache.get_or_create("one", [&] { ++calls; return e; }) == e);
    CHECK(cache.get_or_create("two", [&] { ++calls; return e; }) == e);
    cache.put("three", e);
    CHECK_FALSE(cache.get("three"));
    CHECK(calls == 2);
    CHECK(err.lines_with("cannot write the disk cache") == 1);
    CHECK(cache.stats().publishes == 0);
  };
  SECTION("its parent is a regular file (ENOTDIR, even as root)") {
    write_bytes(d.path / "file", "not a folder");
    check_degrades(d.path / "file" / "cache");
  }
  SECTION("mode 0555") {
    if (::geteuid() == 0) {
      WARN("running as root, where mode 0555 does not block writes: the case is skipped");
      return;
    }
    fs::create_directories(d.path / "ro");
    fs::permissions(d.path / "ro", fs::perms(0555));
    check_degrades(d.path / "ro");
  }
}

TEST_CASE("disk cache: temporary files of killed processes are ignored, and clear removes them", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  fs::path stale = put_two_and_a_stale_temp(cache);
  const std::uint64_t entries_bytes = fs::file_size(cache.entry_path("a")) + fs::file_size(cache.entry_path("b"));
  CHECK(cache.list().size() == 2);
  CHECK(cache.total_bytes() == entries_bytes);
  CHECK(cache.get("a") == sample_entry("softmax_kernel", 1));
  CHECK(cache.clear() == 3);
  CHECK_FALSE(fs::exists(stale));
  CHECK(cache.list().empty());
  CHECK(cache.total_bytes() == 0);
  CHECK_FALSE(cache.get("a"));
}

TEST_CASE("disk cache: list reads kernel and target from the meta", "[cache]") {
  TempDir d;
  DiskCache cache(d.path);
  cache.put("k", sample_entry("softmax"));
  std::vector<DiskCache::Info> infos = cache.list();
  REQUIRE(infos.size() == 1);
  CHECK(infos[0].file == cache.entry_path("k").string());
  CHECK(infos[0].bytes == fs::file_size(cache.entry_path("k")));
  CHECK(infos[0].meta == sample_entry("softmax").meta);
  CHECK(infos[0].problem.empty());
}

TEST_CASE("disk cache: settings from an injected environment", "[cache][settings]") {
  using Env = std::map<std::string, std::string>;
  auto resolve = [](Env env, std::optional<std::string> passwd_home) {
    return resolve_cache_settings(
        [env](const char* name) -> std::optional<std::string> {
          auto it = env.find(name);
          return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        },
        [passwd_home] { return passwd_home; });
  };
  CacheSettings s = resolve({{"HOME", "/home/u"}}, "/pw");
  CHECK((s.enabled && s.dir == "/home/u/.cache/tessera" && s.warning.empty()));
  s = resolve({{"HOME", "/home/u"}, {"TESSERA_CACHE_DIR", "/fast/cache"}}, "/pw");
  CHECK((s.enabled && s.dir == "/fast/cache"));
  s = resolve({{"HOME", "/home/u"}, {"TESSERA_CACHE", "0"}}, "/pw");
  CHECK((!s.enabled && s.dir == "/home/u/.cache/tessera" && s.warning.empty()));
  s = resolve({{"TESSERA_CACHE", "1"}}, "/pw");  // no HOME: the passwd entry's home
  CHECK((s.enabled && s.dir == "/pw/.cache/tessera"));
  s = resolve({{"HOME", ""}}, "/pw");  // empty counts as unset
  CHECK(s.dir == "/pw/.cache/tessera");
  s = resolve({}, std::nullopt);  // neither: off, with a reason
  CHECK((!s.enabled && s.dir.empty() && s.warning.find("TESSERA_CACHE_DIR") != std::string::npos));
  s = resolve({{"TESSERA_CACHE", "0"}}, std::nullopt);  // off on purpose: nothing to warn about
  CHECK((!s.enabled && s.warning.empty()));
  // TESSERA_CACHE is a flag like the others: false/no/off turn it off (it used to read "false" as
  // on, since only "0" was off), true/yes/on keep it on, anything else is warned about.
  for (const char* off_word : {"false", "No", "OFF"}) {
    s = resolve({{"HOME", "/home/u"}, {"TESSERA_CACHE", off_word}}, "/pw");
    CHECK((!s.enabled && s.warning.empty()));
  }
  s = resolve({{"HOME", "/home/u"}, {"TESSERA_CACHE", "TRUE"}}, "/pw");
  CHECK((s.enabled && s.warning.empty()));
  s = resolve({{"HOME", "/home/u"}, {"TESSERA_CACHE", "disabled"}}, "/pw");
  CHECK((s.enabled && s.warning.find("TESSERA_CACHE=disabled is not a flag") != std::string::npos));

  DiskCache off(resolve({}, std::nullopt));  // an off cache still computes
  int calls = 0;
  CHECK(off.get_or_create("k", [&] { ++calls; return sample_entry("x"); }) == sample_entry("x"));
  CHECK(off.get_or_create("k", [&] { ++calls; return sample_entry("x"); }) == sample_entry("x"));
  CHECK(calls == 2);
  CHECK((off.list().empty() && off.clear() == 0 && off.total_bytes() == 0));
}

TEST_CASE("disk cache: the real environment without HOME does not fail", "[cache][settings]") {
  // Restores both variables, whatever happens.
  struct Saved {
    std::optional<std::string> home, dir;
    Saved() {
      if (const char* h = std::getenv("HOME")) home = h;
      if (const char* c = std::getenv("TESSERA_CACHE_DIR")) dir = c;
    }
    ~Saved() {
      home ? ::setenv("HOME", home->c_str(), 1) : ::unsetenv("HOME");
      dir ? ::setenv("TESSERA_CACHE_DIR", dir->c_str(), 1) : ::unsetenv("TESSERA_CACHE_DIR");
    }
  } saved;
  ::unsetenv("HOME");
  ::unsetenv("TESSERA_CACHE_DIR");
  CacheSettings s;
  REQUIRE_NOTHROW(s = cache_settings_from_environment());
  // Either the passwd entry gave a home, or the cache is off and says why.
  CHECK(((!s.dir.empty() && s.dir.filename() == "tessera") || (!s.enabled && !s.warning.empty())));
}

namespace {
struct ToolRun {
  int status;
  std::string output;
};
ToolRun run_tool(const std::string& args) {
  std::string cmd = std::string("\"") + TESSERA_CACHE_TOOL + "\" " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
}  // namespace

TEST_CASE("tessera-cache: list, size, clear and path on a populated folder", "[cache][tool]") {
  TempDir d;
  DiskCache cache(d.path);
  put_two_and_a_stale_temp(cache);
  const std::string dir = "--dir \"" + d.path.string() + "\"";

  ToolRun r = run_tool(dir + " path");
  CHECK(r.status == 0);
  CHECK(r.output == d.path.string() + "\n");

  r = run_tool(dir + " list");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find(key_hash_hex("a")) != std::string::npos);
  CHECK(r.output.find("softmax_kernel  sm_90a") != std::string::npos);
  CHECK(r.output.find("matmul_kernel  sm_90a") != std::string::npos);
  CHECK(r.output.find(".tmp.") == std::string::npos);

  r = run_tool(dir + " size");
  CHECK(r.output == "2 entries, " + std::to_string(cache.total_bytes()) + " bytes\n");
  CHECK(r.status == 0);

  r = run_tool(dir + " clear");
  CHECK(r.status == 0);
  CHECK(r.output.rfind("removed 3 files", 0) == 0);
  CHECK(file_names(d.path).empty());
  CHECK(run_tool(dir + " size").output == "0 entries, 0 bytes\n");
}

TEST_CASE("tessera-cache: bad usage exits 1 with a message", "[cache][tool]") {
  for (const char* args : {"", "frobnicate", "--dir", "--bogus size", "list size"}) {
    ToolRun r = run_tool(args);
    INFO("args '" << args << "': " << r.output);
    CHECK(r.status == 1);
    CHECK(r.output.rfind("tessera-cache: ", 0) == 0);
    CHECK(r.output.find("usage: tessera-cache") != std::string::npos);
  }
}

// ---- Things at an entry's name that are not entries: never opened blocking, never read whole.

namespace {

// Runs fn on another thread; fails (instead of hanging the suite) if it takes more than 20 s.
// A lookup that opened the FIFO blocking would wait for a writer forever: unblock it by opening
// the other end, then fail.
template <class Fn>
void within_seconds(const fs::path& fifo, Fn fn) {
  auto done = std::async(std::launch::async, fn);
  if (done.wait_for(20s) == std::future_status::timeout) {
    int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    done.wait();
    FAIL("blocked on the FIFO " << fifo);
  }
  done.get();
}

// A sparse file just over the largest size an entry may have: no disk space, a huge length.
void make_giant(const fs::path& p) {
  fs::create_directories(p.parent_path());
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, (off_t{1} << 30) + 1) == 0);
  ::close(fd);
}

void make_fifo(const fs::path& p) {
  fs::create_directories(p.parent_path());
  REQUIRE(::mkfifo(p.c_str(), 0644) == 0);
}

}  // namespace

TEST_CASE("disk cache: a FIFO at an entry's name is skipped with a warning, without blocking", "[cache][special]") {
  TempDir d;
  DiskCache cache(d.path);
  const fs::path fifo = cache.entry_path("fifo");
  make_fifo(fifo);
  StderrCapture err;
  within_seconds(fifo, [&] { CHECK_FALSE(cache.get("fifo")); });
  CHECK(cache.stats().invalid == 1);
  CHECK(err.lines_with("invalid disk cache entry " + fifo.string() +
                       ": not a regular file (a FIFO); skipped it, the kernel is compiled again") == 1);
  CHECK(fs::is_fifo(fifo));  // not ours: left where it was
  // Compiling and publishing still work (the rename replaces the FIFO with the entry).
  CacheEntry e = sample_entry("add");
  within_seconds(fifo, [&] { CHECK(cache.get_or_create("fifo", [&] { return e; }) == e); });
  CHECK(cache.get("fifo") == e);
}

TEST_CASE("disk cache: a folder or a symbolic link at an entry's name is skipped, and publishing goes on", "[cache][special]") {
  TempDir d;
  DiskCache cache(d.path);
  CacheEntry e = sample_entry("add");
  fs::create_directories(cache.entry_path("dir"));
  StderrCapture err;
  CHECK_FALSE(cache.get("dir"));
  CHECK(err.lines_with("not a regular file (a directory); skipped it") == 1);
  CHECK(cache.get_or_create("dir", [&] { return e; }) == e);  // cannot be published over a folder
  CHECK(fs::is_directory(cache.entry_path("dir")));
  cache.put("other", e);  // ... which did not turn publishing off
  CHECK(cache.get("other") == e);
  CHECK(err.text().find("cannot write the disk cache") == std::string::npos);

  // A link to a valid entry is not followed (it could as well point at a FIFO or a device).
  fs::create_directories(cache.entry_path("link").parent_path());
  fs::create_symlink(cache.entry_path("other"), cache.entry_path("link"));
  const auto before = cache.stats().invalid;  // get_or_create above looked twice (before and in its flight)
  CHECK_FALSE(cache.get("link"));
  CHECK(cache.stats().invalid == before + 1);
  CHECK(fs::is_symlink(cache.entry_path("link")));
}

TEST_CASE("disk cache: a sparse giant at an entry's name is refused by its size, never read", "[cache][special]") {
  TempDir d;
  DiskCache cache(d.path);
  const fs::path giant = cache.entry_path("giant");
  make_giant(giant);
  StderrCapture err;
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(cache.get("giant"));
  CHECK(std::chrono::steady_clock::now() - start < 2s);  // reading 1 GiB of zeros would take longer
  CHECK(err.lines_with("1073741825 bytes, larger than any entry (1073741824 bytes at most); removed it") == 1);
  CHECK_FALSE(fs::exists(giant));  // a regular file at our name is ours, as any bad entry
}

TEST_CASE("disk cache: huge lengths in a header are a corrupt entry, never an allocation", "[cache][special]") {
  const std::string good = encode_entry("k", sample_entry("add"));
  for (std::size_t field : {16, 24, 32}) {  // key, meta and payload lengths (u64, little-endian)
    for (std::uint64_t len : {~std::uint64_t{0}, std::uint64_t{1} << 62, std::uint64_t{1} << 40}) {
      std::string bytes = good;
      for (int i = 0; i < 8; ++i) bytes[field + i] = static_cast<char>(len >> (8 * i));
      INFO("field at " << field << " = " << len);
      DecodedEntry d;
      REQUIRE_NOTHROW(d = decode_entry(bytes));
      CHECK(d.problem == std::to_string(bytes.size()) + " bytes, not the size its header announces (truncated?)");
    }
  }
  // The same through a file, and through list(), which reads the key and meta a header announces.
  TempDir dir;
  DiskCache cache(dir.path);
  std::string bytes = good;
  bytes[23] = '\x7f';  // key length 2^62 and more
  write_bytes(cache.entry_path("k"), bytes);
  std::vector<DiskCache::Info> infos;
  REQUIRE_NOTHROW(infos = cache.list());
  REQUIRE(infos.size() == 1);
  CHECK(infos[0].problem.find("not the size its header announces") != std::string::npos);
  StderrCapture err;
  CHECK_FALSE(cache.get("k"));
  CHECK(cache.stats().invalid == 1);
}

TEST_CASE("disk cache: list, total_bytes and clear skip what is not a regular entry", "[cache][special]") {
  TempDir d;
  DiskCache cache(d.path);
  cache.put("a", sample_entry("softmax_kernel"));
  const fs::path fifo = cache.entry_path("fifo"), dir = cache.entry_path("dir"), giant = cache.entry_path("giant");
  make_fifo(fifo);
  fs::create_directories(dir);
  make_giant(giant);
  within_seconds(fifo, [&] {
    std::vector<DiskCache::Info> infos = cache.list();
    REQUIRE(infos.size() == 4);
    int skipped = 0;
    for (const auto& i : infos) {
      INFO(i.file << ": " << i.problem);
      if (i.file == fifo.string()) CHECK(i.problem == "not a regular file (a FIFO)");
      if (i.file == dir.string()) CHECK(i.problem == "not a regular file (a directory)");
      if (i.file == giant.string()) CHECK(i.problem == "1073741825 bytes, larger than any entry (1073741824 bytes at most)");
      skipped += i.skipped;
    }
    CHECK(skipped == 3);
    CHECK(cache.total_bytes() == fs::file_size(cache.entry_path("a")));
    std::vector<std::string> left;
    CHECK(cache.clear(&left) == 2);  // the entry and the giant: regular files at our names
    auto has = [&](const std::string& line) { return std::find(left.begin(), left.end(), line) != left.end(); };
    CHECK(left.size() == 2);
    CHECK(has(fifo.string() + ": not a regular file (a FIFO)"));
    CHECK(has(dir.string() + ": not a regular file (a directory)"));
  });
  CHECK(fs::is_fifo(fifo));
  CHECK(fs::is_directory(dir));
  CHECK_FALSE(fs::exists(giant));
}

TEST_CASE("tessera-cache: --dir naming a file is an error, and FIFOs and giants are skipped with a warning", "[cache][tool]") {
  TempDir d;
  const fs::path file = d.path / "not_a_dir";
  write_bytes(file, "x");
  for (const char* cmd : {"list", "size", "clear", "path"}) {
    ToolRun r = run_tool("--dir \"" + file.string() + "\" " + cmd);
    INFO(cmd << ": " << r.output);
    CHECK(r.status == 1);
    CHECK(r.output == "tessera-cache: '" + file.string() + "' is not a directory\n");
  }
  CHECK(fs::exists(file));

  DiskCache cache(d.path / "cache");
  cache.put("a", sample_entry("softmax_kernel"));
  const fs::path fifo = cache.entry_path("fifo"), giant = cache.entry_path("giant");
  make_fifo(fifo);
  make_giant(giant);
  // `timeout`: a tool that blocked on the FIFO would fail here instead of hanging the suite.
  const std::string dir = "timeout 20 \"" + std::string(TESSERA_CACHE_TOOL) + "\" --dir \"" + (d.path / "cache").string() + "\" ";
  auto run = [](const std::string& cmd) {
    FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
    REQUIRE(pipe);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
    int status = pclose(pipe);
    return ToolRun{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  };
  ToolRun r = run("TESSERA_CACHE_DIR=\"" + file.string() + "\" \"" + TESSERA_CACHE_TOOL + "\" size");
  CHECK(r.status == 1);
  CHECK(r.output == "tessera-cache: '" + file.string() + "' is not a directory (the cache folder, from TESSERA_CACHE_DIR or HOME)\n");

  r = run(dir + "list");
  INFO(r.output);
  CHECK(r.status == 0);
  const std::size_t line = r.output.find(fifo.filename().string());
  REQUIRE(line != std::string::npos);
  CHECK(r.output.substr(line, r.output.find('\n', line) - line).find("skipped: not a regular file (a FIFO)") != std::string::npos);
  CHECK(r.output.find("skipped: 1073741825 bytes, larger than any entry") != std::string::npos);
  CHECK(r.output.find("softmax_kernel  sm_90a") != std::string::npos);

  r = run(dir + "size");
  CHECK(r.status == 0);
  CHECK(r.output.find("tessera-cache: warning: skipped " + fifo.string() + ": not a regular file (a FIFO)\n") != std::string::npos);
  CHECK(r.output.find("tessera-cache: warning: skipped " + giant.string() + ": 1073741825 bytes, larger than any entry") !=
        std::string::npos);
  CHECK(r.output.find("1 entries, " + std::to_string(fs::file_size(cache.entry_path("a"))) + " bytes\n") != std::string::npos);

  r = run(dir + "clear");
  CHECK(r.status == 0);
  CHECK(r.output.find("tessera-cache: warning: skipped " + fifo.string() + ": not a regular file (a FIFO)\n") != std::string::npos);
  CHECK(r.output.find("removed 2 files from") != std::string::npos);
  CHECK(fs::is_fifo(fifo));
  CHECK_FALSE(fs::exists(giant));
}
