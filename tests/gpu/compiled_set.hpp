// The kernels a GPU test program runs, compiled up front on every core: each kernel file's name
// expressions cut into NVRTC programs of a few names each, the programs compiled at once (one
// program of every instantiation of a file took most of a minute on its own), then each run
// given the program that holds its kernels.
#pragma once
#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jit/jit.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

namespace gpuk::test {

class CompiledSet {
 public:
  // Variants of `file`, each the name expressions of its launches (kept in one program, so that
  // a run finds every kernel it launches there), in programs of at most `per_program` variants. A
  // variant added before is skipped.
  void add(const std::shared_ptr<const KernelFile>& file, const std::vector<std::vector<std::string>>& variants,
           std::size_t per_program) {
    std::vector<std::vector<std::string>> fresh;
    for (const auto& v : variants) {
      bool known = !v.empty();
      for (const auto& n : v) known = known && index_.count(key(*file, n));
      if (!known && std::find(fresh.begin(), fresh.end(), v) == fresh.end()) fresh.push_back(v);
    }
    for (std::size_t i = 0; i < fresh.size(); i += per_program) {
      Program p{file, {}, {}};
      for (std::size_t k = i; k < std::min(fresh.size(), i + per_program); ++k)
        for (const auto& n : fresh[k])
          if (std::find(p.names.begin(), p.names.end(), n) == p.names.end()) p.names.push_back(n);
      for (const auto& n : p.names) index_[key(*file, n)] = programs_.size();
      programs_.push_back(std::move(p));
    }
  }

  // Every variant the family can instantiate from `file` (its default parameters), as add().
  void add_every_variant(const FamilyPlugin& plugin, const std::shared_ptr<const KernelFile>& file,
                         std::size_t per_program) {
    std::vector<std::vector<std::string>> variants;
    for (const auto& args : plugin.all_template_args(*file)) {
      const Variant v(file, args, {});
      variants.emplace_back();
      for (const auto& l : file->launches) variants.back().push_back(v.name_expression(l));
    }
    add(file, variants, per_program);
  }

  // Every program at once, as many at a time as there are hardware threads. The first error is
  // rethrown after the others finish.
  void compile(const Jit& jit) {
    std::atomic<std::size_t> next{0};
    std::exception_ptr error;
    std::mutex m;
    const std::size_t threads =
        std::min<std::size_t>(programs_.size(), std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&] {
        for (std::size_t i; (i = next++) < programs_.size();) {
          try {
            programs_[i].compiled = jit.compile(*programs_[i].file, programs_[i].names);
          } catch (...) {
            const std::lock_guard lock(m);
            if (!error) error = std::current_exception();
          }
        }
      });
    for (auto& t : pool) t.join();
    if (error) std::rethrow_exception(error);
  }

  // The program that holds `name` of `file` (and the other launches of its variant).
  const CompiledKernels& holding(const KernelFile& file, const std::string& name) const {
    const auto it = index_.find(key(file, name));
    if (it == index_.end()) throw std::logic_error("the test compiled no program with " + name + " of " + file.name);
    return programs_[it->second].compiled;
  }

  std::size_t programs() const { return programs_.size(); }

 private:
  struct Program {
    std::shared_ptr<const KernelFile> file;
    std::vector<std::string> names;
    CompiledKernels compiled;
  };
  static std::string key(const KernelFile& file, const std::string& name) { return file.name + "\n" + name; }
  std::vector<Program> programs_;
  std::map<std::string, std::size_t> index_;
};

}  // namespace gpuk::test
