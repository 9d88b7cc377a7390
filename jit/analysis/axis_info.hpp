// Axis info: for every integer and pointer value, per dimension, what the compiler can prove about
// its elements (Triton's AxisInfo): contiguity (runs of consecutive values, +1 along the dim),
// divisibility (largest power of two dividing the first element of each run; for pointers, in
// bytes) and constancy (runs of equal values). Seeded by the specialization facts of the kernel
// arguments; lowering reads it to choose vector widths and to keep vectors under masks.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "jit/ir/ir.hpp"

namespace tessera::analysis {

struct AxisInfo {
  // One entry per dim (one for a scalar). All entries are powers of two.
  std::vector<std::int64_t> contiguity, divisibility, constancy;
  std::int64_t contig(int d) const { return contiguity.at(d); }
  std::int64_t div(int d) const { return divisibility.at(d); }
  std::int64_t cnst(int d) const { return constancy.at(d); }
};

class AxisInfoAnalysis {
 public:
  explicit AxisInfoAnalysis(const ir::Module& m);
  const AxisInfo& get(const ir::Value* v) const;

  // The largest power of two dividing x (x == 0: kMaxDivisibility).
  static std::int64_t pow2_divisor(std::int64_t x);
  static constexpr std::int64_t kMaxDivisibility = std::int64_t{1} << 30;

 private:
  void visit_block(const ir::Block& b);
  void visit_op(const ir::Op& op);
  AxisInfo transfer(const ir::Op& op) const;
  std::unordered_map<const ir::Value*, AxisInfo> info_;
  // Shared buffers written by exactly one local_store and nothing else (a conversion's,
  // transforms/expand_conversions.hpp): a local_load of them reads what that store wrote, so its
  // result has the stored tile's information, as the convert_layout's had.
  std::unordered_map<const ir::Op*, const ir::Op*> sole_store_;
};

}  // namespace tessera::analysis
