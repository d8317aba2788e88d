//===- ArtifactImports.cpp - What an artifact may import ------------------===//
//
// Part of Loom. See ArtifactImports.h and docs/Artifact.md.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/ArtifactImports.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ELFObjectFile.h"

using namespace llvm;

namespace {

Error makeError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Imports.def as a set of names.
const StringSet<> &artifactImports() {
  static const StringSet<> names = [] {
    StringSet<> set;
#define LOOM_ARTIFACT_IMPORT(Name, Library) set.insert(#Name);
#define LOOM_ARTIFACT_MATH_IMPORT(Name)                                        \
  set.insert(#Name);                                                           \
  set.insert(#Name "f");
#include "loom/Artifact/Imports.def"
    return set;
  }();
  return names;
}

} // namespace

bool loom::compiler::isArtifactImport(StringRef symbol) {
  return artifactImports().contains(symbol);
}

Expected<std::vector<std::string>>
loom::compiler::undefinedDynamicSymbols(MemoryBufferRef object) {
  auto file = object::ObjectFile::createObjectFile(object);
  if (!file)
    return makeError("cannot read " + object.getBufferIdentifier() + ": " +
                     toString(file.takeError()));
  auto *elf = dyn_cast<object::ELFObjectFileBase>(file->get());
  if (!elf)
    return makeError(object.getBufferIdentifier() + " is not an ELF file");
  std::vector<std::string> undefined;
  for (const object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators()) {
    Expected<uint32_t> flags = symbol.getFlags();
    if (!flags)
      return flags.takeError();
    if (!(*flags & object::SymbolRef::SF_Undefined))
      continue;
    Expected<StringRef> name = symbol.getName();
    if (!name)
      return name.takeError();
    undefined.push_back(name->str());
  }
  llvm::sort(undefined);
  undefined.erase(llvm::unique(undefined), undefined.end());
  return undefined;
}

Error loom::compiler::checkArtifactImports(MemoryBufferRef object) {
  auto undefined = undefinedDynamicSymbols(object);
  if (!undefined)
    return undefined.takeError();
  std::vector<std::string> foreign;
  for (const std::string &name : *undefined)
    if (!isArtifactImport(name))
      foreign.push_back(name);
  if (foreign.empty())
    return Error::success();
  return makeError(
      "the artifact would not load: it imports " +
      Twine(foreign.size() == 1 ? "symbol " : "symbols ") +
      join(foreign, ", ") +
      ", which no Loom runtime provides (an artifact may import only the C "
      "library and libm functions of include/loom/Artifact/Imports.def; "
      "docs/Artifact.md, \"What an artifact imports\")");
}
