// gpuk._gpuk's memory and DLPack helpers (memory_binding.cpp; module.cpp calls bind_memory).
#pragma once
#include <nanobind/nanobind.h>

namespace gpuk::python {

void bind_memory(nanobind::module_& m);

}  // namespace gpuk::python
