// CUB's DeviceRadixSort for uint32 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(std::uint32_t, uint32)
