// The memory checks the host target's code calls before every access (host_abi.hpp): the same
// rules as the interpreter's (jit/interp/memory.hpp). An address must be non-null and aligned as
// the compiled code assumes; an access derived from a sized argument stays in that argument's
// buffer; one of unknown origin lies in some buffer unless a raw pointer argument could reach it;
// shared memory is the program's own region. A failed check is recorded for the launch (the
// first one is reported) and the access is skipped.
#include <fmt/format.h>

#include <cstdint>

#include "backends/host/host_abi.hpp"
#include "backends/host/host_runtime.hpp"

namespace tessera::host {
namespace {

bool inside(std::uint64_t base, std::uint64_t size, std::uint64_t addr, std::uint64_t bytes) {
  return addr >= base && bytes <= size && addr - base <= size - bytes;
}

const char* access_name(std::int32_t access) {
  switch (static_cast<host_abi::Access>(access)) {
    case host_abi::Access::Load: return "load";
    case host_abi::Access::Store: return "store";
    case host_abi::Access::Atomic: return "atomic";
  }
  return "access";
}

std::string site_text(const char* site) { return site && *site ? site : "<unknown location>"; }

std::string region_name(const Run& r, int arg) {
  const auto& names = r.kernel->arg_names;
  const std::string& hint = arg >= 0 && static_cast<std::size_t>(arg) < names.size() ? names[arg] : std::string();
  return hint.empty() ? fmt::format("argument #{}", arg) : fmt::format("argument '{}'", hint);
}

std::string offset_text(const Region& b, std::uint64_t addr) {
  return addr >= b.base ? fmt::format("at byte offset {} from its start", addr - b.base)
                        : fmt::format("{} bytes before its start", b.base - addr);
}

// Why an access of `bytes` at `addr` derived from argument `arg` (-1: unknown) is not allowed, or
// "" when it is.
std::string global_violation(const Run& r, std::uint64_t addr, std::uint64_t bytes, std::uint64_t align, int arg) {
  if (addr == 0) return "the address is a null pointer";
  if (addr % align != 0)
    return fmt::format("address {:#x} is not a multiple of the {}-byte alignment the compiled code assumes for this "
                       "{}-byte access", addr, align, bytes);
  const Run::ArgMemory* from = arg >= 0 && static_cast<std::size_t>(arg) < r.arg_memory.size() ? &r.arg_memory[arg] : nullptr;
  if (from && from->sized) {
    const Region b{from->base, from->bytes, arg};
    if (inside(b.base, b.bytes, addr, bytes)) return "";
    return fmt::format("{} bytes at address {:#x} are outside the buffer of {} ({} bytes) they derive from, {}", bytes,
                       addr, region_name(r, b.arg), b.bytes, offset_text(b, addr));
  }
  if (from && from->raw) return "";  // a raw pointer argument: the caller vouches for it
  for (const Region& b : r.regions)
    if (inside(b.base, b.bytes, addr, bytes)) return "";
  for (const Region& b : r.regions)
    if (addr >= b.base && addr - b.base < b.bytes)
      return fmt::format("{} bytes at address {:#x} run past the end of the buffer of {} ({} bytes)", bytes, addr,
                         region_name(r, b.arg), b.bytes);
  if (r.any_raw || r.regions.empty()) return "";  // memory a raw pointer argument may reach
  // Name the buffer just below the address (the usual overrun), else the one above.
  const Region* below = nullptr;
  const Region* above = nullptr;
  for (const Region& b : r.regions) {
    if (b.base <= addr && (!below || b.base > below->base)) below = &b;
    if (b.base > addr && (!above || b.base < above->base)) above = &b;
  }
  const Region& near = below ? *below : *above;
  return fmt::format("{} bytes at address {:#x} are outside the buffer of {} ({} bytes), {}", bytes, addr,
                     region_name(r, near.arg), near.bytes, offset_text(near, addr));
}

}  // namespace
}  // namespace tessera::host

using tessera::host::Failure;
using tessera::host::Run;

extern "C" {

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_check_global(const void* address, std::uint64_t bytes,
                                                                                std::uint64_t align, std::int32_t access,
                                                                                std::int32_t arg, const char* site) {
  Run& r = tessera::host::current_run();
  const auto addr = reinterpret_cast<std::uint64_t>(address);
  // The common case first: aligned and inside the buffer of the argument it derives from.
  if (addr != 0 && (addr & (align - 1)) == 0 && arg >= 0 && static_cast<std::size_t>(arg) < r.arg_memory.size()) {
    const Run::ArgMemory& m = r.arg_memory[static_cast<std::size_t>(arg)];
    if (m.sized && tessera::host::inside(m.base, m.bytes, addr, bytes)) return 1;
  }
  try {
    const std::string why = tessera::host::global_violation(r, addr, bytes, align, arg);
    if (why.empty()) return 1;
    r.fail(Failure::Memory, fmt::format("{} {} at {}, {}: {}", addr % align != 0 && addr != 0 ? "misaligned" :
                                        addr == 0 ? "null pointer" : "out-of-bounds", tessera::host::access_name(access),
                                        tessera::host::site_text(site), r.where(), why));
  } catch (...) {
    r.fail(Failure::Memory, "");
  }
  return 0;
}

__attribute__((visibility("hidden"))) std::int32_t __tessera_host_check_shared(const void* address, std::uint64_t bytes,
                                                                                std::uint64_t align, std::int32_t access,
                                                                                const char* site) {
  Run& r = tessera::host::current_run();
  const auto addr = reinterpret_cast<std::uint64_t>(address);
  const auto base = reinterpret_cast<std::uint64_t>(r.kernel->code.shared);
  const auto size = static_cast<std::uint64_t>(r.kernel->shared_bytes);
  if (base != 0 && addr % align == 0 && tessera::host::inside(base, size, addr, bytes)) return 1;
  try {
    const std::string why =
        base == 0 ? std::string("the kernel has no shared memory")
        : addr % align != 0
            ? fmt::format("byte offset {} is not a multiple of the {}-byte alignment the compiled code assumes",
                          static_cast<std::int64_t>(addr - base), align)
            : fmt::format("{} bytes at byte offset {} are outside the program's {} bytes of shared memory", bytes,
                          static_cast<std::int64_t>(addr - base), size);
    r.fail(Failure::Memory, fmt::format("shared-memory {} at {}, {}: {} (a lowering bug)",
                                        tessera::host::access_name(access), tessera::host::site_text(site), r.where(),
                                        why));
  } catch (...) {
    r.fail(Failure::Memory, "");
  }
  return 0;
}

}  // extern "C"
