// gpuk._gpuk.tune_kernel: the library's tuning call (gpuk/tuning.hpp) bound for Python (module.cpp
// calls bind_tune).
#pragma once
#include <nanobind/nanobind.h>

namespace gpuk::python {

void bind_tune(nanobind::module_& m);

}  // namespace gpuk::python
