// CUB's DeviceRadixSort for float64 keys (see cub_sort.cuh).
#include "cub_sort.cuh"
GPUK_CUB_SORT_DEFINE(double, float64)
