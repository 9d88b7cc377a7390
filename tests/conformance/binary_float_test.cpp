// Binary operators with a float left operand, against every right operand type (binary_ops.hpp).
#include "binary_ops.hpp"

using namespace conf::binary;

TEST_CASE("conformance: binary ops of f16 with every type", "[conformance][binary]") { run_pairs_with<ts::half>(); }
TEST_CASE("conformance: binary ops of bf16 with every type", "[conformance][binary]") { run_pairs_with<ts::bfloat16>(); }
TEST_CASE("conformance: binary ops of f32 with every type", "[conformance][binary]") { run_pairs_with<float>(); }
TEST_CASE("conformance: binary ops of f64 with every type", "[conformance][binary]") { run_pairs_with<double>(); }
