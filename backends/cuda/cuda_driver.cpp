// libcuda through dlopen (see cuda_driver.hpp). No cuda.h and no link to libcuda.
#include "backends/cuda/cuda_driver.hpp"

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::cuda {
namespace {

// Outcome of the one-time initialization: a driver, or why there is none.
struct InitState {
  std::unique_ptr<CudaDriver> driver;
  std::string why;
};

// Resolves `names` in order (the versioned name first) and stores the first that exists.
template <typename Fn>
bool resolve(void* lib, Fn& slot, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* name : names) {
    if (void* sym = ::dlsym(lib, name)) {
      slot = reinterpret_cast<Fn>(sym);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

bool resolve_all(void* lib, CudaFunctions& f, std::string& missing) {
  return resolve(lib, f.cuGetErrorName, {"cuGetErrorName"}, missing) &&
         resolve(lib, f.cuGetErrorString, {"cuGetErrorString"}, missing) &&
         resolve(lib, f.cuInit, {"cuInit"}, missing) &&
         resolve(lib, f.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
         resolve(lib, f.cuDeviceGet, {"cuDeviceGet"}, missing) &&
         resolve(lib, f.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
         resolve(lib, f.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
         resolve(lib, f.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
         resolve(lib, f.cuCtxGetCurrent, {"cuCtxGetCurrent"}, missing) &&
         resolve(lib, f.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
         resolve(lib, f.cuModuleLoadDataEx, {"cuModuleLoadDataEx"}, missing) &&
         resolve(lib, f.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
         resolve(lib, f.cuModuleUnload, {"cuModuleUnload"}, missing) &&
         resolve(lib, f.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
         resolve(lib, f.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
         resolve(lib, f.cuMemFree, {"cuMemFree_v2"}, missing) &&
         resolve(lib, f.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
         resolve(lib, f.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
         resolve(lib, f.cuMemsetD8, {"cuMemsetD8_v2"}, missing) &&
         resolve(lib, f.cuMemsetD8Async, {"cuMemsetD8Async"}, missing) &&
         resolve(lib, f.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, missing) &&
         resolve(lib, f.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, missing) &&
         resolve(lib, f.cuCtxGetDevice, {"cuCtxGetDevice"}, missing) &&
         resolve(lib, f.cuStreamQuery, {"cuStreamQuery"}, missing) &&
         resolve(lib, f.cuStreamSynchronize, {"cuStreamSynchronize"}, missing) &&
         resolve(lib, f.cuFuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
         resolve(lib, f.cuFuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
         resolve(lib, f.cuEventCreate, {"cuEventCreate"}, missing) &&
         resolve(lib, f.cuEventRecord, {"cuEventRecord"}, missing) &&
         resolve(lib, f.cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
         // CUDA 12.8 added the _v2; older drivers export only the plain name, same signature.
         resolve(lib, f.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing) &&
         resolve(lib, f.cuEventDestroy, {"cuEventDestroy_v2"}, missing) &&
         resolve(lib, f.cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
         resolve(lib, f.cuLinkCreate, {"cuLinkCreate_v2"}, missing) &&
         resolve(lib, f.cuLinkAddData, {"cuLinkAddData_v2"}, missing) &&
         resolve(lib, f.cuLinkComplete, {"cuLinkComplete"}, missing) &&
         resolve(lib, f.cuLinkDestroy, {"cuLinkDestroy"}, missing) &&
         resolve(lib, f.cuStreamIsCapturing, {"cuStreamIsCapturing"}, missing) &&
         resolve(lib, f.cuStreamCreate, {"cuStreamCreate"}, missing) &&
         resolve(lib, f.cuStreamDestroy, {"cuStreamDestroy_v2"}, missing) &&
         resolve(lib, f.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, missing) &&
         resolve(lib, f.cuStreamEndCapture, {"cuStreamEndCapture"}, missing) &&
         resolve(lib, f.cuGraphInstantiate, {"cuGraphInstantiateWithFlags"}, missing) &&
         resolve(lib, f.cuGraphLaunch, {"cuGraphLaunch"}, missing) &&
         resolve(lib, f.cuGraphExecDestroy, {"cuGraphExecDestroy"}, missing) &&
         resolve(lib, f.cuGraphDestroy, {"cuGraphDestroy"}, missing);
}

std::string describe(const CudaFunctions& f, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (f.cuGetErrorName == nullptr || f.cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr)
    name = "CUDA error";
  if (f.cuGetErrorString == nullptr || f.cuGetErrorString(r, &text) != CUDA_SUCCESS || text == nullptr)
    text = "unknown error";
  std::string d = std::string(name) + " (" + text + ", code " + std::to_string(r) + ")";
  if (r == CUDA_ERROR_ASSERT)
    d += ": a device_assert (or a debug-mode overflow check) failed in a kernel; the lines printed above name the "
         "program, the element and the source line. The CUDA context cannot be used after it: restart the process";
  return d;
}

// dlopen, cuInit, device 0, primary context. The library is never closed: driver state lives
// for the whole process, as in every CUDA framework.
InitState initialize() {
  InitState s;
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = ::dlerror();
    s.why = std::string("no NVIDIA driver (libcuda.so.1 not found: ") + (err ? err : "unknown") + ")";
    return s;
  }
  CudaFunctions f;
  if (std::string missing; !resolve_all(lib, f, missing)) {
    s.why = "the NVIDIA driver is too old (libcuda.so.1 lacks " + missing + ")";
    return s;
  }
  if (CUresult r = f.cuInit(0); r != CUDA_SUCCESS) {
    s.why = "no usable NVIDIA GPU (libcuda.so.1 cuInit failed: " + describe(f, r) + ")";
    return s;
  }
  int count = 0;
  if (CUresult r = f.cuDeviceGetCount(&count); r != CUDA_SUCCESS || count == 0) {
    s.why = r != CUDA_SUCCESS ? "no usable NVIDIA GPU (cuDeviceGetCount failed: " + describe(f, r) + ")"
                              : std::string("no NVIDIA GPU (libcuda.so.1 reports 0 devices)");
    return s;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (CUresult r = f.cuDeviceGet(&device, 0); r != CUDA_SUCCESS) {
    s.why = "no usable NVIDIA GPU (cuDeviceGet(0) failed: " + describe(f, r) + ")";
    return s;
  }
  if (CUresult r = f.cuDevicePrimaryCtxRetain(&context, device); r != CUDA_SUCCESS) {
    s.why = "no usable NVIDIA GPU (cuDevicePrimaryCtxRetain failed: " + describe(f, r) + ")";
    return s;
  }
  s.driver = std::make_unique<CudaDriver>(f, device, context, count);
  return s;
}

const InitState& state() {
  static std::once_flag once;
  static InitState s;
  std::call_once(once, [] { s = initialize(); });
  return s;
}

}  // namespace

CudaDriver* CudaDriver::get() { return state().driver.get(); }

bool CudaDriver::available(std::string* why) {
  const InitState& s = state();
  if (why != nullptr) *why = s.why;
  return s.driver != nullptr;
}

CudaDriver& CudaDriver::require() {
  const InitState& s = state();
  if (s.driver == nullptr) throw DriverError("tessera: cannot use CUDA: " + s.why);
  return *s.driver;
}

CudaDriver::CudaDriver(const CudaFunctions& fn, CUdevice device, CUcontext context, int device_count)
    : fn_(fn), device_(device), context_(context), device_count_(device_count),
      contexts_(new std::atomic<CUcontext>[static_cast<std::size_t>(device_count)]) {
  for (int i = 0; i < device_count; ++i) contexts_[i].store(nullptr);
  contexts_[0].store(context);
}

CUcontext CudaDriver::context_of(int ordinal) const {
  if (ordinal < 0 || ordinal >= device_count_)
    throw LaunchError("tessera: CUDA device " + std::to_string(ordinal) + " does not exist (this process sees " +
                      std::to_string(device_count_) + (device_count_ == 1 ? " device" : " devices") + ")");
  if (CUcontext c = contexts_[ordinal].load(std::memory_order_acquire)) return c;
  std::lock_guard<std::mutex> lock(contexts_mutex_);
  if (CUcontext c = contexts_[ordinal].load(std::memory_order_acquire)) return c;
  CUdevice dev = 0;
  check(fn_.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  auto attribute = [&](int a, CUdevice d) {
    int v = 0;
    check(fn_.cuDeviceGetAttribute(&v, a, d), "cuDeviceGetAttribute");
    return v;
  };
  const int major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  const int minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  const auto [major0, minor0] = compute_capability();
  // One process compiles for one target (the disk and memory caches are keyed by it).
  if (major != major0 || minor != minor0)
    throw LaunchError("tessera: CUDA device " + std::to_string(ordinal) + " has compute capability " +
                      std::to_string(major) + "." + std::to_string(minor) + " and device 0 " + std::to_string(major0) +
                      "." + std::to_string(minor0) + "; one process runs tessera on devices of one architecture");
  CUcontext c = nullptr;
  check(fn_.cuDevicePrimaryCtxRetain(&c, dev), "cuDevicePrimaryCtxRetain");
  contexts_[ordinal].store(c, std::memory_order_release);
  return c;
}

int CudaDriver::device_of(CUcontext current) const {
  if (current == nullptr) return -1;
  for (int i = 0; i < device_count_; ++i)
    if (contexts_[i].load(std::memory_order_acquire) == current) return i;
  // A context tessera has not retained (another device's primary context, or one the caller
  // created): ask the driver which device it is on.
  CUdevice dev = 0;
  check(fn_.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  for (int i = 0; i < device_count_; ++i) {
    CUdevice d = 0;
    check(fn_.cuDeviceGet(&d, i), "cuDeviceGet");
    if (d == dev) return i;
  }
  return 0;
}

CUcontext CudaDriver::current_context() const {
  CUcontext current = nullptr;
  check(fn_.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  return current;
}

ScopedContext::ScopedContext(const CudaDriver& driver, int ordinal)
    : ScopedContext(driver, ordinal, driver.current_context()) {}

ScopedContext::ScopedContext(const CudaDriver& driver, int ordinal, CUcontext current) : driver_(driver) {
  const CUcontext wanted = driver.context_of(ordinal);
  if (current == wanted) return;
  driver.check(driver.functions().cuCtxSetCurrent(wanted), "cuCtxSetCurrent");
  previous_ = current;
  // With none current before, the device's context stays current: what ensure_context() would do.
  restore_ = current != nullptr;
}

ScopedContext::~ScopedContext() {
  if (restore_) driver_.functions().cuCtxSetCurrent(previous_);
}

std::string CudaDriver::error_text(CUresult result) const { return describe(fn_, result); }

void CudaDriver::check(CUresult result, const char* call, const std::string& detail) const {
  if (result == CUDA_SUCCESS) return;
  throw DriverError(std::string("tessera: ") + call + " failed: " + describe(fn_, result) + detail);
}

void CudaDriver::ensure_context() const {
  CUcontext current = nullptr;
  check(fn_.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == nullptr) check(fn_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

int CudaDriver::device_attribute(int attribute) const {
  int value = 0;
  check(fn_.cuDeviceGetAttribute(&value, attribute, device_), "cuDeviceGetAttribute");
  return value;
}

std::pair<int, int> CudaDriver::compute_capability() const {
  return {device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
          device_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)};
}

std::array<int, 3> CudaDriver::max_grid_dims() const {
  return {device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X), device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y),
          device_attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)};
}

CUmodule CudaDriver::load_module(const std::string& image) const {
  ensure_context();
  constexpr size_t log_size = 16 * 1024;
  std::vector<char> error_log(log_size, '\0');
  std::vector<char> info_log(log_size, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                   CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  // The sizes travel as integers cast to pointers, as the driver API specifies.
  void* values[] = {error_log.data(), reinterpret_cast<void*>(log_size), info_log.data(),
                    reinterpret_cast<void*>(log_size)};
  CUmodule module = nullptr;
  // image.c_str(): PTX must be NUL-terminated.
  const CUresult r = fn_.cuModuleLoadDataEx(&module, image.c_str(), 4, options, values);
  if (r != CUDA_SUCCESS) {
    error_log.back() = '\0';
    info_log.back() = '\0';
    std::string detail;
    if (error_log[0] != '\0') detail += std::string("\nJIT error log:\n") + error_log.data();
    if (info_log[0] != '\0') detail += std::string("\nJIT info log:\n") + info_log.data();
    check(r, "cuModuleLoadDataEx", detail);
  }
  return module;
}

CUfunction CudaDriver::get_function(CUmodule module, const std::string& name) const {
  ensure_context();
  CUfunction f = nullptr;
  check(fn_.cuModuleGetFunction(&f, module, name.c_str()), "cuModuleGetFunction", " (kernel '" + name + "')");
  return f;
}

JitResult CudaDriver::compile_ptx(const std::string& ptx, const JitOptions& o) const {
  ensure_context();
  constexpr size_t log_size = 16 * 1024;
  std::vector<char> error_log(log_size, '\0');
  std::vector<char> info_log(log_size, '\0');
  // Integer option values travel cast to pointers, as the driver API specifies.
  auto as_value = [](std::intptr_t v) { return reinterpret_cast<void*>(v); };
  std::vector<int> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE, CU_JIT_GENERATE_LINE_INFO};
  std::vector<void*> values{error_log.data(), as_value(log_size), info_log.data(), as_value(log_size), as_value(1),
                            as_value(o.line_info ? 1 : 0)};
  // The JIT's levels run 0..4 with 4, its default, the highest; ptxas's run 0..3 with 3 the
  // highest. -O3 keeps the driver's default, the lower levels are passed as they are.
  if (o.opt_level < 3) {
    options.push_back(CU_JIT_OPTIMIZATION_LEVEL);
    values.push_back(as_value(o.opt_level));
  }
  if (o.max_registers > 0) {
    options.push_back(CU_JIT_MAX_REGISTERS);
    values.push_back(as_value(o.max_registers));
  }
  auto logs = [&] {
    error_log.back() = info_log.back() = '\0';
    std::string detail;
    if (error_log[0] != '\0') detail += std::string("\nJIT error log:\n") + error_log.data();
    if (info_log[0] != '\0') detail += std::string("\nJIT info log:\n") + info_log.data();
    return detail;
  };
  CUlinkState link = nullptr;
  check(fn_.cuLinkCreate(static_cast<unsigned>(options.size()), options.data(), values.data(), &link), "cuLinkCreate");
  // The cubin belongs to the link state: copy it out before destroying the state, on every path.
  std::unique_ptr<CUlinkState_st, PFN_cuLinkDestroy> guard(link, fn_.cuLinkDestroy);
  CUresult r = fn_.cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char*>(ptx.c_str()), ptx.size() + 1, "kernel.ptx",
                                 0, nullptr, nullptr);
  if (r != CUDA_SUCCESS) check(r, "cuLinkAddData", logs());
  void* cubin = nullptr;
  size_t size = 0;
  r = fn_.cuLinkComplete(link, &cubin, &size);
  if (r != CUDA_SUCCESS) check(r, "cuLinkComplete", logs());
  info_log.back() = '\0';
  return JitResult{std::string(static_cast<const char*>(cubin), size), info_log.data()};
}

bool CudaDriver::is_capturing(CUstream stream) const {
  int status = CU_STREAM_CAPTURE_STATUS_NONE;
  check(fn_.cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing");
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

int CudaDriver::driver_version() const {
  int v = 0;
  check(fn_.cuDriverGetVersion(&v), "cuDriverGetVersion");
  return v;
}

void CudaDriver::unload_module(CUmodule module) const {
  ensure_context();
  check(fn_.cuModuleUnload(module), "cuModuleUnload");
}

int CudaDriver::function_attribute(CUfunction f, int attribute) const {
  int value = 0;
  check(fn_.cuFuncGetAttribute(&value, attribute, f), "cuFuncGetAttribute");
  return value;
}

void CudaDriver::set_function_attribute(CUfunction f, int attribute, int value) const {
  check(fn_.cuFuncSetAttribute(f, attribute, value), "cuFuncSetAttribute");
}

void CudaDriver::launch(CUfunction f, const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
                        unsigned shared_bytes, CUstream stream, void** params) const {
  const CUresult r = fn_.cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                        stream, params, nullptr);
  if (r != CUDA_SUCCESS) check(r, "cuLaunchKernel");
}

CUdeviceptr CudaDriver::alloc(size_t bytes) const {
  ensure_context();
  CUdeviceptr ptr = 0;
  check(fn_.cuMemAlloc(&ptr, bytes), "cuMemAlloc", " (" + std::to_string(bytes) + " bytes)");
  return ptr;
}

void CudaDriver::free(CUdeviceptr ptr) const {
  ensure_context();
  check(fn_.cuMemFree(ptr), "cuMemFree");
}

void CudaDriver::copy_to_device(CUdeviceptr dst, const void* src, size_t bytes) const {
  ensure_context();
  check(fn_.cuMemcpyHtoD(dst, src, bytes), "cuMemcpyHtoD");
}

void CudaDriver::copy_to_host(void* dst, CUdeviceptr src, size_t bytes) const {
  ensure_context();
  check(fn_.cuMemcpyDtoH(dst, src, bytes), "cuMemcpyDtoH");
}

void CudaDriver::memset_d8(CUdeviceptr dst, unsigned char value, size_t bytes) const {
  ensure_context();
  check(fn_.cuMemsetD8(dst, value, bytes), "cuMemsetD8");
}

void CudaDriver::memset_d8_async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream) const {
  ensure_context();
  check(fn_.cuMemsetD8Async(dst, value, bytes, stream), "cuMemsetD8Async");
}

void CudaDriver::copy_to_device_async(CUdeviceptr dst, const void* src, size_t bytes, CUstream stream) const {
  ensure_context();
  check(fn_.cuMemcpyHtoDAsync(dst, src, bytes, stream), "cuMemcpyHtoDAsync");
}

void CudaDriver::copy_to_host_async(void* dst, CUdeviceptr src, size_t bytes, CUstream stream) const {
  ensure_context();
  check(fn_.cuMemcpyDtoHAsync(dst, src, bytes, stream), "cuMemcpyDtoHAsync");
}

bool CudaDriver::stream_done(CUstream stream) const {
  const CUresult r = fn_.cuStreamQuery(stream);
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuStreamQuery");
  return true;
}

void CudaDriver::stream_synchronize(CUstream stream) const {
  ensure_context();
  check(fn_.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

void CudaDriver::context_synchronize() const {
  ensure_context();
  check(fn_.cuCtxSynchronize(), "cuCtxSynchronize");
}

CUevent CudaDriver::create_event() const {
  ensure_context();
  CUevent event = nullptr;
  check(fn_.cuEventCreate(&event, CU_EVENT_DEFAULT), "cuEventCreate");
  return event;
}

void CudaDriver::record_event(CUevent event, CUstream stream) const {
  check(fn_.cuEventRecord(event, stream), "cuEventRecord");
}

void CudaDriver::synchronize_event(CUevent event) const {
  check(fn_.cuEventSynchronize(event), "cuEventSynchronize");
}

float CudaDriver::elapsed_ms(CUevent start, CUevent end) const {
  float ms = 0.0f;
  check(fn_.cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

void CudaDriver::destroy_event(CUevent event) const { check(fn_.cuEventDestroy(event), "cuEventDestroy"); }

}  // namespace tessera::cuda
