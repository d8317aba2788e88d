//===- Files.h - Putting finished output files in place ---------*- C++ -*-===//
//
// Part of Loom. Tools write an output next to its destination and rename
// it into place, so that a failure never leaves a partial file. Renaming
// onto something that is not a regular file (`-o /dev/null`, a FIFO, a
// terminal) would replace that device or pipe with a regular file (as root,
// /dev/null itself): such a destination gets the contents written into it.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_SUPPORT_FILES_H
#define LOOM_SUPPORT_FILES_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_fd_ostream;
} // namespace llvm

#include <string>
#include <system_error>

namespace loom {

/// Whether \p path exists and is not a regular file (a device, a FIFO, a
/// socket): it must be written into, never renamed onto.
bool isSpecialFile(llvm::StringRef path);

/// Where to write the output for \p path before it is complete: beside it
/// (`<path><suffix>`), or, for a special file, a fresh temporary file.
std::string partialPathFor(llvm::StringRef path, llvm::StringRef suffix);

/// Puts the finished file \p from in place at \p to: a rename, or for a
/// special destination its contents copied into it and \p from removed.
std::error_code moveIntoPlace(llvm::StringRef from, llvm::StringRef to);

/// Closes \p os and returns the error of any failed write (a full disk),
/// cleared on the stream: one destroyed with its error still set ends the
/// process with report_fatal_error.
std::error_code closeChecked(llvm::raw_fd_ostream &os);

} // namespace loom

#endif // LOOM_SUPPORT_FILES_H
