// Element types, shared by the public API and the IR (ir::DType is this enum).
#pragma once
#include <cstdint>

namespace tessera {
// New types go after Ptr, so that the values of the older ones stay what they were.
enum class DType : std::uint8_t { I1, I8, I16, I32, I64, U8, U32, F16, BF16, F32, F64, Ptr, U16, U64, F8E4M3, F8E5M2 };
}  // namespace tessera
