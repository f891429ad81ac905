// The sort family's top-k Workload (topk_workload.hpp).
#include "topk_workload.hpp"

#include <chrono>
#include <sstream>

#include "device/host_memory.hpp"
#include "host_topk.hpp"
#include "util/host.hpp"

namespace gpuk::sort {
namespace {

template <class K> class TopKWorkload final : public Workload {
 public:
  TopKWorkload(InputView keys, const KeyOrder& order, const TopKSpec& spec)
      : keys_(std::move(keys)), order_(order), spec_(spec), out_(spec.rows * spec.k) {
    check_topk(spec_, keys_.size());
  }

  // The keys read once; the k keys and indices of each row written once.
  std::uint64_t bytes_moved() const override { return keys_.bytes() + out_ * (sizeof(K) + 8); }

  void upload(const Stream& stream) override {
    d_keys_ = DeviceBuffer(keys_.bytes());
    d_keys_.upload(keys_.data(), keys_.bytes(), stream);
    d_values_ = DeviceBuffer(out_ * sizeof(K));
    d_indices_ = DeviceBuffer(out_ * 8);
    got_values_ = HostArray(keys_.dtype(), out_);
    got_indices_ = HostArray(DType::int64, out_);
  }

  std::vector<CUdeviceptr> device_arrays() const override { return {d_keys_.get(), d_values_.get(), d_indices_.get()}; }

  void poison(const Stream& stream) override {
    d_values_.fill_bytes(kPoisonByte, stream);
    d_indices_.fill_bytes(kPoisonByte, stream);
  }

  void download(const Stream& stream) override {
    d_values_.download(got_values_.data(), got_values_.bytes(), stream);
    d_indices_.download(got_indices_.data(), got_indices_.bytes(), stream);
    stream.synchronize();
  }

  std::vector<CpuTiming> cpu_reference(int repeats) override {
    const int threads = cpu_threads();
    CpuTiming t{"nth_element per row, " + std::to_string(threads) + " threads", {}};
    ref_values_.assign(out_, K{});
    ref_indices_.assign(out_, 0);
    for (int r = 0; r < std::max(1, repeats); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      topk_on_host<K>(keys_.as<K>(), spec_.rows, spec_.k, order_, spec_.sorted, ref_values_.data(),
                      ref_indices_.data(), static_cast<unsigned>(threads));
      t.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    reference_ready_ = true;
    return {t};
  }

  // Every value bit for bit and every index.
  Verification verify() const override {
    if (!reference_ready_) return {false, "no CPU reference was computed"};
    const auto values = got_values_.as<K>();
    const auto indices = got_indices_.as<std::int64_t>();
    std::uint64_t wrong = 0, first = 0;
    for (std::uint64_t i = 0; i < out_; ++i)
      if (!same_bits(values[i], ref_values_[i]) || indices[i] != ref_indices_[i]) {
        if (wrong++ == 0) first = i;
      }
    if (wrong == 0)
      return {true, std::to_string(spec_.rows) + " x " + std::to_string(spec_.k) +
                        " keys and indices equal the CPU top-k, element by element"};
    std::ostringstream out;
    out << "mismatch: " << wrong << " of " << out_ << " differ, the first at row " << first / spec_.k << " item "
        << first % spec_.k << " (got " << format_value(values[first]) << " at " << indices[first] << ", expected "
        << format_value(ref_values_[first]) << " at " << ref_indices_[first] << ")";
    return {false, out.str()};
  }

  std::optional<BaselineTiming> library_baseline(int, int, const Stream&) override { return std::nullopt; }

  std::vector<std::pair<std::string, std::string>> result() const override {
    if (got_values_.size() == 0) return {};
    return {{"first", format_value(got_values_.as<K>().front())},
            {"first_index", std::to_string(got_indices_.as<std::int64_t>().front())},
            {"last", format_value(got_values_.as<K>().back())}};
  }

  void write_result(const std::filesystem::path& path) const override {
    write_npy(path, got_values_);
    std::filesystem::path indices = path;
    indices.replace_filename(path.stem().string() + "_indices.npy");
    write_npy(indices, got_indices_);
  }

 private:
  InputView keys_;
  KeyOrder order_;
  TopKSpec spec_;
  std::uint64_t out_;
  DeviceBuffer d_keys_, d_values_, d_indices_;
  HostArray got_values_, got_indices_;
  std::vector<K> ref_values_;
  std::vector<std::int64_t> ref_indices_;
  bool reference_ready_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_topk_workload(InputView keys, const KeyOrder& order, const TopKSpec& spec) {
  return visit_dtype(keys.dtype(), [&](auto zero) -> std::unique_ptr<Workload> {
    return std::make_unique<TopKWorkload<decltype(zero)>>(keys, order, spec);
  });
}

}  // namespace gpuk::sort
