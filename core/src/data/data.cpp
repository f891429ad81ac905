// Host arrays: aligned, size-checked against the machine's memory.
#include "data/data.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <new>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace {
// Whole pages (at least 64 bytes, a cache line): no two arrays share a page, so that each can be
// page-locked on its own (cuMemHostRegister locks whole pages, and refuses a page locked twice).
std::size_t alignment() {
  static const std::size_t a = [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    return page >= 64 ? static_cast<std::size_t>(page) : std::size_t{64};
  }();
  return a;
}
}  // namespace

// ------------------------------------------------------------------------------------------------
// HostArray

HostArray::HostArray(DType dtype, std::uint64_t size) : dtype_(dtype), size_(size) {
  const std::uint64_t esize = dtype_size(dtype);
  std::uint64_t bytes = 0;
  const bool overflow = __builtin_mul_overflow(size, esize, &bytes) ||
                        bytes > std::numeric_limits<std::size_t>::max() - alignment();
  if (overflow)
    throw Error(cat("cannot allocate ", size, " elements of ", dtype_name(dtype),
                    ": the byte count overflows"));
  if (bytes == 0) return;
  const auto refuse = [&](const std::string& why) {
    throw Error(cat("cannot allocate ", bytes, " bytes (", human_bytes(static_cast<double>(bytes)), ") for ", size,
                    " elements of ", dtype_name(dtype), ": ", why));
  };
  // More than the machine's memory is refused before asking: the allocator's answer to such a
  // request is not always an exception (sanitizers abort, overcommit may say yes).
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0 && bytes > static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size))
    refuse(cat("more than this machine's ", static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size),
               " bytes of memory"));
  const std::size_t rounded = (static_cast<std::size_t>(bytes) + alignment() - 1) / alignment() * alignment();
  try {
    storage_.reset(static_cast<std::byte*>(::operator new(rounded, std::align_val_t{alignment()})));
  } catch (const std::bad_alloc&) {
    refuse("out of host memory");
  }
  if (!storage_) refuse("out of host memory");
}

void HostArray::FreeAligned::operator()(std::byte* p) const {
  // After a kernel was abandoned the driver may wait for it: leave the pages locked (the process
  // is about to end).
  if (registered && !device_hung()) (void)driver().cuMemHostUnregister(p);
  ::operator delete(p, std::align_val_t{alignment()});
}

std::string HostArray::pin() {
  if (!storage_ || pinned()) return "";
  if (const char* off = std::getenv("GPUK_NO_PIN"); off && *off && std::string_view(off) != "0")
    return "page-locking is off (GPUK_NO_PIN)";
  try {
    // PORTABLE: page-locked for every context, not only the current one.
    const CUresult r = driver().cuMemHostRegister(storage_.get(), bytes(), CU_MEMHOSTREGISTER_PORTABLE);
    if (r != CUDA_SUCCESS) return "cuMemHostRegister of " + human_bytes(static_cast<double>(bytes())) + ": " + describe(r);
  } catch (const Error& e) {
    return e.what();
  }
  storage_.get_deleter().registered = true;
  return "";
}

void HostArray::check_type(DType wanted) const {
  if (wanted != dtype_)
    throw Error(cat("array holds ", dtype_name(dtype_), ", not ", dtype_name(wanted)));
}


}  // namespace gpuk
