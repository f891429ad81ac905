// The one main of every test program (tests/CMakeLists.txt compiles it twice: the gpu label's
// programs with GPUK_NEEDS_GPU). A GPU program skips itself, visibly, without a GPU: it prints the
// reason and exits 77, which CTest reports as "Skipped".
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "device/device.hpp"

int main(int argc, char** argv) {
#ifdef GPUK_NEEDS_GPU
  std::string why;
  if (gpuk::device_count(&why) == 0) {
    std::cout << "SKIPPED: the GPU tests need an NVIDIA GPU: " << why << "\n";
    return 77;
  }
#ifdef GPUK_NO_BASELINES
  std::cout << "this build has no library baselines (GPUK_BASELINES=OFF): the checks of CUB's and Thrust's runs "
               "are skipped\n";
#endif
#endif
  doctest::Context context(argc, argv);
  return context.run();
}
