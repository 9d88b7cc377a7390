// libamdhip64 through dlopen (see hip_driver.hpp). No HIP headers and no link to the runtime.
#include "backends/hip/hip_driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/error.hpp"

namespace tessera::hip {
namespace {

struct InitState {
  std::unique_ptr<HipDriver> driver;
  std::string why;
};

template <typename Fn>
bool resolve(void* lib, Fn& slot, const char* name, std::string& missing) {
  if (void* sym = ::dlsym(lib, name)) {
    slot = reinterpret_cast<Fn>(sym);
    return true;
  }
  missing = name;
  return false;
}

bool resolve_all(void* lib, HipFunctions& f, std::string& missing) {
  return resolve(lib, f.hipGetErrorName, "hipGetErrorName", missing) &&
         resolve(lib, f.hipGetErrorString, "hipGetErrorString", missing) &&
         resolve(lib, f.hipInit, "hipInit", missing) &&
         resolve(lib, f.hipGetDeviceCount, "hipGetDeviceCount", missing) &&
         resolve(lib, f.hipSetDevice, "hipSetDevice", missing) &&
         resolve(lib, f.hipDeviceGetAttribute, "hipDeviceGetAttribute", missing) &&
         resolve(lib, f.hipModuleLoadData, "hipModuleLoadData", missing) &&
         resolve(lib, f.hipModuleGetFunction, "hipModuleGetFunction", missing) &&
         resolve(lib, f.hipModuleUnload, "hipModuleUnload", missing) &&
         resolve(lib, f.hipModuleLaunchKernel, "hipModuleLaunchKernel", missing) &&
         resolve(lib, f.hipMalloc, "hipMalloc", missing) &&
         resolve(lib, f.hipFree, "hipFree", missing) &&
         resolve(lib, f.hipMemcpyHtoD, "hipMemcpyHtoD", missing) &&
         resolve(lib, f.hipMemcpyDtoH, "hipMemcpyDtoH", missing) &&
         resolve(lib, f.hipMemsetD8, "hipMemsetD8", missing) &&
         resolve(lib, f.hipStreamSynchronize, "hipStreamSynchronize", missing) &&
         resolve(lib, f.hipDeviceSynchronize, "hipDeviceSynchronize", missing) &&
         resolve(lib, f.hipFuncGetAttribute, "hipFuncGetAttribute", missing) &&
         resolve(lib, f.hipEventCreate, "hipEventCreate", missing) &&
         resolve(lib, f.hipEventRecord, "hipEventRecord", missing) &&
         resolve(lib, f.hipEventSynchronize, "hipEventSynchronize", missing) &&
         resolve(lib, f.hipEventElapsedTime, "hipEventElapsedTime", missing) &&
         resolve(lib, f.hipEventDestroy, "hipEventDestroy", missing);
}

std::string describe(const HipFunctions& f, hipError_t r) {
  const char* name = f.hipGetErrorName != nullptr ? f.hipGetErrorName(r) : nullptr;
  const char* text = f.hipGetErrorString != nullptr ? f.hipGetErrorString(r) : nullptr;
  return std::string(name != nullptr ? name : "HIP error") + " (" + (text != nullptr ? text : "unknown error") +
         ", code " + std::to_string(r) + ")";
}

// The unversioned name exists only with the -dev package; ROCm's runtime package ships the
// versioned one, and ROCm's lib folder is often not on the loader's path.
std::vector<std::string> library_candidates() {
  std::vector<std::string> names = {"libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
  if (const char* rocm = std::getenv("ROCM_PATH"); rocm != nullptr && *rocm != '\0')
    names.push_back(std::string(rocm) + "/lib/libamdhip64.so");
  names.push_back("/opt/rocm/lib/libamdhip64.so");
  return names;
}

void* open_library(std::string& first_error) {
  for (const std::string& name : library_candidates()) {
    if (void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    if (first_error.empty()) {
      const char* err = ::dlerror();
      first_error = err != nullptr ? err : name + ": unknown error";
    }
  }
  return nullptr;
}

// dlopen, hipInit, device 0. The library is never closed: runtime state lives for the process.
InitState initialize() {
  InitState s;
  std::string dl_error;
  void* lib = open_library(dl_error);
  if (lib == nullptr) {
    s.why = "no AMD GPU runtime (libamdhip64.so not found: " + dl_error + ")";
    return s;
  }
  HipFunctions f;
  if (std::string missing; !resolve_all(lib, f, missing)) {
    s.why = "the HIP runtime is too old (libamdhip64 lacks " + missing + ")";
    return s;
  }
  if (hipError_t r = f.hipInit(0); r != hipSuccess) {
    s.why = "no usable AMD GPU (libamdhip64 hipInit failed: " + describe(f, r) + ")";
    return s;
  }
  int count = 0;
  if (hipError_t r = f.hipGetDeviceCount(&count); r != hipSuccess || count == 0) {
    s.why = r != hipSuccess ? "no usable AMD GPU (hipGetDeviceCount failed: " + describe(f, r) + ")"
                            : std::string("no AMD GPU (libamdhip64 reports 0 devices)");
    return s;
  }
  if (hipError_t r = f.hipSetDevice(0); r != hipSuccess) {
    s.why = "no usable AMD GPU (hipSetDevice(0) failed: " + describe(f, r) + ")";
    return s;
  }
  s.driver = std::make_unique<HipDriver>(f, 0);
  return s;
}

const InitState& state() {
  static std::once_flag once;
  static InitState s;
  std::call_once(once, [] { s = initialize(); });
  return s;
}

}  // namespace

HipDriver* HipDriver::get() { return state().driver.get(); }

bool HipDriver::available(std::string* why) {
  const InitState& s = state();
  if (why != nullptr) *why = s.why;
  return s.driver != nullptr;
}

HipDriver& HipDriver::require() {
  const InitState& s = state();
  if (s.driver == nullptr) throw DriverError("tessera: cannot use HIP: " + s.why);
  return *s.driver;
}

std::string HipDriver::error_text(hipError_t result) const { return describe(fn_, result); }

void HipDriver::check(hipError_t result, const char* call, const std::string& detail) const {
  if (result == hipSuccess) return;
  throw DriverError(std::string("tessera: ") + call + " failed: " + describe(fn_, result) + detail);
}

int HipDriver::device_attribute(int attribute) const {
  int value = 0;
  check(fn_.hipDeviceGetAttribute(&value, attribute, device_), "hipDeviceGetAttribute");
  return value;
}

std::array<int, 3> HipDriver::max_grid_dims() const {
  return {device_attribute(hipDeviceAttributeMaxGridDimX), device_attribute(hipDeviceAttributeMaxGridDimY),
          device_attribute(hipDeviceAttributeMaxGridDimZ)};
}

int HipDriver::multiprocessor_count() const { return device_attribute(hipDeviceAttributeMultiprocessorCount); }

hipModule_t HipDriver::load_module(const std::string& image) const {
  hipModule_t module = nullptr;
  check(fn_.hipModuleLoadData(&module, image.data()), "hipModuleLoadData");
  return module;
}

hipFunction_t HipDriver::get_function(hipModule_t module, const std::string& name) const {
  hipFunction_t f = nullptr;
  check(fn_.hipModuleGetFunction(&f, module, name.c_str()), "hipModuleGetFunction", " (kernel '" + name + "')");
  return f;
}

void HipDriver::unload_module(hipModule_t module) const { check(fn_.hipModuleUnload(module), "hipModuleUnload"); }

int HipDriver::function_attribute(hipFunction_t f, int attribute) const {
  int value = 0;
  check(fn_.hipFuncGetAttribute(&value, attribute, f), "hipFuncGetAttribute");
  return value;
}

void HipDriver::launch(hipFunction_t f, const std::array<unsigned, 3>& grid, const std::array<unsigned, 3>& block,
                       unsigned shared_bytes, hipStream_t stream, void** params) const {
  const hipError_t r = fn_.hipModuleLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                                 shared_bytes, stream, params, nullptr);
  if (r != hipSuccess) check(r, "hipModuleLaunchKernel");
}

void* HipDriver::alloc(size_t bytes) const {
  void* ptr = nullptr;
  check(fn_.hipMalloc(&ptr, bytes), "hipMalloc", " (" + std::to_string(bytes) + " bytes)");
  return ptr;
}

void HipDriver::free(void* ptr) const { check(fn_.hipFree(ptr), "hipFree"); }

void HipDriver::copy_to_device(void* dst, const void* src, size_t bytes) const {
  check(fn_.hipMemcpyHtoD(dst, src, bytes), "hipMemcpyHtoD");
}

void HipDriver::copy_to_host(void* dst, const void* src, size_t bytes) const {
  check(fn_.hipMemcpyDtoH(dst, const_cast<void*>(src), bytes), "hipMemcpyDtoH");
}

void HipDriver::memset_d8(void* dst, unsigned char value, size_t bytes) const {
  check(fn_.hipMemsetD8(dst, value, bytes), "hipMemsetD8");
}

void HipDriver::stream_synchronize(hipStream_t stream) const {
  check(fn_.hipStreamSynchronize(stream), "hipStreamSynchronize");
}

void HipDriver::device_synchronize() const { check(fn_.hipDeviceSynchronize(), "hipDeviceSynchronize"); }

hipEvent_t HipDriver::create_event() const {
  hipEvent_t event = nullptr;
  check(fn_.hipEventCreate(&event), "hipEventCreate");
  return event;
}

void HipDriver::record_event(hipEvent_t event, hipStream_t stream) const {
  check(fn_.hipEventRecord(event, stream), "hipEventRecord");
}

void HipDriver::synchronize_event(hipEvent_t event) const {
  check(fn_.hipEventSynchronize(event), "hipEventSynchronize");
}

float HipDriver::elapsed_ms(hipEvent_t start, hipEvent_t end) const {
  float ms = 0.0f;
  check(fn_.hipEventElapsedTime(&ms, start, end), "hipEventElapsedTime");
  return ms;
}

void HipDriver::destroy_event(hipEvent_t event) const { check(fn_.hipEventDestroy(event), "hipEventDestroy"); }

}  // namespace tessera::hip
