//===- Communicator.cpp - The communicator seam's out-of-line parts -------===//
//
// Part of Loom.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"

using namespace loom::rt::comm;

Communicator::~Communicator() = default;
