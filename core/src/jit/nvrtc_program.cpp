// One NVRTC program as plain data (jit/nvrtc_program.hpp).
#include "jit/nvrtc_program.hpp"

#include <nvrtc.h>

#include <cstdint>
#include <cstring>

namespace gpuk {

NvrtcOutcome run_nvrtc(const NvrtcRequest& request, const std::string* pch_dir) {
  NvrtcOutcome out;
  const auto failed = [&out](const char* call, nvrtcResult r) {
    out.error = std::string(call) + " failed: " + nvrtcGetErrorString(r);
    return out;
  };
  nvrtcProgram program = nullptr;
  nvrtcResult r = nvrtcCreateProgram(&program, request.source.c_str(), request.name.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return failed("nvrtcCreateProgram", r);
  struct Owner {
    nvrtcProgram& p;
    ~Owner() { nvrtcDestroyProgram(&p); }
  } owner{program};
  for (const auto& e : request.entries)
    if ((r = nvrtcAddNameExpression(program, e.c_str())) != NVRTC_SUCCESS) return failed("nvrtcAddNameExpression", r);
  std::vector<std::string> options = request.options;
  const bool pch = request.pch && pch_dir != nullptr;
  if (pch)
    for (const char* o : {"--pch", "--pch-messages=false", "--pch-verbose=false"}) options.emplace_back(o);
  if (pch) options.push_back("--pch-dir=" + *pch_dir);
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult compiled = nvrtcCompileProgram(program, static_cast<int>(argv.size()), argv.data());
  if (pch && nvrtcGetPCHCreateStatus(program) == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) {
    std::size_t need = 0;
    if (nvrtcGetPCHHeapSizeRequired(program, &need) == NVRTC_SUCCESS && need > 0) nvrtcSetPCHHeapSize(need);
  }
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  out.log.assign(log_size, '\0');
  if (log_size) nvrtcGetProgramLog(program, out.log.data());
  while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();
  if (compiled != NVRTC_SUCCESS) return out;
  std::size_t size = 0;
  if ((r = nvrtcGetCUBINSize(program, &size)) != NVRTC_SUCCESS) return failed("nvrtcGetCUBINSize", r);
  out.cubin.resize(size);
  if (size && (r = nvrtcGetCUBIN(program, out.cubin.data())) != NVRTC_SUCCESS) return failed("nvrtcGetCUBIN", r);
  for (const auto& e : request.entries) {
    const char* lowered = nullptr;
    if ((r = nvrtcGetLoweredName(program, e.c_str(), &lowered)) != NVRTC_SUCCESS) return failed("nvrtcGetLoweredName", r);
    out.lowered.emplace_back(lowered);
  }
  out.compiled = true;
  return out;
}

namespace {

class Writer {
 public:
  void u64(std::uint64_t v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void text(std::string_view s) {
    u64(s.size());
    bytes.append(s);
  }
  void texts(const std::vector<std::string>& v) {
    u64(v.size());
    for (const auto& s : v) text(s);
  }
  std::string bytes;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  bool u64(std::uint64_t& v) {
    if (b_.size() - at_ < sizeof v) return false;
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  template <class S>
  bool text(S& s) {
    std::uint64_t n = 0;
    if (!u64(n) || b_.size() - at_ < n) return false;
    s.assign(b_.data() + at_, b_.data() + at_ + n);
    at_ += n;
    return true;
  }
  bool texts(std::vector<std::string>& v) {
    std::uint64_t n = 0;
    if (!u64(n) || n > b_.size()) return false;
    v.resize(n);
    for (auto& s : v)
      if (!text(s)) return false;
    return true;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  const std::string& b_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode(const NvrtcRequest& q) {
  Writer w;
  w.text(q.source);
  w.text(q.name);
  w.texts(q.entries);
  w.texts(q.options);
  w.u64(q.pch ? 1 : 0);
  w.text(q.cwd);
  return std::move(w.bytes);
}

std::string encode(const NvrtcOutcome& o) {
  Writer w;
  w.u64(o.compiled ? 1 : 0);
  w.text(o.log);
  w.text(o.error);
  w.text(std::string_view(o.cubin.data(), o.cubin.size()));
  w.texts(o.lowered);
  return std::move(w.bytes);
}

bool decode(const std::string& bytes, NvrtcRequest& q) {
  Reader r(bytes);
  std::uint64_t pch = 0;
  if (!(r.text(q.source) && r.text(q.name) && r.texts(q.entries) && r.texts(q.options) && r.u64(pch) && r.text(q.cwd))) return false;
  q.pch = pch == 1;
  return r.done();
}

bool decode(const std::string& bytes, NvrtcOutcome& o) {
  Reader r(bytes);
  std::uint64_t compiled = 0;
  if (!r.u64(compiled) || !r.text(o.log) || !r.text(o.error) || !r.text(o.cubin) || !r.texts(o.lowered)) return false;
  o.compiled = compiled == 1;
  return r.done();
}

}  // namespace gpuk
