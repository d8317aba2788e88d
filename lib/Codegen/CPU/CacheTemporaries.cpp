//===- CacheTemporaries.cpp - Kernels' large temporaries re-used ----------===//
//
// Part of Loom. See LoomCacheTemporaries in include/loom/Codegen/CPU/Passes.td.
//
//===----------------------------------------------------------------------===//

#include "loom/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Parser/Parser.h"

namespace loom::codegen::cpu {
#define GEN_PASS_DEF_LOOMCACHETEMPORARIES
#include "loom/Codegen/CPU/Passes.h.inc"
} // namespace loom::codegen::cpu

using namespace mlir;
using namespace loom;

namespace {

/// What finalize-memref-to-llvm calls with use-generic-functions.
constexpr llvm::StringLiteral kAlloc("_mlir_memref_to_llvm_alloc");
constexpr llvm::StringLiteral kFree("_mlir_memref_to_llvm_free");

/// The allocator. A block is a 64-byte header holding the size asked for,
/// then the caller's bytes (malloc's 16-byte alignment is kept; the
/// lowering aligns within the size it asks for). The cache is 16 slots of
/// block pointers (null: empty) taken and filled by compare-and-exchange;
/// only blocks of 64 KiB to 16 MiB are cached, so it holds at most 256 MiB
/// and small blocks stay with malloc's own free lists. An allocation takes
/// the first cached block of exactly its size (one of another size it
/// finds on the way is put back, or freed if its slot was filled
/// meanwhile); a free offers the block to the first empty slot, else frees
/// it.
constexpr llvm::StringLiteral kAllocator = R"mlir(
module {
  llvm.mlir.global internal @__loom_cached_temporaries() {alignment = 64 : i64} : !llvm.array<16 x ptr> {
    %0 = llvm.mlir.zero : !llvm.array<16 x ptr>
    llvm.return %0 : !llvm.array<16 x ptr>
  }
  llvm.func @malloc(i64) -> !llvm.ptr
  llvm.func @free(!llvm.ptr)
  llvm.func internal @__loom_cacheable(%size: i64) -> i1 {
    %least = llvm.mlir.constant(65536 : i64) : i64
    %most = llvm.mlir.constant(16777216 : i64) : i64
    %large = llvm.icmp "uge" %size, %least : i64
    %small = llvm.icmp "ule" %size, %most : i64
    %fits = llvm.and %large, %small : i1
    llvm.return %fits : i1
  }
  llvm.func internal @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %slots = llvm.mlir.constant(16 : i64) : i64
    %header = llvm.mlir.constant(64 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    %table = llvm.mlir.addressof @__loom_cached_temporaries : !llvm.ptr
    %cacheable = llvm.call @__loom_cacheable(%size) : (i64) -> i1
    llvm.cond_br %cacheable, ^scan(%zero : i64), ^fresh
  ^scan(%i: i64):
    %end = llvm.icmp "eq" %i, %slots : i64
    llvm.cond_br %end, ^fresh, ^look
  ^look:
    %slot = llvm.getelementptr %table[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<16 x ptr>
    %block = llvm.load %slot atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> !llvm.ptr
    %empty = llvm.icmp "eq" %block, %null : !llvm.ptr
    llvm.cond_br %empty, ^next, ^take
  ^take:
    %taken = llvm.cmpxchg %slot, %block, %null acq_rel monotonic : !llvm.ptr, !llvm.ptr
    %owned = llvm.extractvalue %taken[1] : !llvm.struct<(ptr, i1)>
    llvm.cond_br %owned, ^check, ^next
  ^check:
    %held = llvm.load %block {alignment = 8 : i64} : !llvm.ptr -> i64
    %fits = llvm.icmp "eq" %held, %size : i64
    llvm.cond_br %fits, ^reuse, ^giveback
  ^reuse:
    %reused = llvm.getelementptr %block[%header] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    llvm.return %reused : !llvm.ptr
  ^giveback:
    %back = llvm.cmpxchg %slot, %null, %block acq_rel monotonic : !llvm.ptr, !llvm.ptr
    %kept = llvm.extractvalue %back[1] : !llvm.struct<(ptr, i1)>
    llvm.cond_br %kept, ^next, ^release
  ^release:
    llvm.call @free(%block) : (!llvm.ptr) -> ()
    llvm.br ^next
  ^next:
    %i1 = llvm.add %i, %one : i64
    llvm.br ^scan(%i1 : i64)
  ^fresh:
    %bytes = llvm.add %size, %header : i64
    %new = llvm.call @malloc(%bytes) : (i64) -> !llvm.ptr
    %failed = llvm.icmp "eq" %new, %null : !llvm.ptr
    llvm.cond_br %failed, ^nomemory, ^record
  ^nomemory:
    llvm.return %null : !llvm.ptr
  ^record:
    llvm.store %size, %new {alignment = 8 : i64} : i64, !llvm.ptr
    %user = llvm.getelementptr %new[%header] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    llvm.return %user : !llvm.ptr
  }
  llvm.func internal @_mlir_memref_to_llvm_free(%user: !llvm.ptr) {
    %back = llvm.mlir.constant(-64 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    %none = llvm.icmp "eq" %user, %null : !llvm.ptr
    llvm.cond_br %none, ^done, ^sized
  ^sized:
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %slots = llvm.mlir.constant(16 : i64) : i64
    %table = llvm.mlir.addressof @__loom_cached_temporaries : !llvm.ptr
    %block = llvm.getelementptr %user[%back] : (!llvm.ptr, i64) -> !llvm.ptr, i8
    %size = llvm.load %block {alignment = 8 : i64} : !llvm.ptr -> i64
    %cacheable = llvm.call @__loom_cacheable(%size) : (i64) -> i1
    llvm.cond_br %cacheable, ^scan(%zero : i64), ^release
  ^scan(%i: i64):
    %end = llvm.icmp "eq" %i, %slots : i64
    llvm.cond_br %end, ^release, ^offer
  ^offer:
    %slot = llvm.getelementptr %table[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<16 x ptr>
    %put = llvm.cmpxchg %slot, %null, %block acq_rel monotonic : !llvm.ptr, !llvm.ptr
    %kept = llvm.extractvalue %put[1] : !llvm.struct<(ptr, i1)>
    %i1 = llvm.add %i, %one : i64
    llvm.cond_br %kept, ^done, ^scan(%i1 : i64)
  ^release:
    llvm.call @free(%block) : (!llvm.ptr) -> ()
    llvm.br ^done
  ^done:
    llvm.return
  }
  llvm.func internal @__loom_release_cached_temporaries() {
    %zero = llvm.mlir.constant(0 : i64) : i64
    %one = llvm.mlir.constant(1 : i64) : i64
    %slots = llvm.mlir.constant(16 : i64) : i64
    %null = llvm.mlir.zero : !llvm.ptr
    %table = llvm.mlir.addressof @__loom_cached_temporaries : !llvm.ptr
    llvm.br ^scan(%zero : i64)
  ^scan(%i: i64):
    %end = llvm.icmp "eq" %i, %slots : i64
    llvm.cond_br %end, ^done, ^drop
  ^drop:
    %slot = llvm.getelementptr %table[0, %i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<16 x ptr>
    %block = llvm.atomicrmw xchg %slot, %null acq_rel : !llvm.ptr, !llvm.ptr
    llvm.call @free(%block) : (!llvm.ptr) -> ()
    %i1 = llvm.add %i, %one : i64
    llvm.br ^scan(%i1 : i64)
  ^done:
    llvm.return
  }
  llvm.mlir.global_dtors dtors = [@__loom_release_cached_temporaries], priorities = [65535 : i32], data = [#llvm.zero]
}
)mlir";

/// The declaration \p name in \p module, null if absent; fails (with an
/// error) where \p name is something else or already has a body.
FailureOr<LLVM::LLVMFuncOp> declaration(ModuleOp module, StringRef name) {
  Operation *symbol = module.lookupSymbol(name);
  if (!symbol)
    return LLVM::LLVMFuncOp();
  auto fn = dyn_cast<LLVM::LLVMFuncOp>(symbol);
  if (!fn || !fn.isExternal())
    return symbol->emitError("loom-cache-temporaries: '")
           << name << "' is already defined";
  return fn;
}

/// Whether \p op declares a function defined elsewhere (malloc, free).
bool isExternalFunction(Operation &op) {
  auto fn = dyn_cast<LLVM::LLVMFuncOp>(op);
  return fn && fn.isExternal();
}

struct CacheTemporaries
    : public codegen::cpu::impl::LoomCacheTemporariesBase<CacheTemporaries> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<LLVM::LLVMFuncOp> alloc = declaration(module, kAlloc);
    FailureOr<LLVM::LLVMFuncOp> release = declaration(module, kFree);
    if (failed(alloc) || failed(release))
      return signalPassFailure();
    if (!*alloc && !*release)
      return;
    OwningOpRef<ModuleOp> allocator =
        parseSourceString<ModuleOp>(kAllocator, ParserConfig(&getContext()));
    if (!allocator) {
      module.emitError("loom-cache-temporaries: the allocator does not parse");
      return signalPassFailure();
    }
    for (Operation &op : allocator->getOps())
      if (auto symbol = dyn_cast<SymbolOpInterface>(op);
          symbol && !isExternalFunction(op) &&
          module.lookupSymbol(symbol.getName()) &&
          symbol.getName() != kAlloc && symbol.getName() != kFree) {
        module.emitError("loom-cache-temporaries: the module already has '")
            << symbol.getName() << "'";
        return signalPassFailure();
      }
    if (*alloc)
      alloc->erase();
    if (*release)
      release->erase();
    // A module with destructors of its own keeps them; the cached blocks
    // then live until the process exits.
    bool hasDestructors = !module.getOps<LLVM::GlobalDtorsOp>().empty();
    Block *body = module.getBody();
    for (Operation &op : llvm::make_early_inc_range(allocator->getOps())) {
      if ((isExternalFunction(op) &&
           module.lookupSymbol(cast<LLVM::LLVMFuncOp>(op).getName())) ||
          (isa<LLVM::GlobalDtorsOp>(op) && hasDestructors))
        continue;
      op.moveBefore(body, body->end());
    }
  }
};

} // namespace
