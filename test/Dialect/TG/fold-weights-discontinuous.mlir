// --tg-fold-weights computes each op in its own element type
// (docs/Interpreter.md, "Compile-time evaluation"): a fold never changes a
// result the unfolded program would give. Each case is a small function
// whose values are constants (@folded_*: --tg-fold-weights computes it) and
// the same function with the values as run-time inputs (@runtime_*, given
// them by @values_*); their results must agree bit for bit (--tolerance 0)
// on the interpreter in its f32 domain. Each case is a discontinuous
// function (a cast to an integer, floor, ceil, rounding, a comparison, a
// select, an argmax, a remainder) after f32 arithmetic whose result is an
// integer, or a tie, in f32 but not in f64: evaluated in f64, as the pass
// did, every f32 case gave another answer. f64_div is the other side of the
// rule: an op entirely in f64 stays in f64. The expected answers are
// checked too.
//
// DEFINE: %{case} =
// DEFINE: %{domain} = f32
// DEFINE: %{agree} = loom-run %s --domain %{domain} --entry values_%{case} --outputs %t/%{case}-in.safetensors > /dev/null && loom-run %s --domain %{domain} --entry runtime_%{case} --inputs %t/%{case}-in.safetensors --outputs %t/%{case}-want.safetensors > /dev/null && loom-run %t/folded.mlir --domain %{domain} --entry folded_%{case} --compare %t/%{case}-want.safetensors --tolerance 0
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-opt %s --tg-fold-weights --canonicalize -o %t/folded.mlir
// RUN: FileCheck %s --check-prefix=FOLDED < %t/folded.mlir
// REDEFINE: %{case} = cast_div
// RUN: %{agree} | FileCheck %s --check-prefix=CAST_DIV
// REDEFINE: %{case} = floor_div
// RUN: %{agree} | FileCheck %s --check-prefix=FLOOR_DIV
// REDEFINE: %{case} = ceil_mul
// RUN: %{agree} | FileCheck %s --check-prefix=CEIL_MUL
// REDEFINE: %{case} = round_mul
// RUN: %{agree} | FileCheck %s --check-prefix=ROUND_MUL
// REDEFINE: %{case} = compare_mul
// RUN: %{agree} | FileCheck %s --check-prefix=COMPARE_MUL
// REDEFINE: %{case} = select_mul
// RUN: %{agree} | FileCheck %s --check-prefix=SELECT_MUL
// REDEFINE: %{case} = argmax_tie
// RUN: %{agree} | FileCheck %s --check-prefix=ARGMAX_TIE
// REDEFINE: %{case} = fmod_mul
// RUN: %{agree} | FileCheck %s --check-prefix=FMOD_MUL
// REDEFINE: %{case} = mod_int
// RUN: %{agree} | FileCheck %s --check-prefix=MOD_INT
// REDEFINE: %{case} = f64_div
// REDEFINE: %{domain} = f64
// RUN: %{agree} | FileCheck %s --check-prefix=F64_DIV
// REDEFINE: %{domain} = f32

// 0.5 / 0.1f is 5 in f32, 4.99999993 in f64; a cast to an integer truncates.
// CAST_DIV: values: 5{{$}}
// CAST_DIV: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_cast_div
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_cast_div() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_cast_div() -> (tensor<i64>) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = tg.cast %q : tensor<f32> to tensor<i64>
  return %r : tensor<i64>
}
func.func @runtime_cast_div(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<i64>) {
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = tg.cast %q : tensor<f32> to tensor<i64>
  return %r : tensor<i64>
}

// Floor of the same quotient, as the importer writes Floor at run time (tg.mod).
// FLOOR_DIV: values: 5{{$}}
// FLOOR_DIV: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_floor_div
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_floor_div() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_floor_div() -> (tensor<f32>) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %q, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %q, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %ffloor : tensor<f32>
}
func.func @runtime_floor_div(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<f32>) {
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %q, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %q, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %ffloor : tensor<f32>
}

// 1.00199997 * 2.99401212 is 3 in f32, 3.00000006 in f64; ceil is -floor(-x).
// CEIL_MUL: values: 3{{$}}
// CEIL_MUL: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_ceil_mul
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_ceil_mul() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<1.00199997> : tensor<f32>
  %b = tg.constant dense<2.99401212> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_ceil_mul() -> (tensor<f32>) {
  %a = tg.constant dense<1.00199997> : tensor<f32>
  %b = tg.constant dense<2.99401212> : tensor<f32>
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %m = tg.neg %p : tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %m, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %m, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = tg.neg %ffloor : tensor<f32>
  return %c : tensor<f32>
}
func.func @runtime_ceil_mul(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<f32>) {
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %m = tg.neg %p : tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %m, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %m, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  %c = tg.neg %ffloor : tensor<f32>
  return %c : tensor<f32>
}

// 1.00300002 * 3.48953128 is 3.5 in f32, 3.49999995 in f64; rounded half up as floor(x + 0.5).
// ROUND_MUL: values: 4{{$}}
// ROUND_MUL: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_round_mul
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_round_mul() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<1.00300002> : tensor<f32>
  %b = tg.constant dense<3.48953128> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_round_mul() -> (tensor<f32>) {
  %a = tg.constant dense<1.00300002> : tensor<f32>
  %b = tg.constant dense<3.48953128> : tensor<f32>
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %x = tg.add %p, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %x, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %x, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %ffloor : tensor<f32>
}
func.func @runtime_round_mul(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<f32>) {
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %half = tg.constant dense<0.5> : tensor<f32>
  %x = tg.add %p, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fone = tg.constant dense<1.0> : tensor<f32>
  %fzero = tg.constant dense<0.0> : tensor<f32>
  %ffrac = tg.mod %x, %fone {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ftrunc = tg.sub %x, %ffrac : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %fneg = tg.less %ffrac, %fzero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %fdown = tg.sub %ftrunc, %fone : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %ffloor = tg.select %fneg, %fdown, %ftrunc : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %ffloor : tensor<f32>
}

// 1.00100005 * 2.99700284 is 3 in f32, 2.99999998 in f64: equal, less and greater_equal to 3.
// COMPARE_MUL: values: 1{{$}}
// COMPARE_MUL: values: 0{{$}}
// COMPARE_MUL: values: 1{{$}}
// COMPARE_MUL: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_compare_mul
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_compare_mul() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_compare_mul() -> (tensor<i1>, tensor<i1>, tensor<i1>) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %three = tg.constant dense<3.0> : tensor<f32>
  %eq = tg.equal %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %lt = tg.less %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %ge = tg.greater_equal %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %eq, %lt, %ge : tensor<i1>, tensor<i1>, tensor<i1>
}
func.func @runtime_compare_mul(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<i1>, tensor<i1>, tensor<i1>) {
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %three = tg.constant dense<3.0> : tensor<f32>
  %eq = tg.equal %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %lt = tg.less %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %ge = tg.greater_equal %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %eq, %lt, %ge : tensor<i1>, tensor<i1>, tensor<i1>
}

// Where on the comparison: 20 in f32, 10 in f64.
// SELECT_MUL: values: 20{{$}}
// SELECT_MUL: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_select_mul
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_select_mul() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_select_mul() -> (tensor<f32>) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %three = tg.constant dense<3.0> : tensor<f32>
  %lt = tg.less %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %ten = tg.constant dense<10.0> : tensor<f32>
  %twenty = tg.constant dense<20.0> : tensor<f32>
  %r = tg.select %lt, %ten, %twenty : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
func.func @runtime_select_mul(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<f32>) {
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %three = tg.constant dense<3.0> : tensor<f32>
  %lt = tg.less %p, %three : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %ten = tg.constant dense<10.0> : tensor<f32>
  %twenty = tg.constant dense<20.0> : tensor<f32>
  %r = tg.select %lt, %ten, %twenty : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// ArgMax of [1, 1.00199997] * [3, 2.99401212] as the importer writes it (the greatest of -index where equal to the maximum): a tie in f32 (the first, 0), 1 in f64. (Elementwise, without data movement between: a reshape is folded by copying the bytes of its operand's constant, which would round an unrounded product.)
// ARGMAX_TIE: values: 0{{$}}
// ARGMAX_TIE: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_argmax_tie
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_argmax_tie() -> (tensor<2xf32> {tg.name = "a"}, tensor<2xf32> {tg.name = "b"}) {
  %a = tg.constant dense<[1.0, 1.00199997]> : tensor<2xf32>
  %b = tg.constant dense<[3.0, 2.99401212]> : tensor<2xf32>
  return %a, %b : tensor<2xf32>, tensor<2xf32>
}
func.func @folded_argmax_tie() -> (tensor<i64>) {
  %a = tg.constant dense<[1.0, 1.00199997]> : tensor<2xf32>
  %b = tg.constant dense<[3.0, 2.99401212]> : tensor<2xf32>
  %v = tg.mul %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %best = tg.reduce_max %v {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1xf32>
  %eq = tg.equal %v, %best : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xi1>
  %iota = tg.constant dense<[0.0, -1.0]> : tensor<2xf32>
  %none = tg.constant dense<-2.0> : tensor<f32>
  %cand = tg.select %eq, %iota, %none : (tensor<2xi1>, tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %picked = tg.reduce_max %cand {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1xf32>
  %index = tg.neg %picked : tensor<1xf32>
  %i = tg.cast %index : tensor<1xf32> to tensor<1xi64>
  %r = tg.reshape %i : (tensor<1xi64>) -> tensor<i64>
  return %r : tensor<i64>
}
func.func @runtime_argmax_tie(%a: tensor<2xf32> {tg.name = "a"}, %b: tensor<2xf32> {tg.name = "b"}) -> (tensor<i64>) {
  %v = tg.mul %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %best = tg.reduce_max %v {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1xf32>
  %eq = tg.equal %v, %best : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xi1>
  %iota = tg.constant dense<[0.0, -1.0]> : tensor<2xf32>
  %none = tg.constant dense<-2.0> : tensor<f32>
  %cand = tg.select %eq, %iota, %none : (tensor<2xi1>, tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %picked = tg.reduce_max %cand {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<1xf32>
  %index = tg.neg %picked : tensor<1xf32>
  %i = tg.cast %index : tensor<1xf32> to tensor<1xi64>
  %r = tg.reshape %i : (tensor<1xi64>) -> tensor<i64>
  return %r : tensor<i64>
}

// fmod(1.00100005 * 2.99700284, 1): 0 in f32, 0.99999998 in f64.
// FMOD_MUL: values: 0{{$}}
// FMOD_MUL: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_fmod_mul
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_fmod_mul() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_fmod_mul() -> (tensor<f32>) {
  %a = tg.constant dense<1.00100005> : tensor<f32>
  %b = tg.constant dense<2.99700284> : tensor<f32>
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %r = tg.mod %p, %one {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
func.func @runtime_fmod_mul(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<f32>) {
  %p = tg.mul %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %one = tg.constant dense<1.0> : tensor<f32>
  %r = tg.mod %p, %one {fmod = true} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}

// An integer remainder after the cast: 5 mod 5 in f32, 4 mod 5 in f64.
// MOD_INT: values: 0{{$}}
// MOD_INT: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_mod_int
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_mod_int() -> (tensor<f32> {tg.name = "a"}, tensor<f32> {tg.name = "b"}) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}
func.func @folded_mod_int() -> (tensor<i64>) {
  %a = tg.constant dense<0.5> : tensor<f32>
  %b = tg.constant dense<0.100000001> : tensor<f32>
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %i = tg.cast %q : tensor<f32> to tensor<i64>
  %five = tg.constant dense<5> : tensor<i64>
  %r = tg.mod %i, %five : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %r : tensor<i64>
}
func.func @runtime_mod_int(%a: tensor<f32> {tg.name = "a"}, %b: tensor<f32> {tg.name = "b"}) -> (tensor<i64>) {
  %q = tg.div %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %i = tg.cast %q : tensor<f32> to tensor<i64>
  %five = tg.constant dense<5> : tensor<i64>
  %r = tg.mod %i, %five : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %r : tensor<i64>
}

// An op entirely in f64 folds in f64: 0.5 / 0.100000001490116119 is 4.99999993 and casts to 4 (in f32 it would be 5). Checked against the interpreter in its f64 domain, since its f32 domain holds f64 tensors as floats.
// F64_DIV: values: 4{{$}}
// F64_DIV: compare: largest error 0 (tolerance 0)
// FOLDED-LABEL: func.func @folded_f64_div
// FOLDED-NOT: tg.{{[a-z_]+}} %
// FOLDED: return
func.func @values_f64_div() -> (tensor<f64> {tg.name = "a"}, tensor<f64> {tg.name = "b"}) {
  %a = tg.constant dense<0.5> : tensor<f64>
  %b = tg.constant dense<0.100000001490116119384765625> : tensor<f64>
  return %a, %b : tensor<f64>, tensor<f64>
}
func.func @folded_f64_div() -> (tensor<i64>) {
  %a = tg.constant dense<0.5> : tensor<f64>
  %b = tg.constant dense<0.100000001490116119384765625> : tensor<f64>
  %q = tg.div %a, %b : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %r = tg.cast %q : tensor<f64> to tensor<i64>
  return %r : tensor<i64>
}
func.func @runtime_f64_div(%a: tensor<f64> {tg.name = "a"}, %b: tensor<f64> {tg.name = "b"}) -> (tensor<i64>) {
  %q = tg.div %a, %b : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %r = tg.cast %q : tensor<f64> to tensor<i64>
  return %r : tensor<i64>
}
