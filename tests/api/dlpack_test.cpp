// DLPack tensors as launch arguments (tessera/dlpack.hpp): host tensors run on the interpreter
// with their extent as the checked bound, byte_offset applied, strided views through
// ts::tensor_args, and every tensor tessera cannot take (dtype, lanes, negative strides, a place
// the executor cannot reach, a mix of places) refused before anything runs.
#include <tessera/dlpack.hpp>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "launch_test_util.hpp"

using namespace launch_test;
using Catch::Contains;

namespace {

// A DLTensor over host memory the test owns; shape and strides live here too.
struct HostTensor {
  std::vector<float> storage;
  std::vector<std::int64_t> shape, strides;
  DLTensor t{};
  HostTensor(std::vector<float> data, std::vector<std::int64_t> shape_, std::vector<std::int64_t> strides_ = {})
      : storage(std::move(data)), shape(std::move(shape_)), strides(std::move(strides_)) {
    t.data = storage.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
  }
};

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// out[r * cols + c] = x[r * rs + c * cs]: a strided 2-D view copied out compactly.
auto make_strided_copy() {
  return ts::kernel("strided_copy", [](ts::Ptr<float> x, ts::Int64 rows, ts::Int64 cols, ts::Int64 rs, ts::Int64 cs,
                                       ts::Ptr<float> out) {
    const int block = ts::meta("BLOCK");
    auto r = ts::program_id(0);
    auto c = ts::arange(0, block);
    auto mask = c < cols;
    auto v = ts::load(x + r * rs + c * cs, mask);
    ts::store(out + r * cols + c, v, mask);
  });
}

}  // namespace

TEST_CASE("DLPack host tensors run on the interpreter and compute the right values", "[api][dlpack]") {
  auto k = make_scale("dlpack_scale");
  const std::size_t n = 1000;
  HostTensor x(random_floats(n, 1), {static_cast<std::int64_t>(n)});
  HostTensor out(std::vector<float>(n, 0.0f), {static_cast<std::int64_t>(n)});
  DLManagedTensor managed_out{out.t, nullptr, nullptr};
  // Auto follows the tensors: host memory runs on the interpreter (or a host target), never a GPU.
  ts::LaunchOptions opts = scale_options(n);
  opts.executor = ts::Executor::Auto;
  k[opts](&x.t, &managed_out, static_cast<std::int32_t>(n), 2.5f);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(out.storage[i] == x.storage[i] * 2.5f);
  // By reference and as a const pointer too.
  std::fill(out.storage.begin(), out.storage.end(), 0.0f);
  const DLTensor* cx = &x.t;
  k[scale_options(n)](cx, out.t, static_cast<std::int32_t>(n), -1.0f);
  for (std::size_t i = 0; i < n; ++i) REQUIRE(out.storage[i] == -x.storage[i]);
}

TEST_CASE("a DLPack byte_offset is applied and the extent bounds the accesses", "[api][dlpack]") {
  auto k = make_scale("dlpack_offset");
  HostTensor x(random_floats(64, 2), {60});
  x.t.byte_offset = 4 * sizeof(float);  // elements 4..63
  HostTensor out(std::vector<float>(60, 0.0f), {60});
  k[scale_options(60)](&x.t, &out.t, 60, 1.0f);
  for (int i = 0; i < 60; ++i) REQUIRE(out.storage[i] == x.storage[i + 4]);
  // A launch that reads past the tensor's 60 elements is caught by the interpreter's bound.
  CHECK_THAT(error_of<ts::Error>([&] { k[scale_options(61)](&x.t, &out.t, 61, 1.0f); }),
             Contains("out-of-bounds load") && Contains("(240 bytes)"));
}

TEST_CASE("ts::tensor_args passes a strided view's sizes and strides", "[api][dlpack]") {
  auto k = make_strided_copy();
  const std::int64_t rows = 37, cols = 23;
  // A transposed view of a cols x rows row-major matrix: element (r, c) at r + c * rows.
  HostTensor x(random_floats(static_cast<std::size_t>(rows * cols), 3), {rows, cols}, {1, rows});
  std::vector<float> out(static_cast<std::size_t>(rows * cols), 0.0f);
  k[{.grid = {rows}, .meta = {{"BLOCK", 32}}, .executor = ts::Executor::Interpreter}](ts::tensor_args<2>(&x.t), out);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      REQUIRE(out[static_cast<std::size_t>(r * cols + c)] == x.storage[static_cast<std::size_t>(r + c * rows)]);
  // A compact tensor (strides null) gets row-major strides.
  HostTensor y(random_floats(static_cast<std::size_t>(rows * cols), 4), {rows, cols});
  k[{.grid = {rows}, .meta = {{"BLOCK", 32}}, .executor = ts::Executor::Interpreter}](ts::tensor_args<2>(y.t), out);
  CHECK(out == y.storage);
  // The rank must match.
  CHECK_THAT(error_of<ts::LaunchError>([&] {
               HostTensor flat(random_floats(8, 5), {8});
               k[{.grid = {1}, .meta = {{"BLOCK", 32}}, .executor = ts::Executor::Interpreter}](
                   ts::tensor_args<2>(&flat.t), out);
             }),
             Contains("ts::tensor_args<2>: the tensor has 1 dimensions"));
  // Sizes are checked before they are passed on.
  CHECK_THAT(error_of<ts::LaunchError>([&] {
               HostTensor bad(random_floats(8, 6), {2, -4});
               k[{.grid = {1}, .meta = {{"BLOCK", 32}}, .executor = ts::Executor::Interpreter}](
                   ts::tensor_args<2>(&bad.t), out);
             }),
             Contains("the tensor of a ts::tensor_args is a tensor with a negative size"));
}

TEST_CASE("DLPack tensors tessera cannot take are refused with the reason", "[api][dlpack][errors]") {
  auto k = make_scale("dlpack_refused");
  HostTensor x(random_floats(64, 6), {64});
  HostTensor out(std::vector<float>(64, 0.0f), {64});
  const auto compiles_before = ts::runtime_stats().compiles;

  SECTION("a dtype other than the parameter's") {
    x.t.dtype = {kDLFloat, 16, 1};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 of kernel 'dlpack_refused' is ptr<f32>") && Contains("pointer to f16"));
  }
  SECTION("a dtype tessera has no element type for") {
    x.t.dtype = {kDLComplex, 64, 1};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is a DLPack tensor of dtype (code 5, 64 bits, 1 lanes)") &&
                   Contains("no element type"));
  }
  SECTION("vector lanes") {
    out.t.dtype = {kDLFloat, 32, 4};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 1 is a DLPack tensor") && Contains("vector lanes"));
  }
  SECTION("a negative stride") {
    std::int64_t stride = -1;
    x.t.strides = &stride;
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is a tensor with a negative stride"));
  }
  SECTION("a null tensor") {
    DLTensor* none = nullptr;
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](none, &out.t, 64, 1.0f); }),
               Contains("argument 0 is a null DLTensor pointer"));
  }
  SECTION("a device type tessera does not run on") {
    x.t.device = {kDLVulkan, 0};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is a DLPack tensor on device type 7"));
  }
  SECTION("GPU memory for the interpreter") {
    out.t.device = {kDLCUDA, 0};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is in host memory and argument 1 in CUDA device memory") &&
                   Contains("must all be in one place"));
    x.t.device = {kDLCUDA, 0};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[scale_options(64)](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is in CUDA device memory, which Executor::Interpreter cannot reach"));
  }
  SECTION("host memory for a GPU executor") {
    auto opts = scale_options(64);
    opts.executor = ts::Executor::Cuda;
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[opts](&x.t, &out.t, 64, 1.0f); }),
               Contains("argument 0 is in host memory, which Executor::Cuda cannot reach"));
    // The same for a ts::Buffer of the interpreter: it says where its memory is.
    ts::Buffer<float> bx(64, ts::Executor::Interpreter), bout(64, ts::Executor::Interpreter);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[opts](bx, bout, 64, 1.0f); }),
               Contains("argument 0 is in host memory, which Executor::Cuda cannot reach"));
    // And for a std::vector or std::array, which always hold host memory (a GPU given their
    // address would fault).
    std::vector<float> vx(64), vout(64);
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[opts](vx, vout, 64, 1.0f); }),
               Contains("argument 0 is in host memory, which Executor::Cuda cannot reach"));
    std::array<float, 64> ax{}, aout{};
    CHECK_THAT(error_of<ts::LaunchError>([&] { k[opts](ax, aout, 64, 1.0f); }),
               Contains("argument 0 is in host memory, which Executor::Cuda cannot reach"));
  }
  CHECK(ts::runtime_stats().compiles == compiles_before);  // refused before anything was traced
  CHECK(scale_works(k));
}
