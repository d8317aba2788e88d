// The interpreter rounds each f16 and bf16 result once to its format, as
// compiled code stores it (docs/Interpreter.md, "Narrow floats"): an add
// and a product of bf16 operands, computed in the domain, then rounded
// (ties to even). bf16 has 8 significant bits: at 1 its spacing is 2^-7.
//
// RUN: loom-run %s --entry bf16 --print-values 8 --domain f32 | FileCheck %s --check-prefix=BF16
// RUN: loom-run %s --entry bf16 --print-values 8 --domain f64 | FileCheck %s --check-prefix=BF16
// RUN: loom-run %s --entry f16 --print-values 8 | FileCheck %s --check-prefix=F16
// The exact domain has no precision to lose: modp keeps the sums.
// RUN: loom-run %s --entry exact --print-values 8 --domain modp | FileCheck %s --check-prefix=MODP

// 1 + 3 * 2^-9 = 1.005859375 is nearer 1.0078125 than 1; 1 + 2^-8 is a tie,
// to the even 1; 256 + 1 a tie at spacing 2, to the even 256; 2^-7 + 1 is
// representable. The product [1, 2^-9, 2^-9, 2^-9] . [1, 1, 1, 1] sums in
// the domain, 1 + 3 * 2^-9, and rounds once, to 1.0078125, as an f32
// accumulator does; summed in bf16 each partial sum would round back to 1
// (and unrounded it would print 1.00586).
// BF16: result0: tensor<4xf32>
// BF16-NEXT: values: 1.00781 1 256 1.00781
// BF16: result1: tensor<1x1xf32>
// BF16-NEXT: values: 1.00781
func.func @bf16() -> (tensor<4xf32>, tensor<1x1xf32>) {
  %a = tg.constant dense<[1.0, 1.0, 256.0, 1.0]> : tensor<4xbf16>
  %b = tg.constant dense<[0.005859375, 0.00390625, 1.0, 0.0078125]> : tensor<4xbf16>
  %s = tg.add %a, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %f = tg.cast %s : tensor<4xbf16> to tensor<4xf32>
  %r = tg.constant dense<[[1.0, 0.001953125, 0.001953125, 0.001953125]]> : tensor<1x4xbf16>
  %c = tg.constant dense<[[1.0], [1.0], [1.0], [1.0]]> : tensor<4x1xbf16>
  %p = tg.matmul %r, %c : (tensor<1x4xbf16>, tensor<4x1xbf16>) -> tensor<1x1xbf16>
  %g = tg.cast %p : tensor<1x1xbf16> to tensor<1x1xf32>
  return %f, %g : tensor<4xf32>, tensor<1x1xf32>
}

// f16 has 11 significant bits: at 1 its spacing is 2^-10. 1 + 3 * 2^-12
// rounds to 1 + 2^-10; 2048 + 1 is a tie at spacing 2, to 2048; 65504 +
// 32 overflows to infinity (the largest f16 is 65504).
// F16: values: 1.00098 2048 inf
func.func @f16() -> tensor<3xf32> {
  %a = tg.constant dense<[1.0, 2048.0, 65504.0]> : tensor<3xf16>
  %b = tg.constant dense<[0.000732421875, 1.0, 32.0]> : tensor<3xf16>
  %s = tg.add %a, %b : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %f = tg.cast %s : tensor<3xf16> to tensor<3xf32>
  return %f : tensor<3xf32>
}

// MODP: values: 257
func.func @exact() -> tensor<1xf32> {
  %a = tg.constant dense<[256.0]> : tensor<1xbf16>
  %b = tg.constant dense<[1.0]> : tensor<1xbf16>
  %s = tg.add %a, %b : (tensor<1xbf16>, tensor<1xbf16>) -> tensor<1xbf16>
  %f = tg.cast %s : tensor<1xbf16> to tensor<1xf32>
  return %f : tensor<1xf32>
}
