// gpuk::tune_kernel (gpuk/tuning.hpp) without a GPU: whole sweeps of the declared tests' kernels on
// the driver whose device memory is host memory and whose launches do nothing (api/fake_driver.cpp,
// GPUK_FAKE_HOST_MEMORY): the data from memory, the answers given or not, points, a verify
// function and every status a variant can have come back as values. A launch writes nothing, so
// an output keeps its poison (0xA5 bytes) and an in-out array its input: the answers the fake GPU
// "computes".
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "declared/declared_cli.hpp"
#include "gpuk/error.hpp"
#include "gpuk/gpuk.hpp"
#include "gpuk/tuning.hpp"

using namespace gpuk;
namespace fs = std::filesystem;

namespace {

Engine& engine() {
  static Engine e = [] {
    EngineOptions o;
    o.kernel_dirs = {test::declared_dir() / "kernels"};
    o.cache_dir = test::declared_scratch().dir / "cache";
    return Engine(o);
  }();
  return e;
}

constexpr int kNx = 100, kNy = 30;

// What an output holds after a launch that did nothing: the poison.
std::vector<float> poisoned(std::size_t n) {
  std::vector<float> v(n);
  std::memset(v.data(), 0xA5, n * sizeof(float));
  return v;
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i) - 3.0f;
  return v;
}

TuneRequest scale2d_request(const std::string& extra = "") {
  TuneRequest r;
  r.config = "family: kernel\nkernels: [scale2d]\nsizes: {nx: " + std::to_string(kNx) + ", ny: " + std::to_string(kNy) +
             "}\nparams: {block_size_x: [16, 64], block_size_y: [1, 8]}\nwarmup: 1\nrepeats: 3\n"
             "recheck: {top: 2, repeats: 3}\n" + extra;
  return r;
}

std::size_t count(const TuneResults& r, VariantStatus s) {
  std::size_t n = 0;
  for (const auto& v : r.results) n += v.status == s;
  return n;
}

}  // namespace

TEST_CASE("tune_kernel: inputs from memory, an answer per output, every variant verified and ranked") {
  const auto in = ramp(kNx * kNy);
  const auto expected = poisoned(kNx * kNy);
  TuneRequest r = scale2d_request();
  r.inputs["in"] = HostView::of(in.data(), in.size());
  r.answers["out"] = HostView::of(expected.data(), expected.size());
  const TuneResults t = tune_kernel(engine(), r);
  REQUIRE(t.results.size() == 4);
  CHECK(count(t, VariantStatus::ok) == 4);
  REQUIRE(t.best);
  CHECK(t.ranking.size() == 4);
  CHECK(t.ranking.front() == *t.best);
  for (const auto& v : t.results) {
    CAPTURE(v.reason);
    CHECK(v.verified == std::optional<bool>(true));
    CHECK(v.time_ms > 0);
    CHECK(v.times_ms.size() >= 3);
    CHECK(v.metrics.count("Gelem/s"));
    CHECK(v.metrics.count("GB/s"));
    CHECK(v.params.size() == 2);
    // the workers' compile and verification times, shared out (Kernel Tuner's per-result times)
    CHECK(v.compile_ms > 0);
    CHECK(v.verification_ms > 0);
  }
  CHECK(t.strategy == "exhaustive");
  CHECK(!t.device_name.empty());
  CHECK(t.programs == 4);  // one NVRTC program per -D variant
  CHECK(t.wall_seconds > 0);
  for (const auto& n : t.notes) CHECK(!test::has(n, "CUDA was started in this process"));  // on workers
}

TEST_CASE("tune_kernel: a wrong answer fails every variant with the first bad index; None leaves an output out") {
  const auto in = ramp(kNx * kNy);
  // Ones: the poison's bytes are a float of about -2.9e-16, which zeros would match within atol.
  const std::vector<float> ones(kNx * kNy, 1.0f);
  TuneRequest r = scale2d_request();
  r.inputs["in"] = HostView::of(in.data(), in.size());
  r.answers["out"] = HostView::of(ones.data(), ones.size());
  const TuneResults wrong = tune_kernel(engine(), r);
  CHECK(count(wrong, VariantStatus::wrong_answer) == 4);
  CHECK(!wrong.best);
  CHECK(wrong.results.front().verified == std::optional<bool>(false));
  CHECK(test::has(wrong.results.front().reason, "first at index 0"));

  r.answers["out"] = std::nullopt;  // not compared: nothing is, and the notes say so
  const TuneResults none = tune_kernel(engine(), r);
  for (const auto& v : none.results) CHECK(!v.verified);
  for (const auto& n : none.notes) CHECK(!test::has(n, "CUDA was started in this process"));  // a second call: on workers too
  CHECK(count(none, VariantStatus::ok) == 4);
  bool said = false;
  for (const auto& n : none.notes) said = said || test::has(n, "no output is compared");
  CHECK(said);
}

TEST_CASE("tune_kernel: without an answer every variant is verified against the first variant's outputs") {
  TuneRequest r = scale2d_request();  // `in` from the declaration's default data
  const TuneResults t = tune_kernel(engine(), r);
  CHECK(count(t, VariantStatus::ok) == 4);
  bool said = false;
  for (const auto& n : t.notes) said = said || test::has(n, "no answer given: verified against the first variant's outputs (scale2d block_size_x=16 block_size_y=1)");
  CHECK(said);
  for (const auto& v : t.results) CHECK(v.verified == std::optional<bool>(true));
}

TEST_CASE("tune_kernel: points: only those run, the others are pruned, constraints still apply") {
  TuneRequest r = scale2d_request(
      "points:\n  - {block_size_x: 64, block_size_y: 1}\n  - {block_size_x: 16, block_size_y: 8}\n");
  const TuneResults t = tune_kernel(engine(), r);
  CHECK(count(t, VariantStatus::ok) == 2);
  CHECK(count(t, VariantStatus::pruned) == 2);
  for (const auto& v : t.results) {
    if (v.status != VariantStatus::pruned) continue;
    CHECK(test::has(v.reason, "not among the given points"));
    CHECK(!v.verified);
  }
  // A point outside the values swept, or naming a parameter no kernel has, is refused before any GPU work.
  CHECK_THROWS_AS(tune_kernel(engine(), scale2d_request("points: [{block_size_x: 32, block_size_y: 1}]\n")), ConfigError);
  CHECK_THROWS_AS(tune_kernel(engine(), scale2d_request("points: [{block_size_z: 32}]\n")), ConfigError);
}

TEST_CASE("tune_kernel: a verify function sees the expected and produced outputs and rejects with its message") {
  const auto in = ramp(kNx * kNy);
  const auto expected = poisoned(kNx * kNy);
  TuneRequest r = scale2d_request();
  r.inputs["in"] = HostView::of(in.data(), in.size());
  r.answers["out"] = HostView::of(expected.data(), expected.size());
  r.verify = [](const std::map<std::string, HostView>& e, const std::map<std::string, HostView>& got,
                std::string& message) {
    const bool shapes = e.count("out") && got.count("out") && got.at("out").size == kNx * kNy &&
                        got.at("out").dtype == DType::float32 && !got.count("in");
    message = shapes ? "the totals differ by 1e9" : "not the outputs expected";
    return false;
  };
  const TuneResults t = tune_kernel(engine(), r);
  CHECK(count(t, VariantStatus::wrong_answer) == 4);
  CHECK(test::has(t.results.front().reason, "the totals differ by 1e9"));

  r.verify = [](const std::map<std::string, HostView>&, const std::map<std::string, HostView>& got, std::string&) {
    float first = 0;
    std::memcpy(&first, got.at("out").data, sizeof first);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &first, sizeof bits);
    return bits == 0xA5A5A5A5u;  // the fake GPU's output, handed over as it is
  };
  CHECK(count(tune_kernel(engine(), r), VariantStatus::ok) == 4);
}

TEST_CASE("tune_kernel: statuses: a broken constraint is pruned, a block the GPU cannot take does not fit") {
  TuneRequest r = scale2d_request();
  r.config = "family: kernel\nkernel: axpy\nsizes: {n: 5000}\ndeclare:\n  sizes: [n]\n  params_as: defines\n"
             "  params:\n    block_size_x: {default: 256, values: [64, 256]}\n"
             "  args:\n    - {name: y, array: float32, length: n, role: inout}\n"
             "    - {name: x, array: float32, length: n, role: in}\n    - {name: a, scalar: float32, value: 2.0}\n"
             "    - {name: n, scalar: int32, value: n}\n"
             "  launch:\n    - {entry: axpy, grid: \"ceil_div(n, block_size_x)\", block: block_size_x}\n"
             "params: {block_size_x: [64, 128, 256, 2048]}\nconstraints: [block_size_x != 128]\n"
             "warmup: 1\nrepeats: 3\nrecheck: {top: 2, repeats: 3}\n";
  const auto y = ramp(5000);
  r.inputs["y"] = HostView::of(y.data(), y.size());
  r.answers["y"] = HostView::of(y.data(), y.size());  // in place: the fake GPU leaves y as it was
  const TuneResults t = tune_kernel(engine(), r);
  REQUIRE(t.results.size() == 4);
  CHECK(count(t, VariantStatus::ok) == 2);
  CHECK(count(t, VariantStatus::pruned) == 1);
  CHECK(count(t, VariantStatus::does_not_fit) == 1);
  for (const auto& v : t.results) {
    CAPTURE(v.reason);
    if (v.params.at("block_size_x") == 2048) CHECK(v.status == VariantStatus::does_not_fit);
    if (v.params.at("block_size_x") == 128) CHECK(test::has(v.reason, "constraint"));
  }
}

TEST_CASE("tune_kernel: what the request cannot be is refused by name before the sweep") {
  const auto in = ramp(kNx * kNy);
  TuneRequest r = scale2d_request();
  r.inputs["out"] = HostView::of(in.data(), in.size());
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("'out' is not an input array of scale2d"), ConfigError);
  r = scale2d_request();
  r.answers["in"] = HostView::of(in.data(), in.size());
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("'in' is not an output array"), ConfigError);
  r = scale2d_request();
  r.inputs["in"] = HostView::of(in.data(), 7);
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("holds 7 float32 elements; it takes 3000"), ConfigError);
  r = scale2d_request();
  r.config += "bogus: 1\n";
  CHECK_THROWS_AS(tune_kernel(engine(), r), ConfigError);
}

TEST_CASE("tune_kernel: constant memory from the caller alone, the declaration giving none (cmem_args)") {
  // conv_cmem's d_filter redeclared without data, as gpuk.kernel_tuner declares a cmem_args array:
  // the caller's bytes are its value; without them the config is refused, naming the constant.
  const std::string config =
      "family: kernel\nkernels: [conv_cmem]\nsizes: {w: 61, h: 17}\n"
      "params: {block_size_x: [16, 32], block_size_y: [4]}\nwarmup: 1\nrepeats: 3\n"
      "declare: {constants: [{name: d_filter, array: float32, length: 25}]}\n";
  const std::vector<float> filter = ramp(25);
  TuneRequest r;
  r.config = config;
  r.constants["d_filter"] = HostView::of(filter.data(), filter.size());
  const TuneResults t = tune_kernel(engine(), r);
  CHECK(t.results.size() == 2);
  CHECK(count(t, VariantStatus::ok) == 2);
  r.constants.clear();
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("constant d_filter"), ConfigError);
  r.constants["d_filter"] = HostView::of(filter.data(), 24);
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("d_filter"), ConfigError);
  r.constants.clear();
  r.constants["d_filtre"] = HostView::of(filter.data(), filter.size());
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("'d_filtre'"), ConfigError);  // a name the kernel does not have
}

// Last: after it, CUDA runs in this test process.
TEST_CASE("tune_kernel where this process started CUDA: the sweep runs here, and the notes say so") {
  (void)engine().device();  // opens the GPU: cuInit in this process
  const auto in = ramp(kNx * kNy);
  const auto expected = poisoned(kNx * kNy);
  TuneRequest r = scale2d_request();
  r.inputs["in"] = HostView::of(in.data(), in.size());
  r.answers["out"] = HostView::of(expected.data(), expected.size());
  const TuneResults t = tune_kernel(engine(), r);
  CHECK(count(t, VariantStatus::ok) == 4);
  bool said = false;
  for (const auto& n : t.notes) said = said || test::has(n, "CUDA was started in this process before the sweep");
  CHECK(said);
  r.devices = {0, 0};
  CHECK_THROWS_WITH_AS(tune_kernel(engine(), r), doctest::Contains("sweeps on the Engine's GPU only"), ConfigError);
}
