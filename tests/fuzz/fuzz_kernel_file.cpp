// libFuzzer: the kernel file metadata parser and the launch planner. Any source must end in a
// KernelFile or a gpuk::Error naming the file and line; variants and plans made from a parsed
// file must do the same (expressions dividing by zero, huge grids, bad constraints).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  try {
    auto file = std::make_shared<const gpuk::KernelFile>(gpuk::KernelFile::parse(source, "fuzz.cu"));
    const gpuk::Variant variant(file, {"T"}, {});
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{250000}, (std::int64_t{1} << 31) + 17}) {
      try {
        (void)gpuk::plan_launches(variant, {n, 132, 4, 1024, 48 * 1024});
      } catch (const gpuk::Error&) {
      }
    }
  } catch (const gpuk::Error&) {
  }
  return 0;
}
