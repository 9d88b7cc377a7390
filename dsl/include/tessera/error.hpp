// tessera's exceptions. Every error a user can cause is a tessera::Error whose message says what
// is wrong in the user's terms and, for kernel code, names the user's source line.
#pragma once
#include <stdexcept>
#include <string>

#include "tessera/export.hpp"

namespace tessera {

class TESSERA_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel program that cannot be traced or compiled: shape mismatch, bad arange, unknown meta...
class TESSERA_API ProgramError : public Error {
 public:
  using Error::Error;
};

// A launch that cannot be honoured: wrong arguments, bad grid, misaligned pointer, bad num_warps.
class TESSERA_API LaunchError : public Error {
 public:
  using Error::Error;
};

// The GPU driver (libcuda, libamdhip64) failed or is missing; carries the driver's own message.
class TESSERA_API DriverError : public Error {
 public:
  using Error::Error;
};

// The interpreter found the program touching memory it does not own.
class TESSERA_API MemoryAccessError : public Error {
 public:
  using Error::Error;
};

// A bug in tessera itself (a pass produced invalid IR, a lowering met an op it does not know).
class TESSERA_API InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace tessera
