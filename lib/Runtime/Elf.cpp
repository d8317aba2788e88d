//===- Elf.cpp - Section table of an artifact, bounds-checked -------------===//
//
// Part of Loom. See Model.h. Reads only what the file's size allows: every
// offset and size is checked before it is followed, so a truncated or
// corrupted file is an error, never a read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "Model.h"

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
