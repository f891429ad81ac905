#include "jit/jit.hpp"

#include <nvrtc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "gpuk/error.hpp"
#include "jit/include_tree.hpp"
#include "jit/nvrtc_processes.hpp"
#include "jit/pch_source.hpp"
#include "jit/same_code.hpp"
#include "util/atomic_file.hpp"
#include "util/hasher.hpp"
#include "util/regular_file.hpp"
#include "util/safe_dirs.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

// NVRTC's answer to a name expression that the entry's template cannot take (its parameters do
// not match the metadata) is two errors per expression in its "__nv_name_map", with no line of
// the kernel file. When those are the only errors, one line instead: the entry, the template
// parameter list the metadata implies, and the template the file declares.
std::optional<std::string> name_map_mismatch(const KernelFile& file, const std::string& log) {
  if (log.find("__nv_name_map(") == std::string::npos) return std::nullopt;
  if (log.find(file.path.string() + "(") != std::string::npos) return std::nullopt;  // errors in the file itself
  static const std::regex pragma(R"(nv_mangled_name\s+(\S.*\S)\s*$)");
  std::istringstream lines(log);
  std::string line, expression;
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_search(line, m, pragma)) {
      expression = m[1].str();
      break;
    }
  if (expression.empty()) return std::nullopt;
  const std::string entry = expression.substr(0, expression.find('<'));
  const LaunchSpec* launch = nullptr;
  for (const auto& l : file.launches)
    if (l.entry == entry) launch = &l;
  if (!launch) return std::nullopt;
  const std::vector<std::string> args = template_arguments(expression);
  const std::size_t leading = args.size() >= file.params.size() ? args.size() - file.params.size() : 0;
  std::string implied = "template <";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i) implied += ", ";
    implied += i < leading ? "class /* " + args[i] + " */" : "int " + file.params[i - leading].name;
  }
  implied += ">";
  // Where the file declares the entry: the `template <...>` before its first definition.
  std::size_t at = file.source.find(entry + "(");
  if (at == std::string::npos) at = file.source.find(entry + " (");
  int source_line = launch->line;
  std::string declared;
  if (at != std::string::npos) {
    const std::size_t templ = file.source.rfind("template", at);
    if (templ != std::string::npos) {
      const std::size_t close = file.source.find('>', templ);
      declared = file.source.substr(templ, close == std::string::npos ? 0 : close - templ + 1);
      declared.erase(std::remove(declared.begin(), declared.end(), '\n'), declared.end());
      source_line = 1 + static_cast<int>(std::count(file.source.begin(), file.source.begin() + templ, '\n'));
    }
  }
  std::string verdict;
  if (!declared.empty()) {
    const std::size_t count = template_arguments(declared).size();
    verdict = count == args.size() ? "; the file declares " + declared +
                                         ", as many parameters, so one's kind or the signature does not fit them"
                                   : ", but the file declares " + declared;
  }
  return file.path.string() + ":" + std::to_string(source_line) + ":1: the entry '" + entry + "' (launch at line " +
         std::to_string(launch->line) + ") cannot be instantiated as " + expression + ": its metadata implies " +
         implied + " (" + std::to_string(leading) + " argument" + (leading == 1 ? "" : "s") + " of the " +
         file.family + " family, then one per parameter in metadata order)" + verdict;
}

std::string checksum(const std::vector<char>& bytes) {
  Hasher h;
  h.add(std::string_view(bytes.data(), bytes.size()));
  return h.hex();
}

constexpr std::string_view kCacheMagic = "GPUK-CUBIN-CACHE 1\n";

}  // namespace

const std::string& CompiledKernels::lowered(const std::string& name_expression) const {
  for (std::size_t i = 0; i < name_expressions.size(); ++i)
    if (name_expressions[i] == name_expression) return lowered_names[i];
  throw Error("no compiled kernel for " + name_expression);
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

// --- CompileCache ----------------------------------------------------------------------------

fs::path CompileCache::default_dir() {
  if (const char* dir = std::getenv("GPUK_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "gpuk";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "gpuk";
  // Per user: another user's directory of the same name would be refused (or could not be written).
  return fs::temp_directory_path() / ("gpuk-cache-" + std::to_string(::geteuid()));
}

CompileCache::CompileCache(std::optional<fs::path> dir) {
  if (!dir) return;
  const auto off = [&](const std::string& why) {
    std::cerr << "gpuk: warning: the compile cache " << dir->string() << " " << why << "; compiling without a cache\n";
  };
  // Private to the user: a CUBIN loaded from here runs on the GPU, and the key is no secret.
  if (!create_private_directories(*dir)) {
    off("cannot be created");
    return;
  }
  if (const auto why = writable_by_others(*dir)) {
    if (!unsafe_dirs_allowed()) {
      off("is not private: " + *why + ", so others could plant compiled code in it (chmod go-w it, or pass "
          "--allow-unsafe-dirs / GPUK_ALLOW_UNSAFE_DIRS=1 to use it anyway)");
      return;
    }
    std::cerr << "gpuk: warning: using the compile cache " << dir->string() << " although " << *why
              << " (--allow-unsafe-dirs / GPUK_ALLOW_UNSAFE_DIRS)\n";
  }
  const fs::path probe = temporary_path(*dir / ".probe");
  std::ofstream out(probe);
  if (!out) {
    off("cannot be written");
    return;
  }
  out.close();
  std::error_code ec;
  fs::remove(probe, ec);
  // Writers killed mid-entry (SIGKILL, power loss) leave their temporary files; their entries
  // were never renamed into place, so nothing else is lost.
  if (const int removed = remove_orphaned_temporaries(*dir))
    std::cerr << "gpuk: note: removed " << removed << " temporary file" << (removed == 1 ? "" : "s")
              << " that killed gpuk processes left in the compile cache " << dir->string() << "\n";
  dir_ = std::move(dir);
}

fs::path CompileCache::entry_path(const std::string& key) const { return *dir_ / (key + ".cubin"); }

std::optional<CompiledKernels> CompileCache::load(const std::string& key) const {
  if (!dir_) return std::nullopt;
  // Read whole first: an entry that is not a regular file (a FIFO would block) is damaged.
  RegularFile file = read_regular_file(entry_path(key), (std::uint64_t{1} << 31) + (std::uint64_t{1} << 24));
  if (file.status == RegularFile::Status::missing) return std::nullopt;
  std::istringstream in(std::move(file.text));
  if (file.status != RegularFile::Status::ok) {
    std::cerr << "gpuk: note: cache entry " << entry_path(key).string() << " cannot be read (" << file.why
              << "); recompiling\n";
    return std::nullopt;
  }
  // Layout: magic, "key K", "names N", N lines "expression\tlowered", "cubin BYTES SUM", bytes.
  const auto damaged = [&](const std::string& why) -> std::optional<CompiledKernels> {
    std::cerr << "gpuk: note: cache entry " << entry_path(key).string() << " is damaged (" << why
              << "); recompiling\n";
    return std::nullopt;
  };
  std::string magic(kCacheMagic.size(), '\0');
  in.read(magic.data(), static_cast<std::streamsize>(magic.size()));
  if (magic != kCacheMagic) return damaged("bad header");
  CompiledKernels c;
  std::string word, stored_key;
  std::size_t count = 0, bytes = 0;
  if (!(in >> word >> stored_key) || word != "key" || stored_key != key) return damaged("wrong key");
  if (!(in >> word >> count) || word != "names" || count > 100000) return damaged("bad name count");
  in.ignore(1);
  for (std::size_t i = 0; i < count; ++i) {
    std::string line;
    if (!std::getline(in, line)) return damaged("truncated names");
    const auto tab = line.find('\t');
    if (tab == std::string::npos) return damaged("bad name line");
    c.name_expressions.push_back(line.substr(0, tab));
    c.lowered_names.push_back(line.substr(tab + 1));
  }
  std::string sum;
  if (!(in >> word >> bytes >> sum) || word != "cubin" || bytes > (std::size_t{1} << 31))
    return damaged("bad size line");
  in.ignore(1);
  c.cubin.resize(bytes);
  in.read(c.cubin.data(), static_cast<std::streamsize>(bytes));
  if (static_cast<std::size_t>(in.gcount()) != bytes) return damaged("truncated CUBIN");
  if (checksum(c.cubin) != sum) return damaged("checksum mismatch");
  c.from_cache = true;
  c.cache_key = key;
  return c;
}

void CompileCache::store(const CompiledKernels& c) const {
  if (!dir_) return;
  std::ostringstream out(std::ios::binary);
  out << kCacheMagic << "key " << c.cache_key << "\nnames " << c.name_expressions.size() << "\n";
  for (std::size_t i = 0; i < c.name_expressions.size(); ++i)
    out << c.name_expressions[i] << '\t' << c.lowered_names[i] << '\n';
  out << "cubin " << c.cubin.size() << ' ' << checksum(c.cubin) << '\n';
  out.write(c.cubin.data(), static_cast<std::streamsize>(c.cubin.size()));
  try {
    write_file_atomically(entry_path(c.cache_key), out.str(), "a compile cache entry");
  } catch (const Error&) {
    // A full disk costs a recompile next time, nothing more.
  }
}

// --- Jit -------------------------------------------------------------------------------------

JitOptions jit_options(const std::string& arch, const KernelLibrary& kernels) {
  JitOptions o;
  o.arch = arch;
  o.include_dirs = kernels.include_dirs();
  return o;
}

Jit::Jit(JitOptions options, const CompileCache* cache) : options_(std::move(options)), cache_(cache) {}

std::vector<std::string> Jit::nvrtc_options() const {
  std::vector<std::string> opts = {"--gpu-architecture=" + options_.arch, "-std=c++17", "-DGPUK_NVRTC=1"};
  if (options_.line_info) opts.push_back("-lineinfo");
  for (const auto& dir : options_.include_dirs) opts.push_back("-I" + dir.string());
  opts.insert(opts.end(), options_.extra_options.begin(), options_.extra_options.end());
  return opts;
}

std::string Jit::cache_key(const KernelFile& file, const std::vector<std::string>& name_expressions) const {
  return cache_key(file, name_expressions, *include_tree(file.source, file.path.parent_path(), options_.include_dirs));
}

std::string Jit::cache_key(const KernelFile& file, const std::vector<std::string>& name_expressions,
                           const IncludeTree& tree) const {
  Hasher h;
  h.add(file.source);
  h.add(tree.digest);
  for (const auto& e : name_expressions) h.add(e);
  for (const auto& o : file.compile_options) h.add("file option " + o);
  for (const auto& o : nvrtc_options()) {
    // Include directories matter through the headers' contents, hashed above, not their paths.
    if (o.rfind("-I", 0) != 0) h.add(o);
  }
  h.add(nvrtc_version());
  h.add(options_.arch);
  return h.hex();
}

namespace {

// A variant whose parameters reach its kernel as definitions names its entry
// "stencil2d -Dblock_size_x=32 -Dblock_size_y=8" (Variant::name_expression): the entry that
// NVRTC looks up, and the -D options of its program.
std::pair<std::string, std::string> split_defines(const std::string& name_expression) {
  const std::size_t at = name_expression.find(" -D");
  if (at == std::string::npos) return {name_expression, ""};
  return {name_expression.substr(0, at), name_expression.substr(at + 1)};
}

std::vector<std::string> define_options(const std::string& defines) {
  std::vector<std::string> out;
  std::istringstream in(defines);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

}  // namespace

std::vector<std::vector<std::string>> programs_by_defines(const std::vector<std::string>& name_expressions) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> sets;
  for (const auto& name : name_expressions) {
    const std::string d = split_defines(name).second;
    const auto it = std::find(sets.begin(), sets.end(), d);
    if (it == sets.end()) {
      sets.push_back(d);
      out.push_back({name});
    } else {
      out[static_cast<std::size_t>(it - sets.begin())].push_back(name);
    }
  }
  return out;
}

CompiledKernels Jit::compile(const KernelFile& file, const std::vector<std::string>& name_expressions,
                             NvrtcProcesses* processes) const {
  if (name_expressions.empty()) throw Error("internal: " + file.path.string() + ": nothing to compile (no name expressions)");
  // One program has one set of definitions: the names of one variant.
  std::vector<std::string> entries;
  std::string defines;
  for (std::size_t i = 0; i < name_expressions.size(); ++i) {
    auto [entry, d] = split_defines(name_expressions[i]);
    if (i > 0 && d != defines)
      throw Error("internal: " + file.path.string() + ": one NVRTC program for two sets of -D definitions ('" +
                  defines + "' and '" + d + "'); compile each variant of a params_as: defines file on its own");
    defines = d;
    entries.push_back(std::move(entry));
  }
  // The headers, walked once for the key and the precompiled header's checks.
  const auto tree = include_tree(file.source, file.path.parent_path(), options_.include_dirs);
  const std::string key = cache_key(file, name_expressions, *tree);
  if (cache_) {
    if (auto cached = cache_->load(key)) {
      if (cached->name_expressions == name_expressions) return std::move(*cached);
    }
  }
  NvrtcRequest request;
  request.source = file.source;
  request.name = file.path.string();
  request.entries = entries;
  request.options = nvrtc_options();
  request.options.insert(request.options.end(), file.compile_options.begin(), file.compile_options.end());
  std::vector<std::string> definitions = define_options(defines);
  if (processes) {
    // A precompiled header for large headers (jit/pch_source.hpp): every variant of a file then
    // gives NVRTC the same options, the definitions moved into the source.
    if (tree->bytes >= kPchHeaderBytes) {
      if (definitions.empty()) {
        request.pch = true;
      } else if (auto hoisted = hoist_definitions(file.source, request.name, definitions, *tree, file.compile_options)) {
        request.source = std::move(*hoisted);
        request.pch = true;
        definitions.clear();
      }
    }
  }
  for (auto& d : definitions) request.options.push_back(std::move(d));
  const NvrtcOutcome out = processes ? processes->compile(request) : run_nvrtc(request);
  const std::string& context = request.name;
  if (!out.error.empty()) throw CompileError(out.error + " [" + context + "]");
  const std::string& log = out.log;
  if (!out.compiled) {
    if (auto mismatch = name_map_mismatch(file, log)) throw CompileError(*mismatch);
    std::string what = file.path.string() + ": NVRTC could not compile ";
    what += name_expressions.size() == 1 ? name_expressions[0]
                                         : std::to_string(name_expressions.size()) + " variants (first: " +
                                               name_expressions[0] + ")";
    what += " for " + options_.arch + ":\n" + format_compile_log(log, file.source, file.path.string());
    throw CompileError(what);
  }

  CompiledKernels c;
  c.name_expressions = name_expressions;
  c.log = log;
  c.cache_key = key;
  if (out.cubin.empty())
    throw CompileError(context + ": NVRTC produced no CUBIN for " + options_.arch +
                       " (a virtual architecture such as compute_90 gives PTX only; name a real one, sm_90)");
  c.cubin = out.cubin;
  c.lowered_names = out.lowered;
  if (cache_) cache_->store(c);
  return c;
}

std::string format_compile_log(const std::string& log, const std::string& source, const std::string& program) {
  static const std::regex header(R"(^(.*)\((\d+)\): (error|warning|remark)(.*)$)");
  std::vector<std::string> src_lines;
  {
    std::istringstream in(source);
    std::string l;
    while (std::getline(in, l)) src_lines.push_back(l);
  }
  std::vector<std::string> lines;
  {
    std::istringstream in(log);
    std::string l;
    while (std::getline(in, l)) lines.push_back(l);
  }
  std::ostringstream out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, header)) {
      if (!lines[i].empty() && lines[i].find("errors detected") == std::string::npos &&
          lines[i].find("error detected") == std::string::npos)
        out << lines[i] << '\n';
      continue;
    }
    const std::size_t line_no = std::stoul(m[2].str());
    std::size_t column = 1;
    if (m[1].str() != program) {  // a header or NVRTC's own name map: keep NVRTC's text as it is
      out << lines[i] << '\n';
      continue;
    }
    // NVRTC echoes the offending line and puts a caret under the column.
    if (i + 2 < lines.size() && lines[i + 2].find('^') != std::string::npos && line_no >= 1 &&
        line_no <= src_lines.size()) {
      const std::string& echoed = lines[i + 1];
      const std::string& original = src_lines[line_no - 1];
      const std::size_t indent = echoed.size() >= original.size() ? echoed.size() - original.size() : 0;
      const std::size_t caret = lines[i + 2].find('^');
      column = caret >= indent ? caret - indent + 1 : 1;
      i += 2;
    }
    out << m[1].str() << ':' << line_no << ':' << column << ": " << m[3].str() << m[4].str() << '\n';
    if (line_no >= 1 && line_no <= src_lines.size()) {
      out << "    " << src_lines[line_no - 1] << '\n';
      out << "    " << std::string(column - 1, ' ') << "^\n";
    }
  }
  std::string s = out.str();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

}  // namespace gpuk
