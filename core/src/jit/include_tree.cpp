// The headers a kernel file includes (jit/include_tree.hpp).
#include "jit/include_tree.hpp"

#include <cctype>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "util/hasher.hpp"
#include "util/regular_file.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

// A path the walk looked at: a header it read (its size and time), or one it found absent.
struct Seen {
  fs::path path;
  bool exists = false;
  std::uintmax_t size = 0;
  fs::file_time_type time{};
};

Seen look(const fs::path& path) {
  Seen s;
  s.path = path;
  std::error_code ec;
  s.exists = fs::is_regular_file(path, ec);
  if (s.exists) {
    s.size = fs::file_size(path, ec);
    s.time = fs::last_write_time(path, ec);
  }
  return s;
}

bool unchanged(const Seen& s) {
  const Seen now = look(s.path);
  return now.exists == s.exists && now.size == s.size && now.time == s.time;
}

// The name in `#include <name>` or `#include "name"`, or "" for any other line.
std::string included_name(const std::string& line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || (line[i] != '<' && line[i] != '"')) return "";
  const std::size_t end = line.find(line[i] == '<' ? '>' : '"', i + 1);
  return end == std::string::npos ? "" : line.substr(i + 1, end - i - 1);
}


constexpr int kMaxIncludeDepth = 256;

struct Walk {
  const std::vector<fs::path>& include_dirs;
  std::set<fs::path> read;
  std::vector<Seen> seen;
  Hasher hasher;
  IncludeTree tree;

  void from(const std::string& source, const fs::path& dir, int depth = 0) {
    // Deeper than any compiler follows (GCC stops at 200): not followed, so the walk's stack is
    // bounded; NVRTC reports such a chain when it compiles.
    if (depth > kMaxIncludeDepth) return;
    std::istringstream lines(source);
    std::string line;
    while (std::getline(lines, line)) {
      const std::string name = included_name(line);
      if (name.empty()) continue;
      std::vector<fs::path> candidates = {dir / name};
      for (const auto& inc : include_dirs) candidates.push_back(inc / name);
      for (const auto& candidate : candidates) {
        Seen s = look(candidate);
        seen.push_back(s);
        if (!s.exists) continue;
        std::error_code ec;
        const fs::path canonical = fs::weakly_canonical(candidate, ec);
        if (!read.insert(canonical).second) break;
        // Empty when it is not a regular file (a FIFO would block), which NVRTC then reports.
        const std::string text = read_regular_file(canonical, kMaxKernelFileBytes).text;
        hasher.add(name);
        hasher.add(text);
        tree.bytes += text.size();
        add_identifiers(text, tree.identifiers);
        from(text, canonical.parent_path(), depth + 1);
        break;
      }
    }
  }
};

struct Remembered {
  std::shared_ptr<const IncludeTree> tree;
  std::vector<Seen> seen;
};

}  // namespace

void add_identifiers(const std::string& text, std::unordered_set<std::string>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (std::isalpha(c) || c == '_') {
      std::size_t j = i + 1;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      out.emplace(text, i, j - i);
      i = j;
    } else if (std::isdigit(c)) {
      while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
    } else {
      ++i;
    }
  }
}

std::shared_ptr<const IncludeTree> include_tree(const std::string& source, const fs::path& dir,
                                                const std::vector<fs::path>& include_dirs) {
  Hasher key;
  key.add(source);
  key.add(dir.string());
  for (const auto& inc : include_dirs) key.add(inc.string());
  static std::mutex mutex;
  static std::map<std::string, Remembered> remembered;
  {
    std::lock_guard lock(mutex);
    const auto it = remembered.find(key.hex());
    if (it != remembered.end()) {
      bool same = true;
      for (const Seen& s : it->second.seen) same = same && unchanged(s);
      if (same) return it->second.tree;
    }
  }
  Walk walk{include_dirs, {}, {}, {}, {}};
  walk.from(source, dir);
  walk.tree.digest = walk.hasher.hex();
  auto tree = std::make_shared<const IncludeTree>(std::move(walk.tree));
  std::lock_guard lock(mutex);
  if (remembered.size() > 256) remembered.clear();  // a long-lived process tuning many files
  remembered[key.hex()] = {tree, std::move(walk.seen)};
  return tree;
}

}  // namespace gpuk
