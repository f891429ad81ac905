// The kernel an operation runs with when a config or call names none.
#pragma once
#include <string>

namespace gpuk {

class KernelLibrary;

// `fallback` (the family's default kernel) where that file implements the operation, else the
// first file of the family, by name, that does (search: lower_bound is not its default
// kernel's), else `fallback` (whose error then names the operation).
std::string default_kernel_for(const KernelLibrary& kernels, const std::string& family, const std::string& operation,
                               const std::string& fallback);

}  // namespace gpuk
