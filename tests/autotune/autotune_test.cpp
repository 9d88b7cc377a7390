// The autotuner on the interpreter with a scripted timer: which config wins, that the launch
// that follows runs it, key values, pruning, heuristics, reset_to_zero and restore_value.
#include "autotune_test_util.hpp"

using namespace autotune_test;

TEST_CASE("the config with the lowest median wins, and the launch runs it", "[autotune]") {
  TestEnv env;
  auto add = make_add("at_pick");
  auto timer = std::make_shared<FakeTimer>();
  // BLOCK=32 has the lowest single time but not the lowest median: medians are 9, 2, 4.
  timer->script = [](const ts::Config& c) {
    const auto b = c.meta[0].second;
    return b == 32 ? std::vector<double>{0.5, 9, 9} : b == 64 ? std::vector<double>{2, 2, 7}
                                                              : std::vector<double>{4, 4, 4};
  };
  auto tuned = ts::autotune(add, block_configs({32, 64, 128}), {.key = {{3, "n"}}, .timer = timer});
  AddData d(1000);  // not a multiple of any BLOCK: a grid made for another BLOCK would miss elements
  tuned[interp(1000)](d.x, d.y, d.out, 1000);
  CHECK(d.correct());
  CHECK(timer->calls == 3);
  const auto best = tuned[interp(1000)].best_config(d.x, d.y, d.out, 1000);
  REQUIRE(best);
  CHECK(best->str() == "BLOCK=64 num_warps=4");
  const auto report = tuned[interp(1000)].tuning_report(d.x, d.y, d.out, 1000);
  REQUIRE(report);
  CHECK(report->best_ms == 2.0);
  CHECK(report->key_values == std::vector<std::int64_t>{1000});
  CHECK(report->device == "interpreter");
  CHECK_FALSE(report->from_disk);
  REQUIRE(report->results.size() == 3);
  CHECK(report->results[0].ms == 9.0);
  CHECK(report->results[2].ms == 4.0);
  CHECK_THAT(report->str(), Catch::Contains("best [BLOCK=64 num_warps=4]") && Catch::Contains("[BLOCK=32 num_warps=4] 9.0000 ms"));
  // Not tuned for another n yet; the query does not tune.
  CHECK_FALSE(tuned[interp(1000)].best_config(d.x, d.y, d.out, 999));
  CHECK(timer->calls == 3);

  // The type-erased launch takes the same path.
  AddData e(1000);
  tuned.launch(interp(1000), {ts::ArgValue::pointer(e.x.data(), ts::DType::F32), ts::ArgValue::pointer(e.y.data(), ts::DType::F32),
                              ts::ArgValue::pointer(e.out.data(), ts::DType::F32), ts::ArgValue::integer(1000, ts::DType::I32)});
  CHECK(e.correct());
  CHECK(timer->calls == 3);
}

TEST_CASE("key values select separate tunings, the same key values never tune again", "[autotune]") {
  TestEnv env;
  auto add = make_add("at_keys");
  auto timer = std::make_shared<FakeTimer>();
  std::int64_t n_now = 0;
  // Small n favours BLOCK=32, large n BLOCK=128.
  timer->script = [&](const ts::Config& c) {
    const auto b = c.meta[0].second;
    return std::vector<double>{static_cast<double>(n_now < 500 ? b : 1000 - b)};
  };
  auto tuned = ts::autotune(add, block_configs({32, 64, 128}), {.key = {3}, .timer = timer});
  for (std::int64_t n : {100, 100, 900, 100, 900}) {
    n_now = n;
    AddData d(static_cast<std::size_t>(n));
    tuned[interp(n)](d.x, d.y, d.out, static_cast<std::int32_t>(n));
    CHECK(d.correct());
  }
  CHECK(timer->calls == 6);  // three configs for n=100, three for n=900
  AddData d(100);
  CHECK(tuned[interp(100)].best_config(d.x, d.y, d.out, 100)->str() == "BLOCK=32 num_warps=4");
  CHECK(tuned[interp(100)].best_config(d.x, d.y, d.out, 900)->str() == "BLOCK=128 num_warps=4");
}

TEST_CASE("the prune hook gets the key values, and only what it returns is timed", "[autotune]") {
  TestEnv env;
  auto add = make_add("at_prune");
  auto timer = std::make_shared<FakeTimer>();
  std::vector<std::vector<std::int64_t>> seen;
  ts::AutotuneOptions o{.key = {3}, .timer = timer};
  o.prune = [&](const std::vector<ts::Config>& all, std::span<const std::int64_t> key) {
    seen.emplace_back(key.begin(), key.end());
    std::vector<ts::Config> kept;
    for (const auto& c : all)
      if (c.meta[0].second * 4 >= key[0]) kept.push_back(c);  // at most 4 programs
    kept.push_back({.meta = {{"BLOCK", 1024}}, .num_warps = 8});  // one the list does not hold
    return kept;
  };
  auto tuned = ts::autotune(add, block_configs({32, 64, 128, 256}), o);
  AddData d(500);
  tuned[interp(500)](d.x, d.y, d.out, 500);
  CHECK(d.correct());
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<std::int64_t>{500});
  CHECK(timer->timed == std::vector<std::string>{"BLOCK=128 num_warps=4", "BLOCK=256 num_warps=4", "BLOCK=1024 num_warps=8"});

  ts::AutotuneOptions none{.key = {3}, .timer = timer};
  none.prune = [](const std::vector<ts::Config>&, std::span<const std::int64_t>) { return std::vector<ts::Config>{}; };
  auto empty = ts::autotune(add, block_configs({32}), none);
  CHECK_THROWS_AS(empty[interp(500)](d.x, d.y, d.out, 500), ts::AutotuneError);
}

TEST_CASE("heuristics compute meta-parameters from the arguments and the config", "[autotune]") {
  TestEnv env;
  // out = x * SCALE: the output shows the value the heuristic gave.
  auto scale = ts::kernel("at_heuristic", [](ts::Ptr<float> x, ts::Ptr<float> out, ts::Int n) {
    const int block = static_cast<int>(ts::meta("BLOCK"));
    const auto factor = static_cast<float>(ts::meta("SCALE"));
    auto offs = ts::program_id(0) * block + ts::arange(0, block);
    ts::store(out + offs, ts::load(x + offs, offs < n) * factor, offs < n);
  });
  auto timer = std::make_shared<FakeTimer>();
  std::vector<std::int64_t> blocks_seen;
  ts::AutotuneOptions o{.key = {2}, .timer = timer};
  o.heuristics.push_back({"SCALE", [&](std::span<const ts::ArgValue> args, const ts::MetaValues& meta) {
                            blocks_seen.push_back(meta_of(meta, "BLOCK"));
                            return args[2].i / 100;  // n = 300: SCALE = 3
                          }});
  auto tuned = ts::autotune(scale, block_configs({64, 128}), o);
  std::vector<float> hx(300);
  for (std::size_t i = 0; i < hx.size(); ++i) hx[i] = static_cast<float>(i) - 10.0f;
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Interpreter);
  ts::Buffer<float> out(300, ts::Executor::Interpreter);
  tuned[interp(300)](x, out, 300);
  const auto got = out.to_host();
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == hx[i] * 3.0f);
  CHECK(timer->calls == 2);
  // Each config while tuning, then the winner's launch.
  CHECK(std::count(blocks_seen.begin(), blocks_seen.end(), 64) >= 1);
  CHECK(std::count(blocks_seen.begin(), blocks_seen.end(), 128) >= 1);
}


TEST_CASE("reset_to_zero: an accumulating kernel's output holds one run after tuning", "[autotune]") {
  TestEnv env;
  auto acc = make_accumulate("at_reset");
  const auto hx = ramp(200);
  auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Interpreter);
  for (bool reset : {true, false}) {
    auto timer = std::make_shared<FakeTimer>();
    // Not persisted: the second round must tune again, not read the first round's winner.
    ts::AutotuneOptions o{.key = {2}, .timer = timer, .persist = false};
    if (reset) o.reset_to_zero = {1};
    auto tuned = ts::autotune(acc, block_configs({32, 64, 128}), o);
    auto out = ts::Buffer<float>::from_host(std::vector<float>(200, 7.0f), ts::Executor::Interpreter);
    tuned[interp(200)](x, out, 200);
    const auto got = out.to_host();
    bool one_run = true;
    for (std::size_t i = 0; i < got.size(); ++i) one_run = one_run && got[i] == hx[i];
    CHECK(timer->calls == 3);
    CHECK(one_run == reset);  // without reset_to_zero: 7 plus seven runs' worth
    if (!reset) continue;
    tuned[interp(200)](x, out, 200);  // tuned already: accumulates, as the kernel says
    const auto twice = out.to_host();
    for (std::size_t i = 0; i < twice.size(); ++i) REQUIRE(twice[i] == 2 * hx[i]);
  }
}

TEST_CASE("restore_value: an in-place kernel's input is restored after every timing run", "[autotune]") {
  TestEnv env;
  auto inc = make_in_place("at_restore");
  const auto hx = ramp(150);
  for (bool restore : {true, false}) {
    auto timer = std::make_shared<FakeTimer>();
    // Not persisted: the second round must tune again, not read the first round's winner.
    ts::AutotuneOptions o{.key = {1}, .timer = timer, .persist = false};
    if (restore) o.restore_value = {0};
    auto tuned = ts::autotune(inc, block_configs({32, 64}), o);
    auto x = ts::Buffer<float>::from_host(hx, ts::Executor::Interpreter);
    tuned[interp(150)](x, 150);
    const auto got = x.to_host();
    bool once = true;
    for (std::size_t i = 0; i < got.size(); ++i) once = once && got[i] == hx[i] * 2.0f + 1.0f;
    CHECK(timer->calls == 2);
    CHECK(once == restore);
  }
}

TEST_CASE("a real timer on the interpreter tunes end to end", "[autotune]") {
  TestEnv env;
  auto add = make_add("at_wall_clock");
  auto tuned = ts::autotune(add, block_configs({64, 128}), {.key = {3}, .warmup_ms = 0, .rep_ms = 1});
  AddData d(300);
  tuned[interp(300)](d.x, d.y, d.out, 300);
  CHECK(d.correct());
  const auto report = tuned[interp(300)].tuning_report(d.x, d.y, d.out, 300);
  REQUIRE(report);
  for (const auto& r : report->results) CHECK(r.ms > 0);
  CHECK(report->best_ms == std::min(report->results[0].ms, report->results[1].ms));
}
