// Compiling every config before timing any, on a pool of std::threads: compiles are independent
// (kernel.warmup is thread-safe per config), so eight configs cost about one compile on eight
// cores rather than eight in a row. One config's failure is that config's, never the pool's.
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "autotune/autotune_internal.hpp"

namespace tessera::tuning {

std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

std::vector<std::string> run_parallel(std::size_t count, const std::function<void(std::size_t)>& compile) {
  std::vector<std::string> errors(count);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        compile(i);
      } catch (...) {
        errors[i] = current_exception_text();
      }
    }
  };
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t n = std::min(count, hw);
  std::vector<std::thread> pool;
  pool.reserve(n);
  try {
    for (std::size_t t = 0; t < n; ++t) pool.emplace_back(worker);
  } catch (...) {
    // No thread could be started (a process at its thread limit): the caller's thread does the
    // rest, after the workers that did start.
  }
  if (pool.empty()) worker();
  for (auto& t : pool) t.join();
  return errors;
}

}  // namespace tessera::tuning
