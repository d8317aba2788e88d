// --tg-place-backends: sites (ops a library runs), every backend's options,
// a search under a cost model, fragments formed as placed; the placement as
// JSON (written, read back to the same IR, refused when it belongs to
// another model) and the report.
//
// RUN: loom-opt %s --tg-place-backends="cost=analytic target=h100 placement-out=%t.json report=%t.report" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report
// RUN: FileCheck %s --check-prefix=JSON < %t.json
//
// The placement read back forms the same fragments without pricing anything.
// RUN: loom-opt %s --tg-place-backends="cost=analytic target=h100" -o %t.searched.mlir
// RUN: loom-opt %s --tg-place-backends="placement-in=%t.json" -o %t.reloaded.mlir
// RUN: diff %t.searched.mlir %t.reloaded.mlir
//
// Only the backends named: no oneDNN fragment.
// RUN: loom-opt %s --tg-place-backends="cost=analytic target=h100 backends=openblas" | FileCheck %s --check-prefix=BLAS
//
// Errors: a placement of another model, a file that is not one, unknown
// names, a measured model without its database.
// RUN: sed -e 's/512/384/g' %s > %t.other.mlir
// RUN: not loom-opt %t.other.mlir --tg-place-backends="placement-in=%t.json" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: echo '{"format": "onnx"}' > %t.bad.json
// RUN: not loom-opt %s --tg-place-backends="placement-in=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BADFILE
// RUN: not loom-opt %s --tg-place-backends="backends=cudnn" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not loom-opt %s --tg-place-backends="cost=measured" 2>&1 | FileCheck %s --check-prefix=NODB
// RUN: not loom-opt %s --tg-place-backends="cost=guess" 2>&1 | FileCheck %s --check-prefix=NOCOST

// CHECK-LABEL: func.func @block
// CHECK: tg.fragment <onednn>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.conv
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.relu
// CHECK-NEXT: tg.yield
// CHECK: tg.fragment <codegen>
// CHECK: tg.global_avgpool
// CHECK: tg.fragment <onednn>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tg.matmul
// CHECK-NEXT: tg.add
// CHECK-NEXT: tg.gelu
// CHECK-NEXT: tg.yield
// CHECK-NOT: tg.fragment
// CHECK: return

// REPORT: placement of @block: 3 sites
// REPORT: onednn conv+sum+relu {{.*}} codegen conv+add+relu
// REPORT: global_avgpool {{.*}} global_avgpool
// REPORT: onednn matmul+bias+gelu {{.*}} codegen matmul+add+gelu {{.*}} openblas matmul
// REPORT: sites total: {{.*}} (analytic:h100)

// JSON: "cost_model": "analytic:h100"
// JSON: "format": "loom-placement"
// JSON: "anchor":
// JSON: "backend": "onednn"
// JSON: "op": "tg.conv"
// JSON: "pattern": "conv+sum+relu"
// JSON: "signature": "tg.conv

// BLAS-LABEL: func.func @block
// BLAS-NOT: <onednn>
// BLAS: tg.fragment <codegen>
// BLAS-NEXT: ^bb0
// BLAS-NEXT: tg.conv

// OTHER: error: placement {{.*}}.json: fragment at op {{[0-9]+}} (tg.matmul) does not match this model's site
// BADFILE: error: placement {{.*}}bad.json: not a Loom placement
// UNKNOWN: error: tg-place-backends: unknown backend 'cudnn'
// NODB: error: tg-place-backends: cost=measured needs cost-db=<file.json>
// NOCOST: error: tg-place-backends: cost must be analytic or measured, got 'guess'
func.func @block(%x: tensor<1x64x28x28xf32>, %r: tensor<1x64x28x28xf32>, %w: tensor<64x64x3x3xf32>, %h: tensor<256x512xf32>, %fc: tensor<512x512xf32>, %b: tensor<512xf32>) -> (tensor<1x64x1x1xf32>, tensor<256x512xf32>) {
  %c = tg.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x28x28xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x28x28xf32>
  %s = tg.add %c, %r : (tensor<1x64x28x28xf32>, tensor<1x64x28x28xf32>) -> tensor<1x64x28x28xf32>
  %y = tg.relu %s : tensor<1x64x28x28xf32>
  %p = tg.global_avgpool %y : (tensor<1x64x28x28xf32>) -> tensor<1x64x1x1xf32>
  %m = tg.matmul %h, %fc : (tensor<256x512xf32>, tensor<512x512xf32>) -> tensor<256x512xf32>
  %a = tg.add %m, %b : (tensor<256x512xf32>, tensor<512xf32>) -> tensor<256x512xf32>
  %g = tg.gelu %a : tensor<256x512xf32>
  return %p, %g : tensor<1x64x1x1xf32>, tensor<256x512xf32>
}
