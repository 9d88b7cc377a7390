// Column sums of per-program f32 partials ([programs, n] -> [n] of the op's dtype): the second
// step of every backward that reduces over rows (layer norm's dW and dB, RMSNorm's dW, bias+GELU's
// dbias). Each program of the first kernel writes one row of partials; summing them here, in a
// fixed order, keeps the result deterministic (no atomics).
#pragma once
#include <tessera/tessera.hpp>

#include "dsl/torch/common.hpp"
#include "dsl/torch/kernel_name.hpp"

#include <cstdint>

namespace tessera::torch_ops {
namespace ts = ::tessera;

inline constexpr std::int64_t kPartialSumBlockM = 32, kPartialSumBlockN = 128;

// out[c] = sum over rows r < p_rows of partial[r, c] ([p_rows, n] f32), stored as T.
template <class T>
auto make_column_sum() {
  return ts::kernel(kernel_name<T>("column_sum"), [](ts::Ptr<float> partial, ts::Ptr<T> out, ts::Int p_rows,
                                                   ts::Int n) {
    const int BM = static_cast<int>(ts::meta("BLOCK_M")), BN = static_cast<int>(ts::meta("BLOCK_N"));
    auto cols = ts::program_id(0) * BN + ts::arange(0, BN);
    auto acc = ts::zeros<float>({BM, BN});
    ts::for_range(0, p_rows, BM, [&](ts::Int i) {
      auto rows = i + ts::arange(0, BM);
      auto mask = (rows.col() < p_rows) && (cols.row() < n);
      acc = acc + ts::load(partial + rows.col() * n + cols.row(), mask, 0.0f);
    });
    ts::store(out + cols, ts::sum(acc, 0).template to<T>(), cols < n);
  });
}

// Sums the [programs, n] f32 partials' columns into `out` (dtype T).
template <class T>
void sum_partials(const at::Tensor& partial, at::Tensor& out, std::int64_t programs, std::int64_t n) {
  static auto sum = make_column_sum<T>();
  sum[launch_options(partial, {ts::cdiv(n, kPartialSumBlockN)},
                     {{"BLOCK_M", kPartialSumBlockM}, {"BLOCK_N", kPartialSumBlockN}}, 4)](
      partial, out, static_cast<std::int32_t>(programs), static_cast<std::int32_t>(n));
}

}  // namespace tessera::torch_ops
