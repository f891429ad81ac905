// Every built-in entry with parameters its code does not use (jit/same_code.hpp), compiled with
// NVRTC for sm_90 under its own name and under the canonical name a sweep compiles instead: the
// same machine code (the CUBIN's .text section of each, byte for byte, and its registers, shared
// and constant memory, attribute list). No GPU needed.
#include <doctest/doctest.h>

#include <cstring>
#include <elf.h>

#include "helpers.hpp"
#include "jit/jit.hpp"
#include "jit/same_code.hpp"
#include "kernel/kernel_file.hpp"
#include "plugin/plugin.hpp"

using namespace gpuk;

namespace {

// A kernel's sections in a CUBIN (an ELF64 file): its code, and what sets its resources.
struct KernelSections {
  std::string text;
  std::uint32_t registers = 0;  // EIATTR_REGCOUNT of the .nv.info section
  std::uint64_t shared = 0, constant0 = 0, info = 0;  // section sizes
};

KernelSections sections_of(const std::vector<char>& cubin, const std::string& lowered) {
  KernelSections k;
  REQUIRE(cubin.size() >= sizeof(Elf64_Ehdr));
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  const auto header = [&](std::size_t i) {
    Elf64_Shdr sh;
    REQUIRE(eh.e_shoff + (i + 1) * sizeof sh <= cubin.size());
    std::memcpy(&sh, cubin.data() + eh.e_shoff + i * sizeof sh, sizeof sh);
    return sh;
  };
  const auto bytes = [&](const Elf64_Shdr& sh) {
    REQUIRE(sh.sh_offset + sh.sh_size <= cubin.size());
    return std::string(cubin.data() + sh.sh_offset, sh.sh_size);
  };
  const Elf64_Shdr names = header(eh.e_shstrndx);
  std::string info;  // the global .nv.info: attributes per symbol index
  std::uint32_t symbol = 0;
  bool found = false;
  for (std::size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr sh = header(i);
    const std::string name = cubin.data() + names.sh_offset + sh.sh_name;
    if (name == ".text." + lowered) {
      k.text = bytes(sh);
      found = true;
    }
    if (name == ".nv.shared." + lowered) k.shared = sh.sh_size;
    if (name == ".nv.constant0." + lowered) k.constant0 = sh.sh_size;
    if (name == ".nv.info." + lowered) k.info = sh.sh_size;
    if (name == ".nv.info") info = bytes(sh);
    if (sh.sh_type == SHT_SYMTAB) {
      const std::string symbols = bytes(sh), strings = bytes(header(sh.sh_link));
      for (std::size_t at = 0; at + sizeof(Elf64_Sym) <= symbols.size(); at += sizeof(Elf64_Sym)) {
        Elf64_Sym sym;
        std::memcpy(&sym, symbols.data() + at, sizeof sym);
        if (sym.st_name < strings.size() && strings.c_str() + sym.st_name == lowered)
          symbol = static_cast<std::uint32_t>(at / sizeof(Elf64_Sym));
      }
    }
  }
  REQUIRE_MESSAGE(found, "no .text section for " << lowered);
  // Attributes: format byte, attribute byte, then a 16-bit value, or (format 4) a 16-bit size and
  // that many bytes; EIATTR_REGCOUNT (0x2f) holds the symbol's index and its registers.
  for (std::size_t at = 0; at + 4 <= info.size();) {
    const auto format = static_cast<unsigned char>(info[at]), attribute = static_cast<unsigned char>(info[at + 1]);
    std::uint16_t size = 0;
    std::memcpy(&size, info.data() + at + 2, 2);
    if (format == 4 && attribute == 0x2f && size == 8 && at + 12 <= info.size()) {
      std::uint32_t sym = 0, regs = 0;
      std::memcpy(&sym, info.data() + at + 4, 4);
      std::memcpy(&regs, info.data() + at + 8, 4);
      if (sym == symbol) k.registers = regs;
    }
    at += 4 + (format == 4 ? size : 0);
  }
  return k;
}

// A variant whose unused parameters take an allowed value other than their default (the first
// such that the constraints allow), the others their defaults; nullopt when there is none.
std::optional<Variant> off_default(const std::shared_ptr<const KernelFile>& file, const std::vector<std::string>& leading,
                                   const std::vector<std::string>& unused) {
  std::map<std::string, std::int64_t> values;
  for (const auto& name : unused)
    for (std::int64_t v : file->param(name)->values) {
      if (v == file->param(name)->default_value) continue;
      auto trial = values;
      trial[name] = v;
      try {
        (void)Variant(file, leading, trial);
        values = trial;
        break;
      } catch (const ConfigError&) {
      }
    }
  if (values.empty()) return std::nullopt;
  return Variant(file, leading, values);
}

}  // namespace

TEST_CASE("an entry compiled under its canonical name is the same machine code as under its own") {
  const PluginRegistry plugins{{test::plugin_dir()}};
  const KernelLibrary kernels{{test::kernels_dir()}};
  const Jit jit(jit_options("sm_90", kernels), nullptr);
  int compared = 0;
  for (const auto& file : kernels.files()) {
    const FamilyPlugin* plugin = plugins.find(file->family);
    if (!plugin) continue;
    const SameCode same(*file);
    for (const auto& launch : file->launches) {
      const std::vector<std::string> unused = same.unused(launch.entry);
      if (unused.empty()) continue;
      const auto variant = off_default(file, plugin->all_template_args(*file).front(), unused);
      if (!variant) continue;
      const std::string own = variant->name_expression(launch);
      const std::string canonical = same.canonical(own);
      CAPTURE(own);
      REQUIRE(canonical != own);
      const CompiledKernels c = jit.compile(*file, {own, canonical});
      const KernelSections a = sections_of(c.cubin, c.lowered(own));
      const KernelSections b = sections_of(c.cubin, c.lowered(canonical));
      CHECK(a.text.size() > 0);
      CHECK(a.text == b.text);
      CHECK(a.registers == b.registers);
      CHECK(a.registers > 0);
      CHECK(a.shared == b.shared);
      CHECK(a.constant0 == b.constant0);
      CHECK(a.info == b.info);
      ++compared;
    }
  }
  CHECK(compared >= 10);  // reduce, search and sort each have some

  // The comparison sees a difference where there is one: UNROLL is used.
  const auto onepass = kernels.find("reduce", "onepass");
  const auto leading = plugins.find("reduce")->all_template_args(*onepass).front();
  const std::string one = Variant(onepass, leading, {{"UNROLL", 1}}).name_expression(onepass->launches[0]);
  const std::string two = Variant(onepass, leading, {{"UNROLL", 2}}).name_expression(onepass->launches[0]);
  const CompiledKernels c = jit.compile(*onepass, {one, two});
  CHECK(sections_of(c.cubin, c.lowered(one)).text != sections_of(c.cubin, c.lowered(two)).text);
}
