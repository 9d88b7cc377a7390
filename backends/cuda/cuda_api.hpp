// The few CUDA driver API types, constants and entry-point signatures that tessera calls,
// declared here so that neither cuda.h nor libcuda is needed to build tessera: libcuda is opened
// with dlopen at run time (backends/cuda/cuda_driver.hpp). Values and signatures follow the
// CUDA Driver API reference (https://docs.nvidia.com/cuda/cuda-driver-api/, cuda.h of CUDA 13.0),
// whose ABI NVIDIA keeps stable; the _v2 entry points are the ones cuda.h maps the plain names to.
#pragma once
#include <cstddef>

namespace tessera::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // CUdeviceptr_v2 on 64-bit hosts
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUlinkState = struct CUlinkState_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NOT_READY = 600;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;  // a device assert trapped; the context is lost

// CUjit_option
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;
inline constexpr int CU_JIT_MAX_REGISTERS = 0;
inline constexpr int CU_JIT_LOG_VERBOSE = 12;
inline constexpr int CU_JIT_GENERATE_LINE_INFO = 13;

// CUjitInputType
inline constexpr int CU_JIT_INPUT_PTX = 1;

// CUstreamCaptureStatus / CUstreamCaptureMode
inline constexpr int CU_STREAM_CAPTURE_STATUS_NONE = 0;
inline constexpr int CU_STREAM_CAPTURE_MODE_GLOBAL = 0;
inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;

// CUdevice_attribute
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr unsigned CU_EVENT_DEFAULT = 0;

// Entry points, as declared in cuda.h (CUDAAPI is the default calling convention on Linux).
using PFN_cuGetErrorName = CUresult (*)(CUresult error, const char** str);
using PFN_cuGetErrorString = CUresult (*)(CUresult error, const char** str);
using PFN_cuInit = CUresult (*)(unsigned flags);
using PFN_cuDeviceGetCount = CUresult (*)(int* count);
using PFN_cuDeviceGet = CUresult (*)(CUdevice* device, int ordinal);
using PFN_cuDeviceGetAttribute = CUresult (*)(int* value, int attribute, CUdevice device);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext* ctx, CUdevice device);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext ctx);
using PFN_cuCtxGetCurrent = CUresult (*)(CUcontext* ctx);
using PFN_cuCtxSynchronize = CUresult (*)();
using PFN_cuModuleLoadDataEx = CUresult (*)(CUmodule* module, const void* image, unsigned num_options,
                                            int* options, void** option_values);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction* function, CUmodule module, const char* name);
using PFN_cuModuleUnload = CUresult (*)(CUmodule module);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                        unsigned block_x, unsigned block_y, unsigned block_z,
                                        unsigned shared_bytes, CUstream stream, void** params, void** extra);
using PFN_cuMemAlloc = CUresult (*)(CUdeviceptr* ptr, size_t bytes);
using PFN_cuMemFree = CUresult (*)(CUdeviceptr ptr);
using PFN_cuMemcpyHtoD = CUresult (*)(CUdeviceptr dst, const void* src, size_t bytes);
using PFN_cuMemcpyDtoH = CUresult (*)(void* dst, CUdeviceptr src, size_t bytes);
using PFN_cuMemsetD8 = CUresult (*)(CUdeviceptr dst, unsigned char value, size_t count);
using PFN_cuMemsetD8Async = CUresult (*)(CUdeviceptr dst, unsigned char value, size_t count, CUstream stream);
using PFN_cuMemcpyHtoDAsync = CUresult (*)(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream);
using PFN_cuMemcpyDtoHAsync = CUresult (*)(void* dst, CUdeviceptr src, size_t bytes, CUstream stream);
using PFN_cuCtxGetDevice = CUresult (*)(CUdevice* device);
using PFN_cuStreamQuery = CUresult (*)(CUstream stream);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream stream);
using PFN_cuFuncGetAttribute = CUresult (*)(int* value, int attribute, CUfunction f);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction f, int attribute, int value);
using PFN_cuEventCreate = CUresult (*)(CUevent* event, unsigned flags);
using PFN_cuEventRecord = CUresult (*)(CUevent event, CUstream stream);
using PFN_cuEventSynchronize = CUresult (*)(CUevent event);
using PFN_cuEventElapsedTime = CUresult (*)(float* ms, CUevent start, CUevent end);
using PFN_cuEventDestroy = CUresult (*)(CUevent event);
using PFN_cuDriverGetVersion = CUresult (*)(int* version);
using PFN_cuLinkCreate = CUresult (*)(unsigned num_options, int* options, void** option_values, CUlinkState* state);
using PFN_cuLinkAddData = CUresult (*)(CUlinkState state, int type, void* data, size_t size, const char* name,
                                       unsigned num_options, int* options, void** option_values);
using PFN_cuLinkComplete = CUresult (*)(CUlinkState state, void** cubin, size_t* size);
using PFN_cuLinkDestroy = CUresult (*)(CUlinkState state);
using PFN_cuStreamIsCapturing = CUresult (*)(CUstream stream, int* status);
using PFN_cuStreamCreate = CUresult (*)(CUstream* stream, unsigned flags);
using PFN_cuStreamDestroy = CUresult (*)(CUstream stream);
using PFN_cuStreamBeginCapture = CUresult (*)(CUstream stream, int mode);
using PFN_cuStreamEndCapture = CUresult (*)(CUstream stream, CUgraph* graph);
using PFN_cuGraphInstantiate = CUresult (*)(CUgraphExec* exec, CUgraph graph, unsigned long long flags);
using PFN_cuGraphLaunch = CUresult (*)(CUgraphExec exec, CUstream stream);
using PFN_cuGraphExecDestroy = CUresult (*)(CUgraphExec exec);
using PFN_cuGraphDestroy = CUresult (*)(CUgraph graph);

}  // namespace tessera::cuda
