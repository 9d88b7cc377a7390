// The conformance suite's tally, executor choice and closing line (conformance.hpp says what a
// case is). A Catch2 listener prints the line when the run ends, whichever test cases ran.
#define CATCH_CONFIG_EXTERNAL_INTERFACES  // TestEventListenerBase (implemented in catch_main.cpp)
#include "conformance.hpp"

#include <tessera/host.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace conf {

Tally& tally() {
  static Tally t;
  return t;
}

ts::Executor executor() {
  static const ts::Executor ex = [] {
    const char* v = std::getenv("TESSERA_CONFORMANCE_EXECUTOR");
    const std::string s = v ? v : "";
    if (s.empty() || s == "interpreter") return ts::Executor::Interpreter;
    if (s == "cuda") return ts::Executor::Cuda;
    if (s == "hip") return ts::Executor::Hip;
    if (s == "host" || s == "host64") {
      ts::host::enable();
      return s == "host" ? ts::Executor::Host : ts::Executor::Host64;
    }
    throw std::runtime_error("TESSERA_CONFORMANCE_EXECUTOR='" + s + "': use interpreter, cuda, hip, host or host64");
  }();
  return ex;
}

bool on_gpu() { return executor() == ts::Executor::Cuda || executor() == ts::Executor::Hip; }

Case::Case(std::string name, Departure departure) : name_(std::move(name)), departure_(std::move(departure)) {}

Case::~Case() {
  Tally& t = tally();
  t.values += values_;
  if (values_ == 0) {  // a case that compared nothing proves nothing: count it as failed
    ++t.failed;
    t.failed_cases.push_back(name_ + " (compared no values)");
    FAIL_CHECK(name_ << ": compared no values");
    return;
  }
  // One Catch assertion per case, so that Catch's own counts follow the suite's.
  INFO(name_ << ": " << mismatches_ << " of " << values_ << " values differ"
            << (departure_.reason.empty() ? "" : " from tessera's documented departure (" + departure_.reason + ")")
            << mismatch_text_);
  CHECK(mismatches_ == 0);
  if (mismatches_ > 0) {
    ++t.failed;
    t.failed_cases.push_back(name_);
  } else if (departure_.reason.empty()) {
    ++t.passed;
  } else {
    ++t.different;
    t.different_cases.emplace_back(departure_.reason, name_);
  }
}

namespace {
struct ConformanceListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunEnded(const Catch::TestRunStats&) override {
    const Tally& t = tally();
    if (t.passed + t.failed + t.different == 0) return;  // no conformance case ran (a filter)
    std::printf("conformance: %ld passed, %ld failed, %ld deliberately different (%ld values compared)\n", t.passed,
                t.failed, t.different, t.values);
    // The departures, one line each: the reason, how many cases it decides, and those cases.
    std::vector<std::pair<std::string, std::string>> by_reason;  // reason, its cases (run order)
    std::vector<long> counts;
    for (const auto& [reason, name] : t.different_cases) {
      std::size_t i = 0;
      while (i < by_reason.size() && by_reason[i].first != reason) ++i;
      if (i == by_reason.size()) by_reason.emplace_back(reason, ""), counts.push_back(0);
      by_reason[i].second += (counts[i]++ ? "; " : "") + name;
    }
    for (std::size_t i = 0; i < by_reason.size(); ++i)
      std::printf("  deliberately different (%ld): %s: %s\n", counts[i], by_reason[i].first.c_str(),
                  by_reason[i].second.c_str());
    for (const auto& c : t.failed_cases) std::printf("  failed: %s\n", c.c_str());
    std::fflush(stdout);
  }
};
}  // namespace
CATCH_REGISTER_LISTENER(ConformanceListener)

}  // namespace conf
