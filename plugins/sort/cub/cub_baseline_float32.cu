// CUB's DeviceRadixSort for float32 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(float, float32)
