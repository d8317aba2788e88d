//===- Files.cpp - Putting finished output files in place -----------------===//
//
// Part of Loom. See loom/Support/Files.h.
//
//===----------------------------------------------------------------------===//

#include "loom/Support/Files.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

bool loom::isSpecialFile(StringRef path) {
  sys::fs::file_status status;
  if (sys::fs::status(path, status))
    return false; // absent (or unreadable): a rename creates it
  return status.type() != sys::fs::file_type::regular_file;
}

std::string loom::partialPathFor(StringRef path, StringRef suffix) {
  if (!isSpecialFile(path))
    return (path + suffix).str();
  SmallString<128> tmp;
  if (sys::fs::createTemporaryFile("loom-output", suffix.ltrim('.'), tmp))
    return (path + suffix).str(); // the write reports the error
  return std::string(tmp);
}

std::error_code loom::moveIntoPlace(StringRef from, StringRef to) {
  if (!isSpecialFile(to))
    return sys::fs::rename(from, to);
  auto contents = MemoryBuffer::getFile(from, /*IsText=*/false,
                                        /*RequiresNullTerminator=*/false);
  if (!contents)
    return contents.getError();
  std::error_code ec;
  {
    raw_fd_ostream os(to, ec, sys::fs::OF_Append);
    if (!ec)
      os << (*contents)->getBuffer();
  }
  sys::fs::remove(from);
  return ec;
}

std::error_code loom::closeChecked(llvm::raw_fd_ostream &os) {
  os.close();
  if (!os.has_error())
    return {};
  std::error_code ec = os.error();
  os.clear_error();
  return ec;
}
