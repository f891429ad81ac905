// CUB's DeviceRadixSort for int32 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(std::int32_t, int32)
