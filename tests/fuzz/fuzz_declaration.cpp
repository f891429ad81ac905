// libFuzzer: a declared kernel's declaration (docs/declared.md) in a kernel file's metadata
// block, and the plans made from it at a few sizes. Any input must end in a KernelFile or a
// gpuk::Error; nesting, sizes and counts are bounded (docs/reliability.md, "Bounds on what gpuk
// reads"), so no input may crash, hang or allocate past the fuzzer's limits.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"
#include "kernel/kernel_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string block(reinterpret_cast<const char*>(data), size);
  const std::string source = "/* gpuk\n" + block + "\n*/\nextern \"C\" __global__ void k(float* y, int n) {}\n";
  try {
    auto file = std::make_shared<const gpuk::KernelFile>(gpuk::KernelFile::parse(source, "kernel/fuzz.cu"));
    if (!file->declaration) return 0;
    const gpuk::Variant variant(file, {}, {});
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{8192}, (std::int64_t{1} << 31) + 17}) {
      gpuk::LaunchLimits limits{n, 132, 4, 1024, 48 * 1024};
      std::map<std::string, double> values = {{"seconds", 1e-3}};
      for (const auto& name : file->declaration->sizes) {
        limits.sizes[name] = n;
        values[name] = static_cast<double>(n);
      }
      for (const auto& p : file->params) values[p.name] = static_cast<double>(p.default_value);
      try {
        (void)gpuk::plan_launches(variant, limits);
        for (const auto& m : file->declaration->metrics) (void)m.expression.eval(values);
      } catch (const gpuk::Error&) {
      }
    }
  } catch (const gpuk::Error&) {
  }
  return 0;
}
