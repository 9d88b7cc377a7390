// The line a user sees while a first call tunes (it can take a second or more):
//   tessera: autotuning 'softmax' (n=4096): 5/8 configs, best 0.031 ms [BLOCK=1024 num_warps=8]
// rewritten in place with '\r', ended with a newline; a skipped config gets a note line of its own.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "autotune/autotune_internal.hpp"
#include "jit/runtime/env_flag.hpp"

namespace tessera::tuning {

Progress::Progress(std::string kernel, std::string key, std::size_t total) : total_(total) {
  quiet_ = runtime::env_flag("TESSERA_QUIET", false);
  head_ = key.empty() ? fmt::format("tessera: autotuning '{}'", kernel)
                      : fmt::format("tessera: autotuning '{}' ({})", kernel, key);
}

void Progress::note_skipped(const Config& c, const std::string& why) {
  if (quiet_) return;
  // After the progress line, if one is open, so that the note does not overwrite it.
  std::fprintf(stderr, "%s%s: skipping [%s]: %s\n", open_ ? "\n" : "", head_.c_str(), c.str().c_str(),
               first_line(why).c_str());
  std::fflush(stderr);
  open_ = false;
}

void Progress::update(std::size_t done, const ConfigResult* best) {
  if (quiet_) return;
  const std::string best_text =
      best ? fmt::format("best {:.4g} ms [{}]", best->ms, best->config.str()) : std::string("no config timed yet");
  // Padding clears what a longer earlier line left behind.
  std::fprintf(stderr, "\r%s: %zu/%zu configs, %-60s", head_.c_str(), done, total_, best_text.c_str());
  std::fflush(stderr);
  open_ = true;
}

void Progress::finish() {
  if (quiet_ || !open_) return;
  std::fputc('\n', stderr);
  std::fflush(stderr);
  open_ = false;
}

}  // namespace tessera::tuning
