// RUN: not loom-opt %s --loom-gpu-map-row-reductions="block-size=16" 2>&1 | FileCheck %s
// CHECK: error: loom-gpu-map-row-reductions: block-size must be in [32, 1024], got 16
module {}
