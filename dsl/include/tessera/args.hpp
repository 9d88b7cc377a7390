// What a launch passes for each kernel argument, after the C++ argument has been read.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "tessera/dtype.hpp"

namespace tessera {

struct ArgValue {
  enum class Kind : std::uint8_t { Pointer, Int, Float } kind = Kind::Int;
  DType dtype = DType::I32;    // the scalar's type, or the pointee for a pointer
  std::int64_t i = 0;          // Int (sign- or zero-extended per dtype)
  double f = 0;                // Float
  void* p = nullptr;           // Pointer
  std::size_t bytes = 0;       // Pointer: size of the buffer when known (tensor-like args), else 0

  static ArgValue pointer(void* ptr, DType pointee, std::size_t bytes = 0) {
    ArgValue a; a.kind = Kind::Pointer; a.dtype = pointee; a.p = ptr; a.bytes = bytes; return a;
  }
  static ArgValue integer(std::int64_t v, DType d) { ArgValue a; a.kind = Kind::Int; a.dtype = d; a.i = v; return a; }
  static ArgValue floating(double v, DType d) { ArgValue a; a.kind = Kind::Float; a.dtype = d; a.f = v; return a; }
};

using Dim3 = std::array<std::uint32_t, 3>;

}  // namespace tessera
