//===- Elf.cpp - Section table of an artifact, bounds-checked -------------===//
//
// Part of Loom. See Model.h. Reads only what the file's size allows: every
// offset and size is checked before it is followed, so a truncated or
// corrupted file is an error, never a read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

#include <cpuid.h>
#include <cstring>
#include <elf.h>

using namespace loom::rt;

namespace {

bool within(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

} // namespace

Error loom::rt::readElfSections(const uint8_t *data, uint64_t size,
                                std::map<std::string, Section> &sections) {
  auto bad = [](const std::string &why) {
    return makeError(LOOM_ERROR_FORMAT, why);
  };
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0)
    return bad("not a Loom artifact (not an ELF file)");
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad("not a 64-bit little-endian ELF file");
  if (eh.e_type != ET_DYN || eh.e_machine != EM_X86_64)
    return bad("not an x86-64 shared object");
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum ||
      !within(eh.e_shoff, uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr), size))
    return bad("truncated file: the section table lies past its end");
  auto header = [&](unsigned i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, data + eh.e_shoff + uint64_t(i) * sizeof sh, sizeof sh);
    return sh;
  };
  Elf64_Shdr names = header(eh.e_shstrndx);
  if (names.sh_type != SHT_STRTAB ||
      !within(names.sh_offset, names.sh_size, size))
    return bad("truncated file: the section names lie past its end");
  for (unsigned i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh = header(i);
    if (sh.sh_name >= names.sh_size)
      return bad("a section name lies outside the name table");
    const char *start =
        reinterpret_cast<const char *>(data + names.sh_offset + sh.sh_name);
    size_t maxLen = names.sh_size - sh.sh_name;
    size_t len = strnlen(start, maxLen);
    if (len == maxLen)
      return bad("a section name is not terminated");
    std::string name(start, len);
    if (name.rfind(".loom_", 0) != 0)
      continue;
    if (sh.sh_type == SHT_NOBITS || !within(sh.sh_offset, sh.sh_size, size))
      return bad("truncated file: section " + name + " lies past its end");
    sections[name] = {sh.sh_offset, sh.sh_size};
  }
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// CPU features
//===----------------------------------------------------------------------===//

namespace {

struct CpuFeature {
  const char *name;
  unsigned leaf, subleaf;
  enum Reg { EAX, EBX, ECX, EDX } reg;
  unsigned bit;
};

/// The features LLVM may record for x86-64 targets loom-compile supports.
const CpuFeature kFeatures[] = {
    {"sse", 1, 0, CpuFeature::EDX, 25},
    {"sse2", 1, 0, CpuFeature::EDX, 26},
    {"sse3", 1, 0, CpuFeature::ECX, 0},
    {"ssse3", 1, 0, CpuFeature::ECX, 9},
    {"fma", 1, 0, CpuFeature::ECX, 12},
    {"sse4.1", 1, 0, CpuFeature::ECX, 19},
    {"sse4.2", 1, 0, CpuFeature::ECX, 20},
    {"popcnt", 1, 0, CpuFeature::ECX, 23},
    {"avx", 1, 0, CpuFeature::ECX, 28},
    {"f16c", 1, 0, CpuFeature::ECX, 29},
    {"bmi", 7, 0, CpuFeature::EBX, 3},
    {"avx2", 7, 0, CpuFeature::EBX, 5},
    {"bmi2", 7, 0, CpuFeature::EBX, 8},
    {"avx512f", 7, 0, CpuFeature::EBX, 16},
    {"avx512dq", 7, 0, CpuFeature::EBX, 17},
    {"avx512ifma", 7, 0, CpuFeature::EBX, 21},
    {"avx512cd", 7, 0, CpuFeature::EBX, 28},
    {"avx512bw", 7, 0, CpuFeature::EBX, 30},
    {"avx512vl", 7, 0, CpuFeature::EBX, 31},
    {"avx512vbmi", 7, 0, CpuFeature::ECX, 1},
    {"avx512vnni", 7, 0, CpuFeature::ECX, 11},
    {"avx512bitalg", 7, 0, CpuFeature::ECX, 12},
    {"avx512vpopcntdq", 7, 0, CpuFeature::ECX, 14},
    {"avx512fp16", 7, 0, CpuFeature::EDX, 23},
    {"avxvnni", 7, 1, CpuFeature::EAX, 4},
    {"avx512bf16", 7, 1, CpuFeature::EAX, 5},
};

bool hasFeature(const CpuFeature &f) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2],
                         &regs[3]))
    return false;
  return (regs[f.reg] >> f.bit) & 1;
}

/// Whether the OS saves the AVX (and AVX-512) registers (XCR0).
bool osSaves(bool avx512) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) // OSXSAVE
    return false;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  unsigned need = avx512 ? 0xE6 : 0x6;
  return (lo & need) == need;
}

} // namespace

Error loom::rt::checkCpuFeatures(const std::vector<std::string> &features) {
  for (const std::string &name : features) {
    const CpuFeature *known = nullptr;
    for (const CpuFeature &f : kFeatures)
      if (name == f.name)
        known = &f;
    if (!known)
      return makeError(LOOM_ERROR_CPU, "the artifact needs CPU feature '" +
                                           name +
                                           "', which this runtime cannot "
                                           "detect");
    bool vector = name.rfind("avx", 0) == 0 || name == "fma" || name == "f16c";
    bool ok = hasFeature(*known) &&
              (!vector || osSaves(name.rfind("avx512", 0) == 0));
    if (!ok)
      return makeError(LOOM_ERROR_CPU,
                       "the artifact needs " + name +
                           ", which this CPU does not have; recompile with "
                           "--target=cpu:<this CPU> (or --target=cpu:x86-64-v2)");
  }
  return Error::ok();
}
