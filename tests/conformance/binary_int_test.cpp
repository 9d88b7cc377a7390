// Binary operators with an integer left operand, against every right operand type (binary_ops.hpp).
#include "binary_ops.hpp"

using namespace conf::binary;

TEST_CASE("conformance: binary ops of i8 with every type", "[conformance][binary]") { run_pairs_with<std::int8_t>(); }
TEST_CASE("conformance: binary ops of i16 with every type", "[conformance][binary]") { run_pairs_with<std::int16_t>(); }
TEST_CASE("conformance: binary ops of i32 with every type", "[conformance][binary]") { run_pairs_with<std::int32_t>(); }
TEST_CASE("conformance: binary ops of i64 with every type", "[conformance][binary]") { run_pairs_with<std::int64_t>(); }
TEST_CASE("conformance: binary ops of u8 with every type", "[conformance][binary]") { run_pairs_with<std::uint8_t>(); }
TEST_CASE("conformance: binary ops of u32 with every type", "[conformance][binary]") { run_pairs_with<std::uint32_t>(); }
