// A declared kernel's outputs checked by the caller's function (run/output_check.hpp).
#include "run/output_check.hpp"

#include <cstring>
#include <exception>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "kernel/declaration.hpp"

namespace gpuk {

namespace {

class CheckedWorkload final : public Workload {
 public:
  CheckedWorkload(const RunSpec& spec, std::unique_ptr<Workload> inner)
      : inner_(std::move(inner)), check_(spec.output_check) {
    const auto arrays = spec.declared->declaration->arrays();
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      const DeclaredArg& a = *arrays[i];
      if (a.role == ArgRole::in) continue;
      Output o;
      o.name = a.name;
      o.index = i;
      o.got = HostArray(a.dtype, static_cast<std::uint64_t>(eval_sizes(a.length, spec.sizes)));
      if (const auto it = spec.expected_arrays.find(a.name); it != spec.expected_arrays.end()) o.expected = it->second;
      outputs_.push_back(std::move(o));
    }
  }

  std::uint64_t bytes_moved() const override { return inner_->bytes_moved(); }
  void upload(const Stream& stream) override { inner_->upload(stream); }
  std::vector<CUdeviceptr> device_arrays() const override { return inner_->device_arrays(); }
  const void* scalar() const override { return inner_->scalar(); }
  void poison(const Stream& stream) override { inner_->poison(stream); }
  std::vector<CUdeviceptr> restore_sources() const override { return inner_->restore_sources(); }
  void leave_unrestored(const std::vector<bool>& arrays) override { inner_->leave_unrestored(arrays); }
  // The family's download, then each output's bytes once more into this wrapper's own arrays.
  void download(const Stream& stream) override {
    inner_->download(stream);
    const std::vector<CUdeviceptr> device = inner_->device_arrays();
    for (Output& o : outputs_)
      if (o.got.bytes() > 0)
        GPUK_CU(driver().cuMemcpyDtoHAsync(o.got.data(), device.at(o.index), o.got.bytes(), stream.get()),
                "downloading " + o.name + " for the verify function");
    stream.synchronize();
  }
  std::vector<CpuTiming> cpu_reference(int repeats) override { return inner_->cpu_reference(repeats); }

  Verification verify() const override {
    std::map<std::string, const HostArray*> expected, got;
    for (const Output& o : outputs_) {
      got[o.name] = &o.got;
      if (o.expected) expected[o.name] = o.expected.get();
    }
    Verification v;
    std::string message;
    try {
      v.passed = check_(expected, got, message);
    } catch (const std::exception& e) {
      return {false, std::string("the verify function failed: ") + e.what()};
    }
    v.detail = !message.empty() ? message : v.passed ? "passed the verify function" : "rejected by the verify function";
    return v;
  }

  std::optional<BaselineTiming> library_baseline(int warmup, int repeats, const Stream& stream) override {
    return inner_->library_baseline(warmup, repeats, stream);
  }
  std::vector<std::pair<std::string, std::string>> result() const override { return inner_->result(); }
  void write_result(const std::filesystem::path& path) const override { inner_->write_result(path); }

  // A reference variant's outputs: the expected ones of every output the caller gave none for.
  void keep_as_reference() override {
    inner_->keep_as_reference();
    for (Output& o : outputs_) {
      if (o.expected) continue;
      auto copy = std::make_shared<HostArray>(o.got.dtype(), o.got.size());
      if (o.got.bytes() > 0) std::memcpy(copy->data(), o.got.data(), o.got.bytes());
      o.expected = std::move(copy);
    }
  }

 private:
  struct Output {
    std::string name;
    std::size_t index = 0;  // in device_arrays()
    HostArray got;
    std::shared_ptr<const HostArray> expected;
  };
  std::unique_ptr<Workload> inner_;
  OutputCheck check_;
  std::vector<Output> outputs_;
};

}  // namespace

std::unique_ptr<Workload> checked_by(const RunSpec& spec, std::unique_ptr<Workload> inner) {
  if (!spec.declared) throw ConfigError("a verify function checks a declared kernel's outputs only");
  return std::make_unique<CheckedWorkload>(spec, std::move(inner));
}

}  // namespace gpuk
