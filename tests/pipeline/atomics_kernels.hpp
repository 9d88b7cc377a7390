// Atomic kernels shared by the pipeline tests (tests/pipeline/atomics_test.cpp) and the GPU tests
// (tests/gpu/atomics_gpu_test.cpp): the same traced programs on the interpreter and the device.
#pragma once
#include <tessera/tessera.hpp>

#include <cstdint>

namespace atomics_kernels {

namespace ts = tessera;

// bins[x[i]] += 1 for i < n; many lanes hit the same bin. With RETURN = 1 the old counts are
// stored to old[i] (so the replicated old values must reach every thread that holds a copy).
inline auto make_histogram() {
  return ts::kernel("histogram", [](ts::Ptr<std::int32_t> x, ts::Ptr<std::int32_t> bins, ts::Ptr<std::int32_t> old,
                                    ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask);
    auto before = ts::atomic_add(bins + v, 1, mask);
    if (ts::meta("RETURN") != 0) ts::store(old + offs, before, mask);
  });
}

// out[0] = max(out[0], x[i]) and out[1] = min(out[1], x[i]) over i < n: one scalar address per op.
template <class T>
auto make_max_min() {
  return ts::kernel("max_min", [](ts::Ptr<T> x, ts::Ptr<T> out, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto v = ts::load(x + offs, mask);
    ts::atomic_max(out, v, mask, ts::Sem::Relaxed);
    ts::atomic_min(out + 1, v, mask, ts::Sem::Release, ts::Scope::Gpu);
  });
}

// sum[0] += x[i] in the float type T (f32, f64, f16, bf16): the order-independent check is on
// integer-valued inputs, which every order adds exactly.
template <class T>
auto make_float_sum() {
  return ts::kernel("float_sum", [](ts::Ptr<T> x, ts::Ptr<T> sum, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    ts::atomic_add(sum + offs % 4, ts::load(x + offs, mask), mask);
  });
}

// Each lane tries to claim slot[i % SLOTS] with a compare-and-swap from 0 to its program id + 1,
// and records what it saw: exactly one lane per slot sees 0 (no spinning, no lost claim).
inline auto make_claim() {
  return ts::kernel("claim", [](ts::Ptr<std::int32_t> slots, ts::Ptr<std::int32_t> seen, ts::Int n) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    const int SLOTS = static_cast<int>(ts::meta("SLOTS"));
    auto offs = ts::program_id(0) * BLOCK + ts::arange(0, BLOCK);
    auto mask = offs < n;
    auto ptrs = slots + offs % SLOTS;
    auto got = ts::atomic_cas(ptrs, 0, ts::program_id(0) + 1, ts::Sem::AcqRel, ts::Scope::Gpu);
    ts::store(seen + offs, got, mask);
  });
}

// A ticket per program from a scalar counter, broadcast to the whole tile: tickets[p*BLOCK + i] = t.
// Bits: flags |= 1 << (pid % 32) by atomic_or, then atomic_and clears bit 0, atomic_xchg sets last.
inline auto make_ticket() {
  return ts::kernel("ticket", [](ts::Ptr<std::int32_t> counter, ts::Ptr<std::int32_t> tickets,
                                 ts::Ptr<std::uint32_t> flags, ts::Ptr<std::int64_t> last) {
    const int BLOCK = static_cast<int>(ts::meta("BLOCK"));
    auto pid = ts::program_id(0);
    auto t = ts::atomic_add(counter, 1);
    ts::store(tickets + pid * BLOCK + ts::arange(0, BLOCK), t + ts::zeros<std::int32_t>({BLOCK}));
    ts::atomic_or(flags, ts::full<std::uint32_t>({}, 1u) << (pid % 32).to<std::uint32_t>(), ts::Sem::Relaxed,
                  ts::Scope::Cta);
    ts::atomic_and(flags + 1, 0xfffffffeu, ts::Sem::Acquire, ts::Scope::Sys);
    ts::atomic_xchg(last, t.to<std::int64_t>());
  });
}

}  // namespace atomics_kernels
