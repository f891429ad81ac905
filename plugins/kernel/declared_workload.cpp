// A declared kernel's run on the host side: each array's data uploaded, outputs poisoned and
// in-out arrays restored before every run, the outputs compared with the reference's
// (data/compare_arrays.hpp; a sweep's outputs found on the GPU to hold the verified answer's
// bytes left out: known_good), and the result written as .npy.
#include <iomanip>
#include <sstream>

#include "data/compare_arrays.hpp"
#include "declared_workload.hpp"
#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"

namespace gpuk::declared {

namespace {

struct Array {
  const DeclaredArg* arg = nullptr;
  std::uint64_t length = 0;
  std::shared_ptr<const HostArray> input;     // in, inout
  DeviceBuffer device, pristine;              // pristine: an in-out array's input, for restoring
  HostArray got;                              // out, inout: downloaded
  std::shared_ptr<const HostArray> expected;  // out, inout: the reference's
  bool output() const { return arg->role != ArgRole::in; }
};

class DeclaredWorkload final : public Workload {
 public:
  DeclaredWorkload(const Problem& problem, InputView input) : problem_(problem), input_(std::move(input)) {
    for (const DeclaredArg* a : problem.declaration->arrays()) {
      Array x;
      x.arg = a;
      x.length = array_length(problem, *a);
      if (a->role != ArgRole::out) {
        const auto it = input_.arrays.find(a->name);
        if (it == input_.arrays.end()) throw ConfigError("no data for the input array " + a->name);
        x.input = it->second;
      }
      if (const auto it = input_.expected.find(a->name); it != input_.expected.end()) x.expected = it->second;
      arrays_.push_back(std::move(x));
    }
  }

  std::uint64_t bytes_moved() const override {
    const Declaration& d = *problem_.declaration;
    if (d.bytes) return static_cast<std::uint64_t>(eval_sizes(*d.bytes, problem_.sizes));
    std::uint64_t bytes = 0;
    for (const Array& x : arrays_) bytes += x.length * dtype_size(x.arg->dtype) * (x.arg->role == ArgRole::inout ? 2 : 1);
    return bytes;
  }

  void upload(const Stream& stream) override {
    for (Array& x : arrays_) {
      const std::size_t bytes = std::max<std::size_t>(1, x.length * dtype_size(x.arg->dtype));
      x.device = DeviceBuffer(bytes);
      if (x.input) x.device.upload(x.input->data(), x.input->bytes(), stream);
      if (x.arg->role == ArgRole::inout) {
        x.pristine = DeviceBuffer(bytes);
        x.pristine.upload(x.input->data(), x.input->bytes(), stream);
      }
    }
  }

  std::vector<CUdeviceptr> device_arrays() const override {
    std::vector<CUdeviceptr> out;
    for (const Array& x : arrays_) out.push_back(x.device.get());
    return out;
  }

  // Before every run: outputs poisoned, in-out arrays back to their input (those a sweep found
  // left as they were aside: leave_unrestored).
  void poison(const Stream& stream) override {
    for (std::size_t i = 0; i < arrays_.size(); ++i) {
      Array& x = arrays_[i];
      if (x.arg->role == ArgRole::out) x.device.fill_bytes(kPoisonByte, stream);
      if (x.arg->role == ArgRole::inout && !(i < unrestored_.size() && unrestored_[i]))
        GPUK_CU(driver().cuMemcpyDtoDAsync(x.device.get(), x.pristine.get(), x.device.bytes(), stream.get()),
                "restoring " + x.arg->name);
    }
  }

  void known_good(const std::vector<bool>& arrays) override { known_ = arrays; }

  std::vector<CUdeviceptr> restore_sources() const override {
    std::vector<CUdeviceptr> out;
    for (const Array& x : arrays_) out.push_back(x.arg->role == ArgRole::inout ? x.pristine.get() : 0);
    return out;
  }
  void leave_unrestored(const std::vector<bool>& arrays) override { unrestored_ = arrays; }

  void download(const Stream& stream) override {
    for (std::size_t i = 0; i < arrays_.size(); ++i) {
      Array& x = arrays_[i];
      if (!x.output() || known(i)) continue;
      if (x.got.size() != x.length) x.got = HostArray(x.arg->dtype, x.length);
      x.device.download(x.got.data(), x.got.bytes(), stream);
    }
    stream.synchronize();
  }

  // The expected outputs come from .npy files or a reference kernel (keep_as_reference): no CPU work.
  std::vector<CpuTiming> cpu_reference(int) override { return {}; }

  void keep_as_reference() override {
    for (Array& x : arrays_) {
      if (!x.output()) continue;
      auto copy = std::make_shared<HostArray>(x.arg->dtype, x.length);
      std::memcpy(copy->data(), x.got.data(), x.got.bytes());
      x.expected = std::move(copy);
    }
  }

  Verification verify() const override {
    Verification v{true, ""};
    std::string passed;
    for (std::size_t i = 0; i < arrays_.size(); ++i) {
      const Array& x = arrays_[i];
      if (!x.output()) continue;
      const auto rule = problem_.compare.find(x.arg->name);
      if (rule != problem_.compare.end() && rule->second.skip) continue;
      if (known(i)) {
        passed += (passed.empty() ? "" : "; ") + x.arg->name + ": the bytes of the verified answer (compared on the GPU)";
        continue;
      }
      if (!x.expected) {
        v.passed = false;
        v.detail = x.arg->name + ": no expected value (the reference gives none for it; compare: {" + x.arg->name +
                   ": {skip: true}} leaves it out)";
        return v;
      }
      const ArrayComparison c =
          compare_arrays(x.got, *x.expected, rule == problem_.compare.end() ? CompareRule{} : rule->second);
      if (!c.passed) return {false, "mismatch: " + c.text(x.arg->name)};
      passed += (passed.empty() ? "" : "; ") + c.text(x.arg->name);
    }
    v.detail = passed.empty() ? "every output is left uncompared (skip: true)" : passed;
    return v;
  }

  // verify() is compare_arrays per output (sum rules aside): the same on the device.
  std::optional<std::vector<ExpectedOutput>> expected_outputs() const override {
    std::vector<ExpectedOutput> out;
    for (std::size_t i = 0; i < arrays_.size(); ++i) {
      const Array& x = arrays_[i];
      if (!x.output()) continue;
      const auto rule = problem_.compare.find(x.arg->name);
      const CompareRule r = rule == problem_.compare.end() ? CompareRule{} : rule->second;
      if (r.skip) continue;
      if (r.sum || !x.expected || x.expected->size() != x.length || x.expected->dtype() != x.arg->dtype)
        return std::nullopt;
      out.push_back({i, x.arg->name, x.arg->dtype, x.length, x.expected->data(), r});
    }
    return out;
  }

  std::optional<BaselineTiming> library_baseline(int, int, const Stream&) override { return std::nullopt; }

  std::vector<std::pair<std::string, std::string>> result() const override {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Array& x : arrays_) {
      if (!x.output() || x.got.size() == 0) continue;
      std::ostringstream text;
      text << x.length << " " << dtype_name(x.arg->dtype) << ":";
      visit_dtype(x.arg->dtype, [&](auto zero) {
        using T = decltype(zero);
        const auto values = x.got.as<T>();
        for (std::size_t i = 0; i < std::min<std::size_t>(4, values.size()); ++i) text << " " << +values[i];
      });
      if (x.length > 4) text << " ...";
      out.emplace_back(x.arg->name, text.str());
    }
    return out;
  }

  // One output: `path`; several: `path` with _NAME before its extension, one file each.
  void write_result(const std::filesystem::path& path) const override {
    std::size_t outputs = 0;
    for (const Array& x : arrays_) outputs += x.output() ? 1 : 0;
    for (const Array& x : arrays_) {
      if (!x.output()) continue;
      std::filesystem::path p = path;
      if (outputs > 1) p.replace_filename(path.stem().string() + "_" + x.arg->name + path.extension().string());
      write_npy(p, x.got);
    }
  }

 private:
  bool known(std::size_t i) const { return i < known_.size() && known_[i]; }

  Problem problem_;
  InputView input_;
  std::vector<Array> arrays_;
  std::vector<bool> known_;  // Workload::known_good: outputs neither downloaded nor compared
  std::vector<bool> unrestored_;  // Workload::leave_unrestored: in-out arrays poison() leaves
};

}  // namespace

std::unique_ptr<Workload> make_declared_workload(const Problem& problem, InputView input) {
  return std::make_unique<DeclaredWorkload>(problem, std::move(input));
}

}  // namespace gpuk::declared
