// CUB's DeviceRadixSort for int64 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(std::int64_t, int64)
