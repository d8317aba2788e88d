//===- WeightsObject.cpp - The embedded weights as an object file ---------===//
//
// Part of Loom. See WeightsObject.h. The object's layout: the ELF header,
// the section's bytes at offset 64 (its alignment), then the symbol table,
// the string tables and the section headers.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/WeightsObject.h"
#include "loom/Support/Files.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace llvm;
using namespace loom;

namespace {

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The section headers' indices.
enum SectionIndex : unsigned {
  kNull,
  kWeights,
  kSymtab,
  kStrtab,
  kShstrtab,
  kNoteStack,
  kNumSections
};

/// The ELF machine of \p triple, or none for a target this writer does not
/// know.
std::optional<uint16_t> machineOf(const Triple &triple) {
  if (triple.getArch() == Triple::x86_64)
    return ELF::EM_X86_64;
  if (triple.getArch() == Triple::aarch64)
    return ELF::EM_AARCH64;
  return std::nullopt;
}

template <typename T> void writeStruct(raw_ostream &os, const T &value) {
  os.write(reinterpret_cast<const char *>(&value), sizeof(T));
}

void pad(raw_ostream &os, uint64_t &offset, uint64_t align) {
  uint64_t padded = alignTo(offset, align);
  os.write_zeros(padded - offset);
  offset = padded;
}

} // namespace

Error compiler::writeWeightsObject(const safetensors::Writer &weights,
                                   const Triple &triple, StringRef path) {
  std::optional<uint16_t> machine = machineOf(triple);
  if (!machine || !triple.isLittleEndian() || !sys::IsLittleEndianHost)
    return makeError("cannot embed the weights in an object for " +
                     triple.str() +
                     ": only little-endian x86-64 and AArch64 hosts are "
                     "written (compile with --weights=external)");
  const uint64_t size = weights.serializedSize();
  const std::string strtab = std::string("\0", 1) + kWeightsSymbol + '\0';
  const char shstrtabText[] = "\0.loom_weights\0.symtab\0.strtab\0.shstrtab\0"
                              ".note.GNU-stack";
  const StringRef shstrtab(shstrtabText, sizeof(shstrtabText));
  auto nameOf = [&](StringRef name) {
    return uint32_t(shstrtab.find(StringRef(name.data(), name.size() + 1)));
  };

  // The layout.
  const uint64_t weightsOffset = 64;
  const uint64_t symtabOffset = alignTo(weightsOffset + size, 8);
  const uint64_t symtabSize = 2 * sizeof(ELF::Elf64_Sym);
  const uint64_t strtabOffset = symtabOffset + symtabSize;
  const uint64_t shstrtabOffset = strtabOffset + strtab.size();
  const uint64_t headersOffset = alignTo(shstrtabOffset + shstrtab.size(), 8);

  ELF::Elf64_Ehdr header;
  std::memset(&header, 0, sizeof(header));
  std::memcpy(header.e_ident, ELF::ElfMagic, 4);
  header.e_ident[ELF::EI_CLASS] = ELF::ELFCLASS64;
  header.e_ident[ELF::EI_DATA] = ELF::ELFDATA2LSB;
  header.e_ident[ELF::EI_VERSION] = ELF::EV_CURRENT;
  header.e_ident[ELF::EI_OSABI] = ELF::ELFOSABI_NONE;
  header.e_type = ELF::ET_REL;
  header.e_machine = *machine;
  header.e_version = ELF::EV_CURRENT;
  header.e_shoff = headersOffset;
  header.e_ehsize = sizeof(ELF::Elf64_Ehdr);
  header.e_shentsize = sizeof(ELF::Elf64_Shdr);
  header.e_shnum = kNumSections;
  header.e_shstrndx = kShstrtab;
  static_assert(sizeof(ELF::Elf64_Ehdr) <= 64,
                "the header fits before the data");

  ELF::Elf64_Sym symbols[2];
  std::memset(symbols, 0, sizeof(symbols));
  symbols[1].st_name = 1;
  symbols[1].setBindingAndType(ELF::STB_GLOBAL, ELF::STT_OBJECT);
  symbols[1].st_other = ELF::STV_HIDDEN;
  symbols[1].st_shndx = kWeights;
  symbols[1].st_size = size;

  ELF::Elf64_Shdr sections[kNumSections];
  std::memset(sections, 0, sizeof(sections));
  auto section = [&](SectionIndex index, StringRef name, uint32_t type,
                     uint64_t flags, uint64_t offset, uint64_t bytes,
                     uint64_t align) -> ELF::Elf64_Shdr & {
    ELF::Elf64_Shdr &s = sections[index];
    s.sh_name = nameOf(name);
    s.sh_type = type;
    s.sh_flags = flags;
    s.sh_offset = offset;
    s.sh_size = bytes;
    s.sh_addralign = align;
    return s;
  };
  section(kWeights, ".loom_weights", ELF::SHT_PROGBITS, ELF::SHF_ALLOC,
          weightsOffset, size, 64);
  ELF::Elf64_Shdr &symtab = section(kSymtab, ".symtab", ELF::SHT_SYMTAB, 0,
                                    symtabOffset, symtabSize, 8);
  symtab.sh_link = kStrtab;
  symtab.sh_info = 1; // the first global symbol
  symtab.sh_entsize = sizeof(ELF::Elf64_Sym);
  section(kStrtab, ".strtab", ELF::SHT_STRTAB, 0, strtabOffset, strtab.size(),
          1);
  section(kShstrtab, ".shstrtab", ELF::SHT_STRTAB, 0, shstrtabOffset,
          shstrtab.size(), 1);
  // No executable stack is asked for.
  section(kNoteStack, ".note.GNU-stack", ELF::SHT_PROGBITS, 0, headersOffset, 0,
          1);

  std::string partial = partialPathFor(path, ".partial");
  std::error_code ec;
  raw_fd_ostream os(partial, ec);
  if (ec)
    return makeError("cannot write " + partial + ": " + ec.message());
  uint64_t offset = 0;
  writeStruct(os, header);
  offset += sizeof(header);
  pad(os, offset, weightsOffset);
  weights.writeTo(os);
  offset += size;
  pad(os, offset, 8);
  writeStruct(os, symbols);
  os << strtab << shstrtab;
  offset = shstrtabOffset + shstrtab.size();
  pad(os, offset, 8);
  writeStruct(os, sections);
  if (std::error_code closed = closeChecked(os)) {
    sys::fs::remove(partial);
    return makeError("cannot write " + path + ": " + closed.message());
  }
  if (std::error_code moved = moveIntoPlace(partial, path))
    return makeError("cannot write " + path + ": " + moved.message());
  return Error::success();
}
