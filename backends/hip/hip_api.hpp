// The few HIP runtime types, constants and entry-point signatures that tessera calls, declared
// here so that neither the HIP headers nor libamdhip64 are needed to build tessera: the library
// is opened with dlopen at run time (backends/hip/hip_driver.hpp). Signatures follow the HIP
// runtime API reference (hip/hip_runtime_api.h); the device-attribute values are those of
// hipDeviceAttribute_t since ROCm 5.0, which reordered the enum (ROCm 4 values differ).
#pragma once
#include <cstddef>

namespace tessera::hip {

using hipError_t = int;
using hipDevice_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;

inline constexpr hipError_t hipSuccess = 0;

// hipDeviceAttribute_t (ROCm >= 5.0)
inline constexpr int hipDeviceAttributeComputeCapabilityMajor = 23;
inline constexpr int hipDeviceAttributeMaxGridDimX = 29;
inline constexpr int hipDeviceAttributeMaxGridDimY = 30;
inline constexpr int hipDeviceAttributeMaxGridDimZ = 31;
inline constexpr int hipDeviceAttributeComputeCapabilityMinor = 61;
inline constexpr int hipDeviceAttributeMultiprocessorCount = 63;
inline constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
inline constexpr int hipDeviceAttributeWarpSize = 87;

// hipFunction_attribute (mirrors CUfunction_attribute)
inline constexpr int HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
inline constexpr int HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr int HIP_FUNC_ATTRIBUTE_NUM_REGS = 4;

using PFN_hipGetErrorName = const char* (*)(hipError_t error);
using PFN_hipGetErrorString = const char* (*)(hipError_t error);
using PFN_hipInit = hipError_t (*)(unsigned flags);
using PFN_hipGetDeviceCount = hipError_t (*)(int* count);
using PFN_hipSetDevice = hipError_t (*)(int device);
using PFN_hipDeviceGetAttribute = hipError_t (*)(int* value, int attribute, int device);
using PFN_hipModuleLoadData = hipError_t (*)(hipModule_t* module, const void* image);
using PFN_hipModuleGetFunction = hipError_t (*)(hipFunction_t* function, hipModule_t module, const char* name);
using PFN_hipModuleUnload = hipError_t (*)(hipModule_t module);
using PFN_hipModuleLaunchKernel = hipError_t (*)(hipFunction_t f, unsigned grid_x, unsigned grid_y,
                                                 unsigned grid_z, unsigned block_x, unsigned block_y,
                                                 unsigned block_z, unsigned shared_bytes, hipStream_t stream,
                                                 void** params, void** extra);
using PFN_hipMalloc = hipError_t (*)(void** ptr, size_t bytes);
using PFN_hipFree = hipError_t (*)(void* ptr);
using PFN_hipMemcpyHtoD = hipError_t (*)(hipDeviceptr_t dst, const void* src, size_t bytes);
using PFN_hipMemcpyDtoH = hipError_t (*)(void* dst, hipDeviceptr_t src, size_t bytes);
using PFN_hipMemsetD8 = hipError_t (*)(hipDeviceptr_t dst, unsigned char value, size_t count);
using PFN_hipStreamSynchronize = hipError_t (*)(hipStream_t stream);
using PFN_hipDeviceSynchronize = hipError_t (*)();
using PFN_hipFuncGetAttribute = hipError_t (*)(int* value, int attribute, hipFunction_t f);
using PFN_hipEventCreate = hipError_t (*)(hipEvent_t* event);
using PFN_hipEventRecord = hipError_t (*)(hipEvent_t event, hipStream_t stream);
using PFN_hipEventSynchronize = hipError_t (*)(hipEvent_t event);
using PFN_hipEventElapsedTime = hipError_t (*)(float* ms, hipEvent_t start, hipEvent_t end);
using PFN_hipEventDestroy = hipError_t (*)(hipEvent_t event);

}  // namespace tessera::hip
