// The library API on the GPU: 8 threads at once, each on its own stream and sizes, calling
// argmax, sum, find and sort on device arrays they own, every answer checked against the CPU.
// Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/search.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"
#include "run/prepare.hpp"

using namespace gpuk;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

template <class T> DeviceBuffer upload(const std::vector<T>& host, const Stream& stream) {
  DeviceBuffer d(std::max<std::size_t>(1, host.size() * sizeof(T)));
  d.upload(host.data(), host.size() * sizeof(T), stream);
  return d;
}

template <class T> std::vector<T> download(const DeviceBuffer& d, std::size_t n, const Stream& stream) {
  std::vector<T> host(n);
  d.download(host.data(), n * sizeof(T), stream);
  stream.synchronize();
  return host;
}

// One thread's work: every operation at its sizes, on its own stream; the failures it saw.
std::vector<std::string> work(int thread, const std::vector<std::uint64_t>& sizes, std::uint64_t seed) {
  std::vector<std::string> failures;
  const auto fail = [&](const std::string& what) { failures.push_back("thread " + std::to_string(thread) + ": " + what); };
  const Device device(0);  // the primary context, current on this thread (the Engine's too)
  const Stream stream;
  std::mt19937_64 rng(seed);
  for (const std::uint64_t n : sizes) {
    const std::string at = " at n = " + std::to_string(n);
    // argmax of float32, asynchronously into device memory, then the synchronous call.
    std::vector<float> x(n);
    std::uniform_real_distribution<float> uniform(-1000, 1000);
    for (auto& v : x) v = uniform(rng);
    x[rng() % n] = 2000;  // a tie for the maximum: the lower index wins
    x[rng() % n] = 2000;
    const std::size_t best = static_cast<std::size_t>(std::max_element(x.begin(), x.end()) - x.begin());
    const DeviceBuffer d_x = upload(x, stream);
    const DeviceBuffer d_best(sizeof(reduce::Best<float>));
    reduce::argmax(engine(), reinterpret_cast<const float*>(d_x.get()), n,
                   reinterpret_cast<reduce::Best<float>*>(d_best.get()), stream.get());
    const auto got = download<reduce::Best<float>>(d_best, 1, stream)[0];
    if (got.value != x[best] || got.index != static_cast<std::int64_t>(best))
      fail("argmax" + at + ": got " + std::to_string(got.value) + " at " + std::to_string(got.index) + ", expected " +
           std::to_string(x[best]) + " at " + std::to_string(best));
    const auto sync = reduce::argmax(engine(), reinterpret_cast<const float*>(d_x.get()), n, stream.get());
    if (sync.index != static_cast<std::int64_t>(best)) fail("argmax (synchronous)" + at);

    // sum of int32: exact, in int64.
    std::vector<std::int32_t> a(n);
    for (auto& v : a) v = static_cast<std::int32_t>(rng() % 2000001) - 1000000;
    const std::int64_t sum = std::accumulate(a.begin(), a.end(), std::int64_t{0});
    const DeviceBuffer d_a = upload(a, stream);
    const std::int64_t got_sum = reduce::sum(engine(), reinterpret_cast<const std::int32_t*>(d_a.get()), n, stream.get());
    if (got_sum != sum) fail("sum" + at + ": got " + std::to_string(got_sum) + ", expected " + std::to_string(sum));

    // find: an element at a random position (its first occurrence), and a value that is absent.
    const std::int32_t value = a[rng() % n];
    const auto first = static_cast<std::int64_t>(std::find(a.begin(), a.end(), value) - a.begin());
    const DeviceBuffer d_index(sizeof(std::int64_t));
    search::find(engine(), reinterpret_cast<const std::int32_t*>(d_a.get()), n, value,
                 reinterpret_cast<std::int64_t*>(d_index.get()), stream.get());
    const std::int64_t index = download<std::int64_t>(d_index, 1, stream)[0];
    if (index != first) fail("find" + at + ": got " + std::to_string(index) + ", expected " + std::to_string(first));
    if (search::find(engine(), reinterpret_cast<const std::int32_t*>(d_a.get()), n, 5000000, stream.get()) != -1)
      fail("find of an absent value" + at);
    const auto count = static_cast<std::int64_t>(std::count(a.begin(), a.end(), value));
    if (search::count(engine(), reinterpret_cast<const std::int32_t*>(d_a.get()), n, value, stream.get()) != count)
      fail("count" + at);

    // sort of uint32 keys, and pairs (float32 keys, uint32 values: stable).
    std::vector<std::uint32_t> keys(n);
    for (auto& k : keys) k = static_cast<std::uint32_t>(rng());
    const DeviceBuffer d_keys = upload(keys, stream);
    const DeviceBuffer d_sorted(n * sizeof(std::uint32_t));
    sort::keys(engine(), reinterpret_cast<const std::uint32_t*>(d_keys.get()), reinterpret_cast<std::uint32_t*>(d_sorted.get()),
               n, stream.get());
    std::vector<std::uint32_t> expected = keys;
    std::sort(expected.begin(), expected.end());
    if (download<std::uint32_t>(d_sorted, n, stream) != expected) fail("sort" + at);

    std::vector<float> fkeys(n);
    std::vector<std::uint32_t> values(n);
    for (std::size_t i = 0; i < n; ++i) fkeys[i] = static_cast<float>(rng() % 100), values[i] = static_cast<std::uint32_t>(i);
    const DeviceBuffer d_fkeys = upload(fkeys, stream), d_values = upload(values, stream);
    const DeviceBuffer d_fout(n * sizeof(float)), d_vout(n * sizeof(std::uint32_t));
    sort::pairs(engine(), reinterpret_cast<const float*>(d_fkeys.get()), reinterpret_cast<float*>(d_fout.get()),
                reinterpret_cast<const std::uint32_t*>(d_values.get()), reinterpret_cast<std::uint32_t*>(d_vout.get()), n,
                stream.get(), sort::Order::descending);
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](auto i, auto j) { return fkeys[i] > fkeys[j]; });
    if (download<std::uint32_t>(d_vout, n, stream) != order) fail("sort_pairs descending (stable)" + at);
  }
  return failures;
}

}  // namespace

TEST_CASE("8 threads call argmax, sum, find and sort at once on their own streams and sizes; every answer is right") {
  const std::vector<std::vector<std::uint64_t>> sizes = {
      {1, 1000, 100003},  {17, 4096, 1 << 20},  {33, 5000, 3000001}, {4095, 16384, 65536},
      {31, 8191, 16385},  {1000, 1001, 250000}, {2, 12345, 1 << 16}, {999, 100000, 2000000}};
  const std::uint64_t seed = test::fresh_seed();
  std::vector<std::vector<std::string>> failures(sizes.size());
  std::vector<std::string> errors(sizes.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < sizes.size(); ++t)
    threads.emplace_back([&, t] {
      try {
        failures[t] = work(static_cast<int>(t), sizes[t], seed + t);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    CAPTURE(t);
    CHECK(errors[t] == "");
    for (const auto& f : failures[t]) FAIL_CHECK(f);
  }
}

TEST_CASE("an Operation serves its size bucket, plans again when n changes, and shares its modules") {
  const Device device(0);
  const Stream stream;
  OperationSpec spec;
  spec.family = "reduce";
  spec.operation = "max";
  spec.dtype = DType::int32;
  spec.n = 5000;
  Operation op = engine().prepare(spec);
  CHECK(op.min_n() == 4096);
  CHECK(op.max_n() == 8191);
  CHECK_FALSE(op.chosen().empty());
  MESSAGE("reduce max int32 n = 5000: " << op.variant() << "; chosen: " << op.chosen());
  REQUIRE(op.arrays().size() == 2);
  std::vector<std::int32_t> x(8191);
  std::iota(x.begin(), x.end(), -4000);
  const DeviceBuffer d_x = upload(x, stream);
  for (const std::uint64_t n : {4096u, 5000u, 8191u, 5000u}) {
    const CUdeviceptr arrays[] = {d_x.get(), 0};
    const auto bytes = op.launch_and_read(arrays, n, stream.get());
    reduce::Best<std::int32_t> best;
    std::memcpy(&best, bytes.data(), sizeof best);
    CHECK(best.value == x[n - 1]);
  }
  const CUdeviceptr arrays[] = {d_x.get(), 0x1000};
  CHECK_THROWS_WITH_AS(op.launch(arrays, 8192, stream.get()),
                       "reduce max was prepared for n in [4096, 8191] (its size bucket); n = 8192 needs an Operation of "
                       "its own",
                       ConfigError);
  // A radix sort reused across its bucket: the one-block path below a tile, the digit passes
  // above it, one scratch (sized for the bucket's end) for both.
  OperationSpec sort_spec;
  sort_spec.family = "sort";
  sort_spec.operation = "sort_pairs";
  sort_spec.dtype = DType::uint32;
  sort_spec.n = 5000;
  sort_spec.kernel = "radix";  // its defaults: one tile is 384 x 20 = 7,680 keys
  Operation sorter = engine().prepare(sort_spec);
  std::mt19937_64 rng(test::fresh_seed());
  std::vector<std::uint32_t> keys(8191), values(8191);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<std::uint32_t>(rng() % 1000), values[i] = i;
  const DeviceBuffer d_keys = upload(keys, stream), d_values = upload(values, stream);
  const DeviceBuffer d_keys_out(keys.size() * 4), d_values_out(keys.size() * 4);
  for (const std::uint64_t n : {5000u, 8191u, 4096u, 7681u, 7680u}) {
    CAPTURE(n);
    sorter.launch({d_keys.get(), d_keys_out.get(), d_values.get(), d_values_out.get()}, n, stream.get());
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](auto i, auto j) { return keys[i] < keys[j]; });
    CHECK(download<std::uint32_t>(d_values_out, n, stream) == order);
  }

  // A second Operation of the same variant loads no module of its own.
  const std::size_t modules = loaded_module_count();
  Operation again = engine().prepare(spec);
  CHECK(again.variant() == op.variant());
  CHECK(loaded_module_count() == modules);
  // Scratch the caller owns.
  spec.allocate_scratch = false;
  Operation own = engine().prepare(spec);
  REQUIRE(own.scratch_bytes() > 0);
  const DeviceBuffer scratch(own.scratch_bytes());
  const CUdeviceptr with_result[] = {d_x.get(), 0};
  CHECK_THROWS_WITH_AS(own.launch_and_read(with_result, 5000, stream.get()), doctest::Contains("no scratch yet"),
                       ConfigError);
  own.use_scratch(scratch.get(), scratch.bytes(), stream.get());
  const auto bytes = own.launch_and_read(with_result, 5000, stream.get());
  std::int32_t value = 0;
  std::memcpy(&value, bytes.data(), sizeof value);
  CHECK(value == x[4999]);
}
