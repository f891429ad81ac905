// libFuzzer: the .npy reader. Any file must end in a HostArray whose size matches the file, or
// a gpuk::Error naming the file; a header that declares a huge shape must be refused before
// anything is allocated (tools/dev/fuzz.sh runs with -malloc_limit_mb).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/data.hpp"
#include "gpuk/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuk-fuzz-" + std::to_string(::getpid()) + ".npy");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const gpuk::HostArray array = gpuk::read_npy(path);
    if (array.bytes() > size) std::abort();  // more elements than the file holds
  } catch (const gpuk::Error&) {
  }
  return 0;
}
