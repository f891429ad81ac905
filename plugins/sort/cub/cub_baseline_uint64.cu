// CUB's DeviceRadixSort for uint64 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(std::uint64_t, uint64)
