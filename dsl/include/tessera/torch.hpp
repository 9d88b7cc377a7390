// PyTorch tensors as launch arguments: an at::Tensor passes for a ts::Ptr<T> parameter, checked
// at launch like a DLPack tensor (tessera/dlpack.hpp): its dtype against T, its place (CPU memory:
// the interpreter or a host target; CUDA memory: that GPU, by its device index) against the
// executor, its storage offset applied, its extent (sizes and strides) the bound the interpreter
// checks accesses against. ts::tensor_args<R>(t) passes a tensor's sizes and strides too.
//
//   at::Tensor x = ..., out = at::empty_like(x);
//   k[ts::torch::options_for(x, {.grid = {...}, .meta = {...}})](x, out, x.numel());
//
// options_for() sets the launch's device to the tensor's and, where PyTorch was built with CUDA,
// its stream to PyTorch's current stream on that device, so that the kernel is ordered with the
// framework's own work. Include it where ATen's headers are (libtorch); tessera itself does not
// link PyTorch.
#pragma once
#include <ATen/ATen.h>

#if __has_include(<c10/cuda/CUDAStream.h>) && defined(TESSERA_TORCH_CUDA)
#include <c10/cuda/CUDAStream.h>
#define TESSERA_TORCH_HAS_CUDA_STREAMS 1
#endif

#include <string>

#include "tessera/detail/launch_args.hpp"
#include "tessera/launch.hpp"

namespace tessera::detail {

// The tessera element type of a PyTorch dtype, or a LaunchError naming the argument.
inline DType torch_dtype(at::ScalarType t, std::size_t index) {
  switch (t) {
    case at::ScalarType::Float: return DType::F32;
    case at::ScalarType::Double: return DType::F64;
    case at::ScalarType::Half: return DType::F16;
    case at::ScalarType::BFloat16: return DType::BF16;
    case at::ScalarType::Char: return DType::I8;
    case at::ScalarType::Short: return DType::I16;
    case at::ScalarType::Int: return DType::I32;
    case at::ScalarType::Long: return DType::I64;
    case at::ScalarType::Byte: return DType::U8;
    case at::ScalarType::Bool: return DType::I1;
#ifdef AT_FORALL_FLOAT8_TYPES  // PyTorch 2.1 and later have the fp8 dtypes
    case at::ScalarType::Float8_e4m3fn: return DType::F8E4M3;
    case at::ScalarType::Float8_e5m2: return DType::F8E5M2;
#endif
    default: break;
  }
  throw LaunchError(argument_label(index) + " is a tensor of dtype " + std::string(c10::toString(t)) +
                    ", which tessera has no element type for");
}

template <>
struct TensorArgument<at::Tensor> {
  static TensorDescription describe(const at::Tensor& t, std::size_t index) {
    if (!t.defined()) throw LaunchError(argument_label(index) + " is an undefined at::Tensor");
    TensorDescription d;
    d.dtype = torch_dtype(t.scalar_type(), index);
    const c10::Device device = t.device();
    if (device.is_cpu()) {
      d.place = MemoryPlace::Host;
    } else if (device.is_cuda()) {
      d.place = MemoryPlace::Cuda;
      d.device = device.has_index() ? device.index() : -1;
    } else {
      throw LaunchError(argument_label(index) + " is a tensor on device " + device.str() +
                        ", which tessera cannot run on (it takes cpu and cuda tensors)");
    }
    d.data = t.data_ptr();
    d.rank = static_cast<int>(t.dim());
    d.shape = t.sizes().data();
    d.strides = t.strides().data();
    const std::size_t elements = tensor_extent(index, d.rank, d.shape, d.strides);
    d.bytes = elements * t.element_size();
    return d;
  }
};

}  // namespace tessera::detail

namespace tessera::torch {

// `base` with the device of `t` and, for a CUDA tensor where PyTorch has CUDA, PyTorch's current
// stream on that device (unless `base` names a stream).
inline LaunchOptions options_for(const at::Tensor& t, LaunchOptions base) {
  if (t.device().is_cuda()) {
    base.device = t.device().index();
#ifdef TESSERA_TORCH_HAS_CUDA_STREAMS
    if (base.stream == nullptr) base.stream = c10::cuda::getCurrentCUDAStream(t.device().index()).stream();
#endif
  }
  return base;
}

}  // namespace tessera::torch
