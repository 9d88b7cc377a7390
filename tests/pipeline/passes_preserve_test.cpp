// Every pass preserves the meaning of every example kernel: the module is interpreted before and
// after the pass on the same random inputs (poisoned outputs, buffer sizes known so that every
// access is bounds-checked), and all memory must come out byte for byte the same.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "dsl/src/tracer.hpp"
#include "examples_util.hpp"
#include "jit/interp/interpreter.hpp"
#include "jit/ir/printer.hpp"
#include "jit/ir/verifier.hpp"
#include "jit/runtime/compile.hpp"
#include "jit/transforms/assign_layouts.hpp"
#include "jit/transforms/passes.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

// Runs `m` on the case's memory and returns the memory afterwards; the case's memory is restored,
// so that the next run sees the same inputs and the same poison.
std::vector<std::vector<std::byte>> run_on(const ir::Module& m, HostCase& c) {
  const auto saved = c.memory;
  interp::run(m, c.grid(), c.args);
  auto after = c.memory;
  for (std::size_t i = 0; i < saved.size(); ++i) std::memcpy(c.memory[i].data(), saved[i].data(), saved[i].size());
  return after;
}

// A named transformation of a module: each pass of the registry, and assign_layouts per warp size.
struct Transform {
  std::string name;
  std::function<void(ir::Module&)> run;
};

std::vector<Transform> all_transforms() {
  std::vector<Transform> ts;
  for (const std::string& name : transforms::pass_names())
    ts.push_back({name, [name](ir::Module& m) { transforms::run_pass_pipeline(m, std::vector<std::string>{name}); }});
  for (int warp : {32, 64})
    ts.push_back({"assign_layouts(warp " + std::to_string(warp) + ")", [warp](ir::Module& m) {
                    transforms::assign_layouts(m, {.warp_size = warp});
                    ir::verify(m);
                  }});
  return ts;
}

// The modules a pass may meet: straight from the tracer, and after the default pipeline (what
// assign_layouts meets in the compiler).
std::vector<std::pair<std::string, std::unique_ptr<ir::Module>>> inputs_of(const HostCase& c,
                                                                           const std::vector<ir::ArgFacts>& facts) {
  std::vector<std::pair<std::string, std::unique_ptr<ir::Module>>> out;
  auto traced = trace_kernel(*c.def, c.opts.meta, facts, c.opts.num_warps);
  traced->num_stages = c.opts.num_stages;  // what the pipeline pass reads
  ir::verify(*traced);
  auto optimized = traced->clone();
  transforms::run_pass_pipeline(*optimized, transforms::default_pipeline());
  out.emplace_back("traced", std::move(traced));
  out.emplace_back("optimized", std::move(optimized));
  return out;
}

void check_preserved(HostCase& c, const std::vector<ir::ArgFacts>& facts, const char* facts_name) {
  for (auto& [stage, before] : inputs_of(c, facts)) {
    const auto want = run_on(*before, c);
    for (const Transform& t : all_transforms()) {
      INFO(c.label << ", " << facts_name << " facts, " << stage << " module, transform " << t.name << ", seed "
                   << kExamplesSeed);
      auto after = before->clone();
      t.run(*after);
      const auto got = run_on(*after, c);
      REQUIRE(got.size() == want.size());
      for (std::size_t b = 0; b < want.size(); ++b) {
        INFO("buffer of argument " << b << "\nbefore:\n" << ir::print(*before) << "\nafter:\n" << ir::print(*after));
        REQUIRE(got[b] == want[b]);
      }
    }
  }
}

}  // namespace

TEST_CASE("every pass and assign_layouts preserve every example kernel", "[pipeline][passes][examples]") {
  std::mt19937 rng(kExamplesSeed);
  for (HostCase& c : small_cases(rng)) {
    // The facts this launch would specialize on (divisibility by 16, == 1), and none at all.
    check_preserved(c, runtime::specialization_facts(*c.def, c.args), "launch");
    check_preserved(c, std::vector<ir::ArgFacts>(c.args.size()), "default");
  }
}

TEST_CASE("the example kernels write their outputs when interpreted straight from the tracer",
          "[pipeline][passes][examples]") {
  // Guards the test above against comparing two runs that both did nothing: the poison must be gone
  // from the in-bounds part of every output.
  std::mt19937 rng(kExamplesSeed);
  HostCase add = vector_add_case(1000, rng);
  auto m = trace_kernel(*add.def, add.opts.meta, runtime::specialization_facts(*add.def, add.args), add.opts.num_warps);
  const auto mem = run_on(*m, add);
  const auto out = std::span<const float>(reinterpret_cast<const float*>(mem[2].data()), 1000);
  const auto x = typed<float>(add.memory[0]), y = typed<float>(add.memory[1]);
  for (std::size_t i = 0; i < out.size(); ++i) REQUIRE(out[i] == x[i] + y[i]);
}
