#include "util/safe_dirs.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "gpuk/error.hpp"

namespace gpuk {

namespace fs = std::filesystem;

namespace {

std::string mode_text(mode_t mode) {
  char out[8];
  std::snprintf(out, sizeof out, "%04o", static_cast<unsigned>(mode & 07777));
  return out;
}

std::string user_name(uid_t uid) {
  std::vector<char> buffer(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buffer.data(), buffer.size(), &found) != 0 || !found) return {};
  return found->pw_name;
}

// The group's name, and whether it is the user's private group: named after the user, with no
// member but the user. A group we cannot look up is not private (others may have it).
struct GroupInfo {
  std::string name;
  bool private_to_user = false;
};

GroupInfo group_info(gid_t gid) {
  std::vector<char> buffer(65536);
  group gr{};
  group* found = nullptr;
  if (::getgrgid_r(gid, &gr, buffer.data(), buffer.size(), &found) != 0 || !found)
    return {"gid " + std::to_string(gid), false};
  GroupInfo info{found->gr_name, false};
  const std::string me = user_name(::geteuid());
  if (me.empty() || info.name != me) return info;
  info.private_to_user = true;
  for (char** member = found->gr_mem; member && *member; ++member)
    if (me != *member) info.private_to_user = false;
  return info;
}

// Who besides the owner (and root) can write to an object of this stat: "", or a reason.
std::string others_who_write(const struct stat& st) {
  if (st.st_mode & S_IWOTH) return "world-writable";
  if (st.st_mode & S_IWGRP) {
    const GroupInfo g = group_info(st.st_gid);
    if (!g.private_to_user) return "writable by group '" + g.name + "'";
  }
  return "";
}

std::vector<fs::path> parents_of(const fs::path& path) {
  std::vector<fs::path> out;
  std::error_code ec;
  // The path as named (a symbolic link's own directory counts) and as resolved.
  for (const fs::path& p : {fs::absolute(path, ec).lexically_normal(), fs::weakly_canonical(path, ec)}) {
    if (p.empty()) continue;
    for (fs::path q = p.parent_path(); !q.empty(); q = q.parent_path()) {
      if (std::find(out.begin(), out.end(), q) == out.end()) out.push_back(q);
      if (q == q.root_path()) break;
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> writable_by_others(const fs::path& path, bool parents) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;  // not there: nothing to load from it
  if (const std::string who = others_who_write(st); !who.empty())
    return path.string() + " is " + who + " (mode " + mode_text(st.st_mode) + ")";
  if (!parents) return std::nullopt;
  for (const fs::path& parent : parents_of(path)) {
    struct stat ps {};
    if (::stat(parent.c_str(), &ps) != 0) continue;
    // The sticky bit (as on /tmp) keeps others from renaming what they do not own.
    if (ps.st_mode & S_ISVTX) continue;
    if (const std::string who = others_who_write(ps); !who.empty())
      return "its parent directory " + parent.string() + " is " + who + " without the sticky bit (mode " +
             mode_text(ps.st_mode) + "), so others can replace " + path.string();
  }
  return std::nullopt;
}

bool unsafe_dirs_allowed() {
  const char* value = std::getenv("GPUK_ALLOW_UNSAFE_DIRS");
  return value && *value && std::string_view(value) != "0";
}

DirOrigin origin_of(const fs::path& dir, const fs::path& builtin_dir) {
  std::error_code ec;
  return fs::weakly_canonical(dir, ec) == fs::weakly_canonical(builtin_dir, ec) ? DirOrigin::builtin
                                                                                : DirOrigin::named;
}

void refuse_if_writable_by_others(const fs::path& path, std::string_view what, bool parents, DirOrigin origin) {
  const auto why = writable_by_others(path, parents);
  if (!why) return;
  if (origin == DirOrigin::builtin) {
    std::cerr << "gpuk: warning: gpuk's own " << what << " " << path.string() << " is not private: " << *why
              << "; whoever can write there can change what gpuk runs (chmod go-w it)\n";
    return;
  }
  if (unsafe_dirs_allowed()) {
    std::cerr << "gpuk: warning: using the " << what << " " << path.string() << " although " << *why
              << " (--allow-unsafe-dirs / GPUK_ALLOW_UNSAFE_DIRS)\n";
    return;
  }
  throw ConfigError("refusing the " + std::string(what) + " " + path.string() + ": " + *why +
                    ", so other users could put code there that gpuk would run as you. Remove their write "
                    "access (chmod go-w), or pass --allow-unsafe-dirs (GPUK_ALLOW_UNSAFE_DIRS=1) if you trust "
                    "every user of this machine");
}

void refuse_link_target_if_writable_by_others(const fs::path& path, std::string_view what, DirOrigin origin) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return;
  const fs::path target = fs::canonical(path, ec);
  if (ec) return;  // dangling or a loop: nothing is read through it
  refuse_if_writable_by_others(target, what, true, origin);
  // The directory it lies in, sticky or not: whoever can add files there can put their own in
  // its place once it is gone, as they could in a linked directory (which is refused).
  if (!fs::is_directory(target, ec)) refuse_if_writable_by_others(target.parent_path(), what, true, origin);
}

void refuse_tree_if_writable_by_others(const fs::path& dir, std::string_view what, DirOrigin origin) {
  refuse_if_writable_by_others(dir, what, true, origin);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code type_ec;
    const auto type = it->status(type_ec).type();
    if (type != fs::file_type::directory && type != fs::file_type::regular) continue;
    refuse_if_writable_by_others(it->path(), what, false, origin);
    refuse_link_target_if_writable_by_others(it->path(), what, origin);
  }
}

bool create_private_directories(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return true;
  if (dir.has_parent_path() && dir.parent_path() != dir && !create_private_directories(dir.parent_path()))
    return false;
  return ::mkdir(dir.c_str(), 0700) == 0 || (errno == EEXIST && fs::is_directory(dir, ec));
}

}  // namespace gpuk
