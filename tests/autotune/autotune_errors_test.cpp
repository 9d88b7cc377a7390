// The autotuner's failures, persistence, progress line and parallel compile, on the interpreter.
#include "autotune_test_util.hpp"

using namespace autotune_test;

namespace {
using launch_test::error_of;

// num_warps 3 fails launch validation; BLOCK 4096 is refused by the kernel itself.
std::vector<ts::Config> configs_with_failures() {
  return {{.meta = {{"BLOCK", 64}}, .num_warps = 3},
          {.meta = {{"BLOCK", 64}}, .num_warps = 4},
          {.meta = {{"BLOCK", 4096}}, .num_warps = 4},
          {.meta = {{"BLOCK", 128}}, .num_warps = 2}};
}
}  // namespace

TEST_CASE("a config that fails to compile is skipped, with its reason in the report", "[autotune][errors]") {
  TestEnv env;
  auto add = make_add("at_skip");
  auto timer = std::make_shared<FakeTimer>();
  timer->script = [](const ts::Config& c) { return std::vector<double>{c.num_warps == 2 ? 1.0 : 2.0}; };
  auto tuned = ts::autotune(add, configs_with_failures(), {.key = {3}, .timer = timer});
  AddData d(500);
  tuned[interp(500)](d.x, d.y, d.out, 500);
  CHECK(d.correct());
  CHECK(timer->timed == std::vector<std::string>{"BLOCK=64 num_warps=4", "BLOCK=128 num_warps=2"});
  const auto r = tuned[interp(500)].tuning_report(d.x, d.y, d.out, 500);
  REQUIRE(r);
  CHECK(r->best.str() == "BLOCK=128 num_warps=2");
  CHECK_THAT(r->results[0].error, Catch::Contains("num_warps"));
  CHECK(r->results[1].error.empty());
  CHECK_THAT(r->results[2].error, Catch::Contains("BLOCK 4096 is too large"));
  CHECK_THAT(r->str(), Catch::Contains("[BLOCK=64 num_warps=3] skipped:"));
}

TEST_CASE("every config failing is an AutotuneError that lists each config and why", "[autotune][errors]") {
  TestEnv env;
  auto add = make_add("at_all_fail");
  auto timer = std::make_shared<FakeTimer>();
  // The two configs that compile fail while being timed (as launches out of resources would).
  timer->on_measure = [](const ts::Config&) { throw ts::DriverError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (scripted)"); };
  auto tuned = ts::autotune(add, configs_with_failures(), {.key = {{3, "n"}}, .timer = timer});
  AddData d(500);
  const std::string msg = error_of<ts::AutotuneError>([&] { tuned[interp(500)](d.x, d.y, d.out, 500); });
  CHECK_THAT(msg, Catch::Contains("autotune of kernel 'at_all_fail' (n=500): every config failed (4 of them)"));
  CHECK_THAT(msg, Catch::Contains("[BLOCK=64 num_warps=3]: num_warps of kernel 'at_all_fail' must be a power of two"));
  CHECK_THAT(msg, Catch::Contains("[BLOCK=64 num_warps=4]: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (scripted)"));
  CHECK_THAT(msg, Catch::Contains("[BLOCK=4096 num_warps=4]:") && Catch::Contains("BLOCK 4096 is too large"));
  CHECK_THAT(msg, Catch::Contains("[BLOCK=128 num_warps=2]: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (scripted)"));
  CHECK(timer->calls == 2);
  // A ts::Error like every other user-visible failure; nothing was remembered, so it says so again.
  CHECK_THROWS_AS(tuned[interp(500)](d.x, d.y, d.out, 500), ts::Error);
}

TEST_CASE("a second autotuner with the same cache folder reads the winner and times nothing", "[autotune][disk]") {
  TestEnv env;
  auto add = make_add("at_persist");
  auto first = std::make_shared<FakeTimer>();
  first->script = [](const ts::Config& c) { return std::vector<double>{c.meta[0].second == 64 ? 1.0 : 5.0}; };
  AddData d(700);
  ts::autotune(add, block_configs({32, 64, 128}), {.key = {3}, .timer = first})[interp(700)](d.x, d.y, d.out, 700);
  CHECK(first->calls == 3);

  // As a second process: a fresh kernel object and autotuner (empty memory), the same folder.
  static TraceLog log;
  auto again = make_add<&log>("at_persist");
  auto second = std::make_shared<FakeTimer>();
  second->script = [](const ts::Config& c) { return std::vector<double>{c.meta[0].second == 128 ? 1.0 : 5.0}; };
  auto tuned = ts::autotune(again, block_configs({32, 64, 128}), {.key = {3}, .timer = second});
  AddData e(700);
  tuned[interp(700)](e.x, e.y, e.out, 700);
  CHECK(e.correct());
  CHECK(second->calls == 0);
  CHECK(log.traces == 2);  // the body's fingerprint (part of the disk key), then the winner's compile
  const auto r = tuned[interp(700)].tuning_report(e.x, e.y, e.out, 700);
  REQUIRE(r);
  CHECK(r->from_disk);
  CHECK(r->best.str() == "BLOCK=64 num_warps=4");
  CHECK(r->best_ms == 1.0);

  // Another config list is another tuning; so is another folder.
  auto other = ts::autotune(again, block_configs({32, 64, 128, 256}), {.key = {3}, .timer = second});
  other[interp(700)](e.x, e.y, e.out, 700);
  CHECK(second->calls == 4);
  CHECK(other[interp(700)].best_config(e.x, e.y, e.out, 700)->str() == "BLOCK=128 num_warps=4");
  TestEnv elsewhere;
  ts::autotune(again, block_configs({32, 64, 128}), {.key = {3}, .timer = second})[interp(700)](e.x, e.y, e.out, 700);
  CHECK(second->calls == 7);
}

TEST_CASE("a winner tuned in debug mode reads back from the disk in debug mode", "[autotune][disk]") {
  TestEnv env;
  auto configs = block_configs({32, 64});
  for (auto& c : configs) c.compile.debug = true;
  auto timer = std::make_shared<FakeTimer>();
  timer->script = [](const ts::Config& c) { return std::vector<double>{c.meta[0].second == 64 ? 1.0 : 5.0}; };
  AddData d(700);
  ts::autotune(make_add("at_persist_debug"), configs, {.key = {3}, .timer = timer})[interp(700)](d.x, d.y, d.out, 700);
  CHECK(timer->calls == 2);
  auto tuned = ts::autotune(make_add("at_persist_debug"), configs, {.key = {3}, .timer = timer});
  tuned[interp(700)](d.x, d.y, d.out, 700);
  CHECK(timer->calls == 2);
  const auto r = tuned[interp(700)].tuning_report(d.x, d.y, d.out, 700);
  REQUIRE(r);
  CHECK(r->from_disk);
  CHECK(r->best.str() == "BLOCK=64 num_warps=4 debug");
  CHECK(r->best.compile.debug);
}

TEST_CASE("TESSERA_CACHE=0 or persist = false keeps tunings out of the disk cache", "[autotune][disk]") {
  TestEnv env;
  auto add = make_add("at_no_disk");
  AddData d(300);
  auto timer = std::make_shared<FakeTimer>();
  {
    ScopedEnv off("TESSERA_CACHE", "0");
    ts::autotune(add, block_configs({32, 64}), {.key = {3}, .timer = timer})[interp(300)](d.x, d.y, d.out, 300);
  }
  ts::autotune(add, block_configs({32, 64}), {.key = {3}, .timer = timer, .persist = false})[interp(300)](d.x, d.y, d.out, 300);
  ts::autotune(add, block_configs({32, 64}), {.key = {3}, .timer = timer})[interp(300)](d.x, d.y, d.out, 300);
  CHECK(timer->calls == 6);  // nothing was on disk for any of the three
}

TEST_CASE("a progress line on stderr while tuning, none with TESSERA_QUIET=1", "[autotune][progress]") {
  TestEnv env;
  auto add = make_add("at_progress");
  AddData d(400);
  auto timer = std::make_shared<FakeTimer>();
  timer->script = [](const ts::Config& c) { return std::vector<double>{c.meta[0].second == 64 ? 0.031 : 0.05}; };
  auto configs = block_configs({32, 64, 128});
  configs.push_back({.meta = {{"BLOCK", 64}}, .num_warps = 3});
  {
    ScopedEnv loud("TESSERA_QUIET", std::nullopt);
    const auto text = capture_stderr([&] {
      ts::autotune(add, configs, {.key = {{3, "n"}}, .timer = timer})[interp(400)](d.x, d.y, d.out, 400);
    });
    CHECK_THAT(text, Catch::Contains("tessera: autotuning 'at_progress' (n=400): skipping [BLOCK=64 num_warps=3]: num_warps"));
    CHECK_THAT(text, Catch::Contains("\rtessera: autotuning 'at_progress' (n=400): 2/4 configs, best 0.05 ms [BLOCK=32 num_warps=4]"));
    CHECK_THAT(text, Catch::Contains("\rtessera: autotuning 'at_progress' (n=400): 4/4 configs, best 0.031 ms [BLOCK=64 num_warps=4]"));
    CHECK(text.back() == '\n');
  }
  const auto quiet = capture_stderr([&] {
    ts::autotune(add, configs, {.key = {{3, "n"}}, .timer = timer})[interp(399)](d.x, d.y, d.out, 399);
  });
  CHECK(quiet.empty());
  CHECK(timer->calls == 6);
}

TEST_CASE("a kernel of the same name with an edited body tunes again", "[autotune][disk]") {
  TestEnv env;
  auto timer = std::make_shared<FakeTimer>();
  AddData d(300);
  auto add = make_add("at_edited");
  ts::autotune(add, block_configs({32, 64}), {.key = {3}, .timer = timer})[interp(300)](d.x, d.y, d.out, 300);
  CHECK(timer->calls == 2);
  // The same name, key, configs and folder, but out = x - y: the persisted winner is not reused.
  auto sub = ts::kernel("at_edited", [](ts::Ptr<float> x, ts::Ptr<float> y, ts::Ptr<float> out, ts::Int n) {
    const int block = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    auto mask = offs < n;
    ts::store(out + offs, ts::load(x + offs, mask) - ts::load(y + offs, mask), mask);
  });
  ts::autotune(sub, block_configs({32, 64}), {.key = {3}, .timer = timer})[interp(300)](d.x, d.y, d.out, 300);
  CHECK(timer->calls == 4);
  // While the unchanged body, as a fresh object, reads the winner.
  ts::autotune(make_add("at_edited"), block_configs({32, 64}), {.key = {3}, .timer = timer})[interp(300)](d.x, d.y, d.out, 300);
  CHECK(timer->calls == 4);
  CHECK(d.correct());
}

TEST_CASE("every config is compiled, on worker threads, before any is timed", "[autotune][parallel]") {
  TestEnv env;
  static TraceLog log;
  auto add = make_add<&log>("at_parallel");
  auto timer = std::make_shared<FakeTimer>();
  std::vector<int> traces_at_timing;
  timer->on_measure = [&](const ts::Config&) { traces_at_timing.push_back(log.traces.load()); };
  auto tuned = ts::autotune(add, block_configs({16, 32, 64, 128, 256, 512, 1024, 2048}), {.key = {3}, .timer = timer});
  AddData d(600);
  tuned[interp(600)](d.x, d.y, d.out, 600);
  CHECK(d.correct());
  // Seven compile (BLOCK 2048 is refused) and all seven had been traced before the first timing,
  // after one trace on this thread for the body's fingerprint (part of the disk key).
  REQUIRE(traces_at_timing.size() == 7);
  CHECK(traces_at_timing.front() == 1 + 7);
  std::lock_guard<std::mutex> lock(log.mutex);
  REQUIRE(log.threads.size() >= 8);
  CHECK(log.threads[0] == std::this_thread::get_id());
  for (std::size_t i = 1; i < 8; ++i) CHECK(log.threads[i] != std::this_thread::get_id());
}

TEST_CASE("autotune rejects keys and argument lists that name the wrong arguments", "[autotune][errors]") {
  TestEnv env;
  auto add = make_add("at_validate");
  const auto c = block_configs({64});
  CHECK_THAT(error_of<ts::LaunchError>([&] { ts::autotune(add, c, {.key = {0}}); }),
             Catch::Contains("key names argument 0, a pointer argument; a key names integer arguments"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { ts::autotune(add, c, {.key = {4}}); }),
             Catch::Contains("key names argument 4, but the kernel has 4 arguments"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { ts::autotune(add, c, {.reset_to_zero = {3}}); }),
             Catch::Contains("reset_to_zero names argument 3, which is not a pointer argument"));
  CHECK_THAT(error_of<ts::LaunchError>([&] { ts::autotune(add, {}, {}); }), Catch::Contains("the config list is empty"));
  // A raw pointer has no size: reset_to_zero needs arg_bytes for it.
  auto tuned = ts::autotune(add, block_configs({32, 64}), {.key = {3}, .reset_to_zero = {2}, .timer = std::make_shared<FakeTimer>()});
  AddData d(100);
  CHECK_THAT(error_of<ts::LaunchError>([&] { tuned[interp(100)](d.x, d.y, d.out.data(), 100); }),
             Catch::Contains("a pointer of unknown size"));
  CHECK_THAT(error_of<ts::AutotuneError>([&] {
               ts::autotune(add, c, {.key = {3}})[{.grid = {1}, .meta = {{"BLOCK", 64}}, .executor = ts::Executor::Interpreter}](
                   d.x, d.y, d.out, 100);
             }),
             Catch::Contains("meta-parameter BLOCK is set by the launch and by the config"));
}
