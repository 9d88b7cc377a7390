// The CUDA driver, opened at run time with dlopen("libcuda.so.1"), so that a tessera binary
// starts on a machine without an NVIDIA driver and says so clearly instead of failing to load.
// Every wrapper throws tessera::DriverError carrying the driver's own error name and text.
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "backends/cuda/cuda_api.hpp"
#include "tessera/export.hpp"

namespace tessera::cuda {

// The driver entry points, resolved once with dlsym.
struct CudaFunctions {
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;
  PFN_cuInit cuInit = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuCtxSetCurrent cuCtxSetCurrent = nullptr;
  PFN_cuCtxGetCurrent cuCtxGetCurrent = nullptr;
  PFN_cuCtxSynchronize cuCtxSynchronize = nullptr;
  PFN_cuModuleLoadDataEx cuModuleLoadDataEx = nullptr;
  PFN_cuModuleGetFunction cuModuleGetFunction = nullptr;
  PFN_cuModuleUnload cuModuleUnload = nullptr;
  PFN_cuLaunchKernel cuLaunchKernel = nullptr;
  PFN_cuMemAlloc cuMemAlloc = nullptr;
  PFN_cuMemFree cuMemFree = nullptr;
  PFN_cuMemcpyHtoD cuMemcpyHtoD = nullptr;
  PFN_cuMemcpyDtoH cuMemcpyDtoH = nullptr;
  PFN_cuMemsetD8 cuMemsetD8 = nullptr;
  PFN_cuMemsetD8Async cuMemsetD8Async = nullptr;
  PFN_cuMemcpyHtoDAsync cuMemcpyHtoDAsync = nullptr;
  PFN_cuMemcpyDtoHAsync cuMemcpyDtoHAsync = nullptr;
  PFN_cuCtxGetDevice cuCtxGetDevice = nullptr;
  PFN_cuStreamQuery cuStreamQuery = nullptr;
  PFN_cuStreamSynchronize cuStreamSynchronize = nullptr;
  PFN_cuFuncGetAttribute cuFuncGetAttribute = nullptr;
  PFN_cuFuncSetAttribute cuFuncSetAttribute = nullptr;
  PFN_cuEventCreate cuEventCreate = nullptr;
  PFN_cuEventRecord cuEventRecord = nullptr;
  PFN_cuEventSynchronize cuEventSynchronize = nullptr;
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
  PFN_cuEventDestroy cuEventDestroy = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuLinkCreate cuLinkCreate = nullptr;
  PFN_cuLinkAddData cuLinkAddData = nullptr;
  PFN_cuLinkComplete cuLinkComplete = nullptr;
  PFN_cuLinkDestroy cuLinkDestroy = nullptr;
  PFN_cuStreamIsCapturing cuStreamIsCapturing = nullptr;
  // Streams and graphs: for tests and benchmarks of launches under CUDA graph capture.
  PFN_cuStreamCreate cuStreamCreate = nullptr;
  PFN_cuStreamDestroy cuStreamDestroy = nullptr;
  PFN_cuStreamBeginCapture cuStreamBeginCapture = nullptr;
  PFN_cuStreamEndCapture cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiate cuGraphInstantiate = nullptr;
  PFN_cuGraphLaunch cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy cuGraphDestroy = nullptr;
};

// Settings of the driver's PTX compiler (ptxas inside libcuda).
struct JitOptions {
  int opt_level = 3;       // -O0..-O3
  int max_registers = 0;   // 0: no cap
  bool line_info = false;  // keep .loc line information (-lineinfo)
};

// A cubin compiled from PTX by the driver, with the compiler's verbose info log ("Used N
// registers, S bytes spill stores, ...").
struct JitResult {
  std::string cubin;
  std::string info_log;
};

// One per process: libcuda opened, cuInit done, device 0's primary context retained (the context
// every framework shares), and each other device's primary context retained on its first use.
// tessera runs every kernel in the primary context of its device, as frameworks do.
class TESSERA_API CudaDriver {
 public:
  // The driver, initialized on first call (thread-safe); nullptr when there is none.
  static CudaDriver* get();
  // Whether get() succeeds; if not, `why` (when non-null) says why in a user's words, e.g.
  // "no NVIDIA driver (libcuda.so.1 not found: ...)".
  static bool available(std::string* why = nullptr);
  // get(), or a DriverError with the reason.
  static CudaDriver& require();

  // Device 0 and its primary context: what compute_capability() and device_attribute() describe,
  // and the target tessera compiles for (every device must have the same architecture).
  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  int device_count() const { return device_count_; }
  // Device `ordinal`'s primary context, retained on first use; a LaunchError for an ordinal
  // beyond the devices, or a device whose architecture differs from device 0's.
  CUcontext context_of(int ordinal) const;
  // The ordinal of the device of `current` (a context current on a thread), or -1 for none.
  int device_of(CUcontext current) const;
  // The context current on the calling thread (null: none).
  CUcontext current_context() const;
  // The device of the calling thread's current context, or 0 when none is current.
  int current_device() const { return std::max(0, device_of(current_context())); }
  // Makes the primary context current on the calling thread if it has none (contexts are
  // per-thread); every wrapper below except launch() does this first.
  void ensure_context() const;

  int device_attribute(int attribute) const;
  std::pair<int, int> compute_capability() const;   // {9, 0} on an H100/H200
  std::array<int, 3> max_grid_dims() const;

  // Loads PTX (the driver compiles it) or a cubin. The JIT's error and info logs end up in the
  // DriverError message.
  CUmodule load_module(const std::string& image) const;
  CUfunction get_function(CUmodule module, const std::string& name) const;
  // Compiles PTX into a cubin for this device (cuLink*), without loading it: what the disk cache
  // stores, so that a later process loads machine code and compiles nothing. Errors carry the log.
  JitResult compile_ptx(const std::string& ptx, const JitOptions& options) const;
  // Whether `stream` is capturing a CUDA graph (then nothing may compile, load or synchronize).
  bool is_capturing(CUstream stream) const;
  int driver_version() const;  // e.g. 13000
  void unload_module(CUmodule module) const;
  int function_attribute(CUfunction f, int attribute) const;
  void set_function_attribute(CUfunction f, int attribute, int value) const;

  // The launch hot path: no context check, one indirect call. `launch_fn()` exposes the raw
  // cuLaunchKernel for callers that check the CUresult themselves.
  void launch(CUfunction f, const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
              unsigned shared_bytes, CUstream stream, void** params) const;
  PFN_cuLaunchKernel launch_fn() const { return fn_.cuLaunchKernel; }

  CUdeviceptr alloc(size_t bytes) const;
  void free(CUdeviceptr ptr) const;
  void copy_to_device(CUdeviceptr dst, const void* src, size_t bytes) const;
  void copy_to_host(void* dst, CUdeviceptr src, size_t bytes) const;
  void memset_d8(CUdeviceptr dst, unsigned char value, size_t bytes) const;
  // Ordered on `stream`, not on the legacy default stream (which waits for every blocking stream):
  // what the autotuner uses between its timing runs on the caller's stream.
  void memset_d8_async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream) const;
  void copy_to_device_async(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) const;
  void copy_to_host_async(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) const;
  // Whether everything queued on `stream` has finished, without waiting (cuStreamQuery).
  bool stream_done(CUstream stream) const;
  void stream_synchronize(CUstream stream) const;
  void context_synchronize() const;

  // Events, for benchmarks.
  CUevent create_event() const;
  void record_event(CUevent event, CUstream stream) const;
  void synchronize_event(CUevent event) const;
  float elapsed_ms(CUevent start, CUevent end) const;
  void destroy_event(CUevent event) const;

  // Throws DriverError "tessera: <call> failed: CUDA_ERROR_X (driver text, code N)<detail>" unless ok.
  void check(CUresult result, const char* call, const std::string& detail = "") const;
  // "CUDA_ERROR_X (driver text, code N)".
  std::string error_text(CUresult result) const;
  const CudaFunctions& functions() const { return fn_; }

  CudaDriver(const CudaFunctions& fn, CUdevice device, CUcontext context, int device_count);

 private:
  CudaFunctions fn_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int device_count_ = 1;
  // Primary contexts by ordinal, filled on first use (context_of); read without a lock.
  std::unique_ptr<std::atomic<CUcontext>[]> contexts_;
  mutable std::mutex contexts_mutex_;
};

// Makes a device's primary context current on this thread for a scope, and puts back the
// context that was current before (if any) when the scope ends. Costs nothing when the device's
// context is already current.
class TESSERA_API ScopedContext {
 public:
  ScopedContext(const CudaDriver& driver, int ordinal);
  // The same, with the thread's current context already asked (the launch path asks once).
  ScopedContext(const CudaDriver& driver, int ordinal, CUcontext current);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const CudaDriver& driver_;
  CUcontext previous_ = nullptr;
  bool restore_ = false;
};

}  // namespace tessera::cuda
