// The journal of `gpuk tune`: one JSON line per measured point, appended as it is measured.
#include "tune/report/journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "device/device.hpp"
#include "gpuk/error.hpp"
#include "tune/measure/energy.hpp"
#include "tune/report/outcome_json.hpp"

namespace gpuk {

namespace fs = std::filesystem;

std::string content_hash(std::string_view bytes) {
  std::uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;
  for (unsigned char c : bytes) {
    a = (a ^ c) * 0x100000001b3ull;
    b = (b + c + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
    b ^= b >> 31;
  }
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return out;
}

std::string gpu_identity(const DeviceInfo& info) {
  // From the description, not the driver: a sweep over several GPUs keys its journal in the
  // process that never touches CUDA (tune/workers/pool.hpp).
  if (!info.pci_bus_id.empty()) return info.name + " " + info.pci_bus_id;
  return info.name + " #" + std::to_string(info.ordinal);
}

fs::path journal_path(const fs::path& dir, const TuneSpec& t, const std::string& gpu, bool flushed) {
  const RunSpec& r = t.run;
  std::ostringstream key;
  key.precision(17);
  const auto file_key = [&key](const fs::path& file) {
    std::error_code ec;
    key << " file " << file.string() << " " << fs::file_size(file, ec) << " "
        << fs::last_write_time(file, ec).time_since_epoch().count();
  };
  const auto data_key = [&](const DataSpec& d, DType dtype) {
    const ValueRange range = uniform_range(d, dtype);  // the range drawn from, stated or the dtype's default
    key << generator_name(d.generator) << " " << range.low << " " << range.high << " " << d.mean << " " << d.stddev
        << " " << d.distinct << " " << d.seed << " nan " << d.nan.count;
    for (auto i : d.nan.at) key << "," << i;
    if (d.file) file_key(*d.file);
    if (d.raw_dtype) key << " raw " << dtype_name(*d.raw_dtype);
  };
  key << "gpuk-tune-journal 1\ngpu " << gpu << "\nproblem " << r.family << " " << r.operation;
  for (const auto& [k, v] : r.options) key << " " << k << "=" << v;
  key << "\ndtype " << dtype_name(r.dtype) << "\nsize " << r.size << "\ndata ";
  data_key(r.data, r.dtype);
  // A declared kernel's sizes, data per array, reference and comparison: another of any is
  // another sweep (its verdicts were made against another answer or rule).
  for (const auto& [name, v] : r.sizes) key << "\nsize " << name << " " << v;
  for (const auto& [name, d] : r.arg_data) {
    key << "\ndata " << name << " ";
    data_key(d, r.dtype);
  }
  if (!r.reference_kernel.empty()) {
    key << "\nreference " << r.reference_kernel;
    for (const auto& [k, v] : r.reference_params) key << " " << k << "=" << v;
  }
  for (const auto& [name, file] : r.expected) {
    key << "\nexpected " << name;
    file_key(file);
  }
  for (const auto& [name, c] : r.compare) {
    key << "\ncompare " << name << " skip " << c.skip << " sum " << c.sum;
    if (c.atol) key << " atol " << *c.atol;
    if (c.rtol) key << " rtol " << *c.rtol;
    if (c.ulps) key << " ulps " << *c.ulps;
  }
  // A declared kernel's data from memory (the library's tuning call): its bytes.
  for (const auto& [name, a] : r.input_arrays)
    key << "\ninput " << name << " " << dtype_name(a->dtype()) << " " << a->size() << " "
        << content_hash({static_cast<const char*>(a->data()), a->bytes()});
  for (const auto& [name, a] : r.expected_arrays)
    key << "\nanswer " << name << " " << dtype_name(a->dtype()) << " " << a->size() << " "
        << content_hash({static_cast<const char*>(a->data()), a->bytes()});
  if (r.constants)  // a declared kernel's __constant__ data
    for (const auto& [name, a] : *r.constants)
      key << "\nconstant " << name << " " << dtype_name(a->dtype()) << " " << a->size() << " "
          << content_hash({static_cast<const char*>(a->data()), a->bytes()});
  if (r.output_check) key << "\nverified by the caller's function";
  key << "\nwarmup " << r.warmup << "\nrepeats ";
  if (t.auto_repeats) key << "auto " << t.auto_bound << " " << t.auto_seconds;
  else key << r.repeats;
  key << "\nflush " << flushed << "\n";
  return dir / (content_hash(key.str()) + ".jsonl");
}

std::string make_run_id() {
  std::random_device device;
  const auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return content_hash(std::to_string(::getpid()) + " " + std::to_string(now) + " " + std::to_string(device()))
      .substr(0, 16);
}

TuneJournal::TuneJournal(fs::path path, std::string run_id) : path_(std::move(path)), run_(std::move(run_id)) {}

namespace {


}  // namespace

std::vector<Evaluation> TuneJournal::read(const Space& space, bool fresh) {
  damaged_ = 0;
  std::ifstream in(path_);
  if (!in) return {};
  // Per kernel name: the file's index in the space and its content hash.
  std::map<std::string, std::pair<std::size_t, std::string>> files;
  for (std::size_t f = 0; f < space.files().size(); ++f)
    files[space.files()[f].file->name] = {f, content_hash(space.files()[f].file->source)};
  std::map<Candidate, Evaluation> newest;
  std::vector<Candidate> order;  // first appearance, so the reused points keep their order
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      const auto v = nlohmann::json::parse(line);
      const bool mine = v.at("run").get<std::string>() == run_;
      if (fresh && !mine) continue;
      const auto it = files.find(v.at("kernel").get<std::string>());
      if (it == files.end() || v.at("source").get<std::string>() != it->second.second) continue;
      const SpaceFile& sf = space.files()[it->second.first];
      const auto params = v.at("params").get<std::map<std::string, std::int64_t>>();
      if (params.size() != sf.file->params.size()) continue;
      Evaluation e;
      e.candidate.file = it->second.first;
      bool inside = true;
      for (std::size_t i = 0; i < sf.file->params.size() && inside; ++i) {
        const auto p = params.find(sf.file->params[i].name);
        inside = p != params.end() && std::find(sf.values[i].begin(), sf.values[i].end(), p->second) != sf.values[i].end();
        if (inside) e.candidate.values.push_back(p->second);
      }
      if (!inside) continue;
      e.label = space.label(e.candidate);
      e.params = space.params(e.candidate);
      e.outcome = outcome_from_json(v);
      e.at_seconds = v.at("at_seconds").get<double>();
      e.time = Spread::of(e.outcome.samples);
      e.reused = !mine;
      if (!newest.count(e.candidate)) order.push_back(e.candidate);
      newest[e.candidate] = std::move(e);
    } catch (const std::exception&) {
      ++damaged_;  // torn by a writer that was killed, or edited by hand: measured again
    }
  }
  std::vector<Evaluation> out;
  for (const auto& c : order) out.push_back(std::move(newest[c]));
  return out;
}

void TuneJournal::append(const Space& space, const Evaluation& e) {
  const auto& file = *space.files().at(e.candidate.file).file;
  nlohmann::json j = outcome_to_json(e.outcome);  // the outcome's fields, and the point's
  j["run"] = run_;
  j["kernel"] = file.name;
  j["source"] = content_hash(file.source);
  j["params"] = e.params;
  j["at_seconds"] = e.at_seconds;
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::error_code ec;
  fs::create_directories(path_.parent_path(), ec);
  const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path_.string() + ": cannot open the journal of the sweep: " + std::strerror(errno));
  // Every line starts on a line of its own: another writer of the same journal (two sweeps of
  // one problem) killed mid-line at any moment leaves no newline, and the next line written
  // would have joined its torn one and been lost with it. (The tail was checked once, at the
  // first append: a writer killed after that still cost a line.) Readers skip empty lines.
  line = "\n" + line;
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw Error(path_.string() + ": cannot append to the journal of the sweep: " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

std::unique_ptr<TuneJournal> attach_journal(const fs::path& dir, const std::string& run_id, bool fresh,
                                            const TuneSpec& t, const DeviceInfo& gpu, bool flushed,
                                            const Space& space, TuneOptions& options) {
  if (dir.empty()) return nullptr;
  auto journal = std::make_unique<TuneJournal>(journal_path(dir, t, gpu_identity(gpu), flushed), run_id);
  for (auto& e : journal->read(space, fresh)) options.prior.push_back(std::move(e));
  options.on_measured = [j = journal.get(), &space](const Evaluation& e) { j->append(space, e); };
  return journal;
}

}  // namespace gpuk
