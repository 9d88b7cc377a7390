// The HIP runtime, opened at run time with dlopen (libamdhip64), so that a tessera binary starts
// on a machine without ROCm and says so clearly. Same shape as backends/cuda/cuda_driver.hpp;
// every wrapper throws tessera::DriverError with HIP's own error name and text.
#pragma once
#include <array>
#include <string>
#include <utility>

#include "backends/hip/hip_api.hpp"
#include "tessera/export.hpp"

namespace tessera::hip {

// The runtime entry points, resolved once with dlsym.
struct HipFunctions {
  PFN_hipGetErrorName hipGetErrorName = nullptr;
  PFN_hipGetErrorString hipGetErrorString = nullptr;
  PFN_hipInit hipInit = nullptr;
  PFN_hipGetDeviceCount hipGetDeviceCount = nullptr;
  PFN_hipSetDevice hipSetDevice = nullptr;
  PFN_hipDeviceGetAttribute hipDeviceGetAttribute = nullptr;
  PFN_hipModuleLoadData hipModuleLoadData = nullptr;
  PFN_hipModuleGetFunction hipModuleGetFunction = nullptr;
  PFN_hipModuleUnload hipModuleUnload = nullptr;
  PFN_hipModuleLaunchKernel hipModuleLaunchKernel = nullptr;
  PFN_hipMalloc hipMalloc = nullptr;
  PFN_hipFree hipFree = nullptr;
  PFN_hipMemcpyHtoD hipMemcpyHtoD = nullptr;
  PFN_hipMemcpyDtoH hipMemcpyDtoH = nullptr;
  PFN_hipMemsetD8 hipMemsetD8 = nullptr;
  PFN_hipStreamSynchronize hipStreamSynchronize = nullptr;
  PFN_hipDeviceSynchronize hipDeviceSynchronize = nullptr;
  PFN_hipFuncGetAttribute hipFuncGetAttribute = nullptr;
  PFN_hipEventCreate hipEventCreate = nullptr;
  PFN_hipEventRecord hipEventRecord = nullptr;
  PFN_hipEventSynchronize hipEventSynchronize = nullptr;
  PFN_hipEventElapsedTime hipEventElapsedTime = nullptr;
  PFN_hipEventDestroy hipEventDestroy = nullptr;
};

// One per process: libamdhip64 opened, hipInit done, device 0 selected. Device selection is left
// to HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES.
class TESSERA_API HipDriver {
 public:
  // The runtime, initialized on first call (thread-safe); nullptr when there is none.
  static HipDriver* get();
  // Whether get() succeeds; if not, `why` (when non-null) says why, e.g.
  // "no AMD GPU runtime (libamdhip64.so not found: ...)".
  static bool available(std::string* why = nullptr);
  // get(), or a DriverError with the reason.
  static HipDriver& require();

  int device() const { return device_; }
  int device_attribute(int attribute) const;
  std::array<int, 3> max_grid_dims() const;
  int multiprocessor_count() const;

  // Loads an HSACO (the ELF that tessera::lower's AMDGPU target produces).
  hipModule_t load_module(const std::string& image) const;
  hipFunction_t get_function(hipModule_t module, const std::string& name) const;
  void unload_module(hipModule_t module) const;
  int function_attribute(hipFunction_t f, int attribute) const;

  // The launch hot path: one indirect call; `launch_fn()` exposes the raw hipModuleLaunchKernel.
  void launch(hipFunction_t f, const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
              unsigned shared_bytes, hipStream_t stream, void** params) const;
  PFN_hipModuleLaunchKernel launch_fn() const { return fn_.hipModuleLaunchKernel; }

  void* alloc(size_t bytes) const;
  void free(void* ptr) const;
  void copy_to_device(void* dst, const void* src, size_t bytes) const;
  void copy_to_host(void* dst, const void* src, size_t bytes) const;
  void memset_d8(void* dst, unsigned char value, size_t bytes) const;
  void stream_synchronize(hipStream_t stream) const;
  void device_synchronize() const;

  // Events, for benchmarks.
  hipEvent_t create_event() const;
  void record_event(hipEvent_t event, hipStream_t stream) const;
  void synchronize_event(hipEvent_t event) const;
  float elapsed_ms(hipEvent_t start, hipEvent_t end) const;
  void destroy_event(hipEvent_t event) const;

  // Throws DriverError "tessera: <call> failed: hipErrorX (HIP text, code N)<detail>" unless ok.
  void check(hipError_t result, const char* call, const std::string& detail = "") const;
  std::string error_text(hipError_t result) const;
  const HipFunctions& functions() const { return fn_; }

  HipDriver(const HipFunctions& fn, int device) : fn_(fn), device_(device) {}

 private:
  HipFunctions fn_;
  int device_ = 0;
};

}  // namespace tessera::hip
