// The library API's sort handles and policies on the GPU: in-place sorts (every plan: one launch,
// an even and an odd number of digit passes), overlapping outputs refused, the prepared argsort,
// caller-owned scratch for prepared handles, and the Engine's TuningPolicy. Every answer is
// checked against the host. Without a GPU this program prints why and exits 77 (skipped).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "api/engine_internals.hpp"
#include "device/device.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/reduce.hpp"
#include "gpuk/sort.hpp"
#include "helpers.hpp"
#include "plugin/plugin.hpp"
#include "plugin/problem.hpp"
#include "run/prepare.hpp"
#include "tuning/tuning_db.hpp"

using namespace gpuk;

namespace {

Engine& engine() {
  static Engine e;
  return e;
}

struct Gpu {
  Device device{0};  // the primary context, current on this thread (the Engine's too)
  Stream stream;
};
Gpu& gpu() {
  static Gpu g;
  return g;
}

template <class T> DeviceBuffer upload(const std::vector<T>& host) {
  DeviceBuffer d(std::max<std::size_t>(1, host.size() * sizeof(T)));
  d.upload(host.data(), host.size() * sizeof(T), gpu().stream);
  return d;
}

template <class T> std::vector<T> download(CUdeviceptr d, std::size_t n) {
  std::vector<T> host(n);
  GPUK_CU(driver().cuMemcpyDtoHAsync(host.data(), d, n * sizeof(T), gpu().stream.get()));
  gpu().stream.synchronize();
  return host;
}

template <class T> T* typed(const DeviceBuffer& d) { return reinterpret_cast<T*>(d.get()); }

std::vector<std::uint32_t> random_u32(std::size_t n, std::uint32_t mask = 0xffffffffu) {
  std::mt19937 rng(static_cast<std::uint32_t>(test::fresh_seed()));
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) x = rng() & mask;
  return v;
}

// The stable order of keys by bits [begin, end): what every sort below must give.
std::vector<std::uint32_t> stable_order(const std::vector<std::uint32_t>& keys, int begin = 0, int end = 32) {
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  const auto field = [&](std::uint32_t k) { return (std::uint64_t{k} >> begin) & ((std::uint64_t{1} << (end - begin)) - 1); };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return field(keys[a]) < field(keys[b]); });
  return order;
}

template <class T> std::vector<T> gather(const std::vector<T>& v, const std::vector<std::uint32_t>& order) {
  std::vector<T> out(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) out[i] = v[order[i]];
  return out;
}

std::string config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("in-place sorts: keys and pairs with the output on the input, every plan, twice in a row") {
  const CUstream s = gpu().stream.get();
  // 1000: rank_bucket (one launch: the input is copied aside first); 100003: radix, 4 passes;
  // 2^20 + 5: onesweep, 4 passes (even: read before written, no copy).
  for (const std::size_t n : {std::size_t{1000}, std::size_t{100003}, (std::size_t{1} << 20) + 5}) {
    CAPTURE(n);
    const auto keys = random_u32(n, n == 1000 ? 0xffu : 0xffffffffu);  // ties where n is small
    const auto order = stable_order(keys);
    DeviceBuffer d = upload(keys);
    sort::keys(engine(), typed<std::uint32_t>(d), typed<std::uint32_t>(d), n, s);
    CHECK(download<std::uint32_t>(d.get(), n) == gather(keys, order));
    // Pairs, in place on both arrays; the values prove stability.
    std::vector<std::uint32_t> values(n);
    std::iota(values.begin(), values.end(), 0u);
    DeviceBuffer dk = upload(keys), dv = upload(values);
    sort::pairs(engine(), typed<std::uint32_t>(dk), typed<std::uint32_t>(dk), typed<std::uint32_t>(dv),
                typed<std::uint32_t>(dv), n, s);
    CHECK(download<std::uint32_t>(dk.get(), n) == gather(keys, order));
    CHECK(download<std::uint32_t>(dv.get(), n) == order);
  }
  // A window of 8 bits: onesweep runs one digit pass (odd: the aliased input is copied aside, and
  // the look-back is cleared for each run), on one prepared handle, large, smaller, large again
  // in one size bucket (the third run's tiles past the second's must not see the first's entries).
  const std::size_t max_n = (std::size_t{1} << 21) - 1;
  auto sorter =
      sort::prepare_pairs<std::uint32_t, std::uint32_t>(engine(), max_n, sort::Options(sort::Order::ascending, 8, 16));
  for (const std::size_t n : {max_n, (std::size_t{1} << 20) + 3, max_n}) {
    CAPTURE(n);
    const auto keys = random_u32(n);
    const auto order = stable_order(keys, 8, 16);
    std::vector<std::uint32_t> values(n);
    std::iota(values.begin(), values.end(), 0u);
    DeviceBuffer dk = upload(keys), dv = upload(values);
    sorter(typed<std::uint32_t>(dk), typed<std::uint32_t>(dk), typed<std::uint32_t>(dv), typed<std::uint32_t>(dv), n, s);
    CHECK(download<std::uint32_t>(dk.get(), n) == gather(keys, order));
    CHECK(download<std::uint32_t>(dv.get(), n) == order);
  }
}

TEST_CASE("outputs that overlap an input (other than exactly) or each other are refused before any launch") {
  const CUstream s = gpu().stream.get();
  const std::size_t n = 5000;
  DeviceBuffer d(2 * n * sizeof(std::uint32_t)), v(n * sizeof(std::uint32_t));
  auto* k = typed<std::uint32_t>(d);
  CHECK(config_error_of([&] { sort::keys(engine(), k, k + 1, n, s); }).find("keys_in and keys_out overlap") !=
        std::string::npos);
  CHECK(config_error_of([&] {
          sort::pairs(engine(), k, k + n, typed<std::uint32_t>(v), k + n + 10, n, s);
        }).find("overlap") != std::string::npos);
  CHECK(config_error_of([&] { sort::keys(engine(), k, k + n, n, s); }).empty());  // adjacent: fine
}

TEST_CASE("prepare_argsort: the sorted keys and their original indices, any n up to max_n") {
  const CUstream s = gpu().stream.get();
  auto argsort = sort::prepare_argsort<std::uint32_t>(engine(), 300000, sort::Order::descending);
  CHECK(argsort.scratch_bytes() > 0);
  CHECK(argsort.max_n() == 300000);
  for (const std::size_t n : {std::size_t{1}, std::size_t{777}, std::size_t{65536}, std::size_t{300000}}) {
    CAPTURE(n);
    const auto keys = random_u32(n, 0xfffu);
    std::vector<std::uint32_t> flipped(n);
    for (std::size_t i = 0; i < n; ++i) flipped[i] = ~keys[i];
    const auto order = stable_order(flipped);  // descending, stable
    DeviceBuffer dk = upload(keys), dout(n * 4), di(n * 4);
    argsort(typed<std::uint32_t>(dk), typed<std::uint32_t>(dout), typed<std::uint32_t>(di), n, s);
    CHECK(download<std::uint32_t>(dout.get(), n) == gather(keys, order));
    CHECK(download<std::uint32_t>(di.get(), n) == order);
  }
  argsort(nullptr, nullptr, nullptr, 0, s);  // n = 0: nothing
  CHECK_THROWS_AS(argsort(typed<std::uint32_t>(DeviceBuffer(4)), nullptr, nullptr, 300001, s), ConfigError);
}

TEST_CASE("caller-owned scratch: a handle that allocates nothing, given its scratch_bytes() by the application") {
  const CUstream s = gpu().stream.get();
  const std::size_t max_n = (std::size_t{1} << 20) + 1;
  const auto owned = sort::prepare_pairs<float, std::uint32_t>(engine(), max_n);
  auto sorter = sort::prepare_pairs<float, std::uint32_t>(engine(), max_n, {}, Scratch::caller);
  CHECK(sorter.held_bytes() == 0);
  CHECK(sorter.scratch_bytes() >= owned.held_bytes());
  CHECK(sorter.scratch_bytes() > (std::uint64_t{8} << 20));  // the spare keys and values of the largest bucket
  const std::size_t n = 70001;
  std::mt19937 rng(static_cast<std::uint32_t>(test::fresh_seed()));
  std::vector<float> keys(n);
  for (auto& k : keys) k = static_cast<float>(rng() % 1000) - 500.0f;
  std::vector<std::uint32_t> values(n);
  std::iota(values.begin(), values.end(), 0u);
  DeviceBuffer dk = upload(keys), dv = upload(values), dko(n * 4), dvo(n * 4);
  const auto call = [&] {
    sorter(typed<float>(dk), typed<float>(dko), typed<std::uint32_t>(dv), typed<std::uint32_t>(dvo), n, s);
  };
  CHECK(config_error_of(call).find("no scratch yet") != std::string::npos);
  DeviceBuffer scratch(sorter.scratch_bytes());
  CHECK(config_error_of([&] { sorter.use_scratch(scratch.get(), sorter.scratch_bytes() - 1, s); }).find("bytes of scratch") !=
        std::string::npos);
  CHECK(config_error_of([&] { sorter.use_scratch(scratch.get() + 16, sorter.scratch_bytes(), s); }).find("aligned") !=
        std::string::npos);
  sorter.use_scratch(scratch.get(), scratch.bytes(), s);
  CHECK(sorter.held_bytes() == 0);
  for (int round = 0; round < 2; ++round) {
    call();
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
    CHECK(download<float>(dko.get(), n) == gather(keys, order));
    CHECK(download<std::uint32_t>(dvo.get(), n) == order);
  }
}

TEST_CASE("caller-owned scratch for a reduction handle too: argmax on the application's memory") {
  const CUstream s = gpu().stream.get();
  auto amax = reduce::prepare_argmax<float>(engine(), 1 << 20, Scratch::caller);
  CHECK(amax.held_bytes() == 0);
  DeviceBuffer scratch(std::max<std::uint64_t>(256, amax.scratch_bytes()));
  amax.use_scratch(scratch.get(), scratch.bytes(), s);
  std::vector<float> x(300007);
  std::mt19937 rng(static_cast<std::uint32_t>(test::fresh_seed()));
  for (auto& v : x) v = static_cast<float>(rng() % 100000);
  x[123457] = 1e6f;
  const DeviceBuffer dx = upload(x);
  DeviceBuffer best(sizeof(reduce::Best<float>));
  amax(typed<float>(dx), typed<reduce::Best<float>>(best), x.size(), s);
  const auto got = download<reduce::Best<float>>(best.get(), 1)[0];
  CHECK(got.index == 123457);
  CHECK(got.value == 1e6f);
}

TEST_CASE("TuningPolicy: the user's database, the shipped file only, a given file, or no file at all") {
  const std::uint64_t n = 4096;
  // A tuning database that names block_atomic for reduce argmax float32 at n's bucket on this GPU.
  test::TempDir dir;
  const auto db_path = dir.path() / "tuning.json";
  const Problem problem = make_problem(EngineInternals::plugins(engine()).get("reduce"), "argmax", DType::float32, {}, n);
  TuningEntry e;
  e.key = {engine().device_name(), engine().device().arch, "reduce", "argmax", options_key(problem.options),
           "float32", size_bucket(n)};
  e.kernel = "block_atomic";
  e.median_ms = 0.01;
  e.size = n;
  e.strategy = "exhaustive";
  e.evaluated = 1;
  TuningDb db;
  db.put(e);
  db.write(db_path);

  const auto chosen = [&](TuningPolicy policy, bool user_db) {
    EngineOptions o;
    if (user_db) o.tuning_db = db_path;
    o.tuning = std::move(policy);
    const Engine policy_engine(o);
    OperationSpec spec;
    spec.family = "reduce";
    spec.operation = "argmax";
    spec.dtype = DType::float32;
    spec.n = n;
    const Operation op = policy_engine.prepare(spec);
    return op.variant() + " | " + op.chosen();
  };
  const std::string user = chosen(TuningPolicy::user_database(), true);
  CHECK_MESSAGE(user.rfind("block_atomic", 0) == 0, user);
  CHECK_MESSAGE(user.find("user tuning database") != std::string::npos, user);
  const std::string shipped = chosen(TuningPolicy::shipped_only(), true);
  CHECK_MESSAGE(shipped.find("user tuning database") == std::string::npos, shipped);
  const std::string file = chosen(TuningPolicy::from_file(db_path), false);
  CHECK_MESSAGE(file.rfind("block_atomic", 0) == 0, file);
  CHECK_MESSAGE(file.find("tuning file " + db_path.string()) != std::string::npos, file);
  const std::string none = chosen(TuningPolicy::none(), true);
  CHECK_MESSAGE(none.find("user tuning database") == std::string::npos, none);
  CHECK_MESSAGE(none.find("shipped defaults") == std::string::npos, none);
  std::cout << "user database: " << user << "\nshipped only: " << shipped << "\ngiven file: " << file
            << "\nnone: " << none << "\n";
}
