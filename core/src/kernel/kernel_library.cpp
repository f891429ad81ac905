// The kernel files gpuk can see: every directory's files read once, a later directory's file
// shadowing a same-named one of the same family.
#include <algorithm>

#include "gpuk/error.hpp"
#include "kernel/kernel_file.hpp"
#include "util/install_dirs.hpp"
#include "util/safe_dirs.hpp"
#include "util/text.hpp"

namespace gpuk {

namespace fs = std::filesystem;

KernelLibrary::KernelLibrary(std::vector<fs::path> dirs) : dirs_(std::move(dirs)) {
  const std::vector<fs::path> includes = include_dirs();
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      errors_.push_back(dir.string() + (fs::exists(dir, ec)
                                            ? ": not a directory; --kernels and $GPUK_KERNELS name directories"
                                            : ": kernel directory does not exist"));
      continue;
    }
    // Its kernels run on your GPU, as you.
    refuse_tree_if_writable_by_others(dir, "kernel directory", origin_of(dir, builtin_kernel_dir()));
    std::vector<fs::path> paths;
    // Every query takes an error_code: a link loop (or a file gone mid-walk) is an entry to skip
    // with a note, not a filesystem_error that ends gpuk.
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      std::error_code type_ec;
      const fs::file_type type = it->status(type_ec).type();
      if (type_ec && it->path().extension() == ".cu") {
        errors_.push_back(it->path().string() + ": cannot read kernel file (" + type_ec.message() + ")");
        continue;
      }
      if (type == fs::file_type::directory && it->path().filename() == "include") {
        it.disable_recursion_pending();
        continue;
      }
      if (type == fs::file_type::regular && it->path().extension() == ".cu") paths.push_back(it->path());
    }
    if (ec) errors_.push_back(dir.string() + ": cannot read the whole kernel directory (" + ec.message() + ")");
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      try {
        KernelFile loaded = KernelFile::load(path);
        loaded.include_dirs = includes;
        auto file = std::make_shared<const KernelFile>(std::move(loaded));
        // A later directory's file shadows an earlier one of the same family and name.
        std::erase_if(files_, [&](const auto& f) { return f->family == file->family && f->name == file->name; });
        files_.push_back(std::move(file));
      } catch (const std::exception& e) {
        // A broken file fails alone: listed under Problems, and it shadows a same-named file of
        // an earlier directory all the same, so that a config naming it gets its error rather
        // than silently the other file.
        errors_.push_back(dynamic_cast<const ConfigError*>(&e)
                              ? std::string(e.what())
                              : path.string() + ": cannot load kernel file (" + e.what() + ")");
        std::erase_if(files_, [&](const auto& f) {
          return f->name == path.stem().string() && f->path.parent_path().filename() == path.parent_path().filename();
        });
      }
    }
  }
}

std::vector<fs::path> KernelLibrary::include_dirs() const {
  std::vector<fs::path> out;
  for (const auto& dir : dirs_) {
    std::error_code ec;
    if (fs::is_directory(dir / "include", ec)) out.push_back(dir / "include");
  }
  return out;
}

std::vector<std::shared_ptr<const KernelFile>> KernelLibrary::family(const std::string& family) const {
  std::vector<std::shared_ptr<const KernelFile>> out;
  for (const auto& f : files_)
    if (f->family == family) out.push_back(f);
  return out;
}

void KernelLibrary::declare(std::shared_ptr<const KernelFile> file) const {
  std::erase_if(declared_, [&](const auto& f) { return f->family == file->family && f->name == file->name; });
  declared_.push_back(std::move(file));
}

std::shared_ptr<const KernelFile> KernelLibrary::find(const std::string& family, const std::string& name) const {
  for (const auto& f : declared_)
    if (f->family == family && (f->name == name || f->path.filename() == name)) return f;
  std::vector<std::string> names;
  for (const auto& f : files_) {
    if (f->family != family || f->plain) continue;
    if (f->name == name || f->path.filename() == name) return f;
    names.push_back(f->name);
  }
  for (const auto& f : files_)
    if (f->plain && (f->name == name || f->path.filename() == name))
      throw ConfigError(f->path.string() + ":1:1: a kernel file must start with its metadata block ('/* gpuk' ... '*/'; "
                        "see docs/kernels.md); this one is plain CUDA, which a config of the kernel family runs "
                        "with its declare: (docs/declared.md)");

  for (const auto& e : errors_)
    if (e.find("/" + name + ".cu:") != std::string::npos || e.find("/" + name + ".yaml:") != std::string::npos)
      throw ConfigError(e);
  std::vector<std::string> dirs;
  for (const auto& d : dirs_) dirs.push_back(d.string());
  throw ConfigError("no " + family + " kernel named '" + name + "'" + did_you_mean(name, names) +
                    "; the " + family + " kernels are: " + (names.empty() ? "(none)" : join(names)) +
                    " (read from " + join(dirs) + "; a kernel file elsewhere: gpuk --kernels DIR ...)");
}

std::shared_ptr<const KernelFile> KernelLibrary::find_declarable(const std::string& family, const std::string& name) const {
  for (const auto& f : declared_)
    if (f->family == family && (f->name == name || f->path.filename() == name)) return f;
  for (const auto& f : files_)
    if (f->family == family && !f->plain && (f->name == name || f->path.filename() == name)) return f;
  for (const auto& f : files_)
    if (f->plain && (f->name == name || f->path.filename() == name)) return f;
  return find(family, name);  // says what there is
}

std::vector<fs::path> kernel_dirs(const std::vector<fs::path>& extra) {
  return search_dirs(builtin_kernel_dir(), "GPUK_KERNELS", extra);
}

}  // namespace gpuk
