// What a launch passes for each kernel argument, after the C++ argument has been read.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "tessera/dtype.hpp"

namespace tessera {

// Where the memory behind a pointer argument lives, when the argument says so (a ts::Buffer, a
// DLPack or framework tensor); a raw pointer says nothing (Unknown). An Executor::Auto launch runs
// where its arguments' memory is; an explicit executor that cannot reach it is an error.
enum class MemoryPlace : std::uint8_t { Unknown, Host, Cuda, Hip };

struct ArgValue {
  enum class Kind : std::uint8_t { Pointer, Int, Float } kind = Kind::Int;
  DType dtype = DType::I32;    // the scalar's type, or the pointee for a pointer
  std::int64_t i = 0;          // Int (sign- or zero-extended per dtype)
  double f = 0;                // Float
  void* p = nullptr;           // Pointer
  // Pointer: whether the size of the memory behind it is known (a Buffer, container or tensor), and
  // that size. A sized pointer of 0 bytes (an empty Buffer) is a real size: every access through
  // it is out of bounds. A raw pointer (sized = false) cannot be bound-checked.
  bool sized = false;
  std::size_t bytes = 0;
  // Pointer: where its memory is, and for GPU memory the device ordinal (-1: not said).
  MemoryPlace place = MemoryPlace::Unknown;
  int device = -1;

  // A raw pointer: the caller vouches for the memory behind it.
  static ArgValue pointer(void* ptr, DType pointee) {
    ArgValue a; a.kind = Kind::Pointer; a.dtype = pointee; a.p = ptr; return a;
  }
  // A pointer to `bytes` bytes of memory (possibly 0), checked by the interpreter.
  static ArgValue pointer(void* ptr, DType pointee, std::size_t bytes) {
    ArgValue a = pointer(ptr, pointee); a.sized = true; a.bytes = bytes; return a;
  }
  // A pointer to `bytes` bytes of memory in a known place.
  static ArgValue pointer(void* ptr, DType pointee, std::size_t bytes, MemoryPlace where, int device_ordinal) {
    ArgValue a = pointer(ptr, pointee, bytes); a.place = where; a.device = device_ordinal; return a;
  }
  static ArgValue integer(std::int64_t v, DType d) { ArgValue a; a.kind = Kind::Int; a.dtype = d; a.i = v; return a; }
  static ArgValue floating(double v, DType d) { ArgValue a; a.kind = Kind::Float; a.dtype = d; a.f = v; return a; }
};

using Dim3 = std::array<std::uint32_t, 3>;

}  // namespace tessera
