// DLPack tensors as launch arguments: a DLTensor or DLManagedTensor (by pointer or reference)
// passes for a ts::Ptr<T> parameter, checked at launch: its dtype against T, its memory (host,
// CUDA or ROCm, with the device ordinal) against the executor, its byte_offset applied, its extent
// the bound the interpreter and host targets check accesses against. An Executor::Auto launch runs
// where the tensors are (host tensors on the interpreter, GPU tensors on the GPU); a mix is an error.
//
//   DLManagedTensor* x = ...;                        // from any framework's to_dlpack
//   k[{.grid = {n / 1024}, .meta = {{"BLOCK", 1024}}}](x, out, n);
//   k2[opts](ts::tensor_args<2>(x), out);            // x, then its 2 sizes and 2 strides
//
// A managed tensor is borrowed for the launch: tessera never calls its deleter. The header is
// Debian's libdlpack-dev (DLPack 0.6); DLManagedTensorVersioned (DLPack 1.0) is not in it.
#pragma once
#include <dlpack/dlpack.h>

#include <string>

#include "tessera/detail/launch_args.hpp"

namespace tessera::detail {

// The tessera element type of a DLPack dtype, or a LaunchError naming the argument.
inline DType dlpack_dtype(const DLDataType& t, std::size_t index) {
  auto refuse = [&](const std::string& why) -> DType {
    throw LaunchError(argument_label(index) + " is a DLPack tensor of dtype (code " +
                      std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits, " + std::to_string(t.lanes) +
                      " lanes): " + why);
  };
  if (t.lanes != 1) return refuse("vector lanes are not supported; pass a tensor of scalars");
  constexpr std::uint8_t dlpack_bool = 6;  // kDLBool, DLPack >= 0.8
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 16) return DType::F16;
      if (t.bits == 32) return DType::F32;
      if (t.bits == 64) return DType::F64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::BF16;
      break;
    case kDLInt:
      if (t.bits == 8) return DType::I8;
      if (t.bits == 16) return DType::I16;
      if (t.bits == 32) return DType::I32;
      if (t.bits == 64) return DType::I64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::U8;
      if (t.bits == 16) return DType::U16;
      if (t.bits == 32) return DType::U32;
      if (t.bits == 64) return DType::U64;
      break;
    case dlpack_bool:
      if (t.bits == 8) return DType::I1;
      break;
    default: break;
  }
  return refuse("tessera has no element type for it");
}

// Where a DLPack device's memory is, or a LaunchError naming the argument.
inline MemoryPlace dlpack_place(const DLDevice& d, std::size_t index) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:   // pinned host memory: the CPU reads it directly
    case kDLROCMHost: return MemoryPlace::Host;
    case kDLCUDA: return MemoryPlace::Cuda;
    case kDLROCM: return MemoryPlace::Hip;
    default: break;
  }
  throw LaunchError(argument_label(index) + " is a DLPack tensor on device type " +
                    std::to_string(static_cast<int>(d.device_type)) +
                    ", which tessera cannot run on (it takes kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCM, kDLROCMHost)");
}

inline TensorDescription describe_dlpack(const DLTensor* t, std::size_t index) {
  if (t == nullptr) throw LaunchError(argument_label(index) + " is a null DLTensor pointer");
  if (t->ndim < 0 || (t->ndim > 0 && t->shape == nullptr))
    throw LaunchError(argument_label(index) + " is a DLPack tensor without a valid shape");
  TensorDescription d;
  d.dtype = dlpack_dtype(t->dtype, index);
  d.place = dlpack_place(t->device, index);
  d.device = d.place == MemoryPlace::Cuda || d.place == MemoryPlace::Hip ? t->device.device_id : -1;
  d.data = static_cast<char*>(t->data) + t->byte_offset;
  d.rank = t->ndim;
  d.shape = t->shape;
  d.strides = t->strides;
  const std::size_t elements = tensor_extent(index, t->ndim, t->shape, t->strides);
  const std::size_t element_bytes = t->dtype.bits / 8;
  if (__builtin_mul_overflow(elements, element_bytes, &d.bytes))
    throw LaunchError(argument_label(index) + " is a DLPack tensor too large to address");
  return d;
}

template <>
struct TensorArgument<DLTensor> {
  static TensorDescription describe(const DLTensor& t, std::size_t index) { return describe_dlpack(&t, index); }
};
template <>
struct TensorArgument<DLTensor*> {
  static TensorDescription describe(const DLTensor* t, std::size_t index) { return describe_dlpack(t, index); }
};
template <>
struct TensorArgument<const DLTensor*> : TensorArgument<DLTensor*> {};
template <>
struct TensorArgument<DLManagedTensor> {
  static TensorDescription describe(const DLManagedTensor& t, std::size_t index) {
    return describe_dlpack(&t.dl_tensor, index);
  }
};
template <>
struct TensorArgument<DLManagedTensor*> {
  static TensorDescription describe(const DLManagedTensor* t, std::size_t index) {
    if (t == nullptr) throw LaunchError(argument_label(index) + " is a null DLManagedTensor pointer");
    return describe_dlpack(&t->dl_tensor, index);
  }
};
template <>
struct TensorArgument<const DLManagedTensor*> : TensorArgument<DLManagedTensor*> {};

}  // namespace tessera::detail
