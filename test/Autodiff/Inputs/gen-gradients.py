#!/usr/bin/env python3
# Writes ../gradients.mlir: one scalar function per gradient case (a weighted
# sum of one op's result) and a loom-run --check-gradients RUN line for each.
cases = []
def T(shape, et="f32"):
    return "tensor<" + "x".join(map(str, shape)) + ("x" if shape else "") + et + ">"
def case(name, args, body, outs, et="f32"):
    cases.append((name, args, body, outs, et))
def un(op, shape=(2,3,4), attrs="", pre=None, suffix=""):
    body=[]; x="%x"
    if pre: body.append(pre); x="%p"
    body.append(f"%y = tg.{op} {x}{attrs} : {T(shape)}")
    case(op + suffix, [("x",shape)], body, shape)
for op in ["relu","sigmoid","tanh","exp","neg","erf","softplus","hardswish"]:
    un(op)
pos = "%h = tg.mul %x, %x : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>\n  %half = tg.constant dense<0.5> : tensor<f32>\n  %p = tg.add %h, %half : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>"
for op in ["log","sqrt","rsqrt"]:
    un(op, pre=pos)
un("gelu")
un("gelu", attrs=" {tanh_approximation = true}", suffix="_tanh")
un("clip", attrs=" {min = -0.3 : f64, max = 0.4 : f64}")
un("hardsigmoid", attrs=" {alpha = 0.7 : f64, beta = 0.4 : f64}")
case("hardswish_wide", [("x",(2,3,4))], ["%s = tg.constant dense<5.0> : tensor<f32>",
     "%p = tg.mul %x, %s : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>",
     "%y = tg.hardswish %p : tensor<2x3x4xf32>"], (2,3,4))
def bin(op, a, b, out, pre_b=None):
    body=[]; rb="%b"
    if pre_b: body += pre_b; rb="%q"
    body.append(f"%y = tg.{op} %a, {rb} : ({T(a)}, {T(b)}) -> {T(out)}")
    case(f"{op}_broadcast", [("a",a),("b",b)], body, out)
for op in ["add","sub","mul","max","min"]:
    bin(op, (2,3,4), (3,1), (2,3,4))
case("add_both_broadcast", [("a",(3,1)),("b",(1,4))], ["%y = tg.add %a, %b : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>"], (3,4))
bpos = ["%h = tg.mul %b, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>", "%one = tg.constant dense<1.0> : tensor<f32>", "%q = tg.add %h, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>"]
bin("div", (2,3,4), (4,), (2,3,4), pre_b=bpos)
case("pow", [("a",(3,4)),("b",(3,4))], ["%h = tg.mul %a, %a : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>", "%one = tg.constant dense<0.5> : tensor<f32>", "%p = tg.add %h, %one : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>", "%y = tg.pow %p, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>"], (3,4))
case("select", [("a",(3,4)),("b",(4,))], ["%z = tg.constant dense<0.0> : tensor<f32>", "%c = tg.greater %a, %z : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xi1>", "%y = tg.select %c, %a, %b : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>"], (3,4))
case("cast_f64", [("a",(3,4))], ["%d = tg.cast %a : tensor<3x4xf32> to tensor<3x4xf64>", "%y = tg.exp %d : tensor<3x4xf64>"], (3,4), "f64")
case("matmul_batched_broadcast", [("a",(2,3,5)),("b",(5,4))], ["%y = tg.matmul %a, %b : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>"], (2,3,4))
case("matmul_batch_both", [("a",(2,1,3,5)),("b",(3,5,4))], ["%y = tg.matmul %a, %b : (tensor<2x1x3x5xf32>, tensor<3x5x4xf32>) -> tensor<2x3x3x4xf32>"], (2,3,3,4))
def conv(name, x, w, bias, attrs, out):
    args=[("x",x),("w",w)]; ops="%x, %w"; types=f"{T(x)}, {T(w)}"
    if bias:
        args.append(("bias",(w[0],))); ops+=", %bias"; types+=f", {T((w[0],))}"
    case(name, args, [f"%y = tg.conv {ops} {{{attrs}}} : ({types}) -> {T(out)}"], out)
conv("conv_basic", (2,3,6,5), (4,3,3,3), True, "pads = array<i64: 1, 1, 1, 1>", (2,4,6,5))
conv("conv_stride2_asym_pad", (1,3,7,6), (4,3,3,2), False, "strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 1>", (1,4,3,3))
conv("conv_dilation", (1,2,8,7), (3,2,3,3), True, "dilations = array<i64: 2, 2>, pads = array<i64: 2, 1, 2, 1>", (1,3,8,5))
conv("conv_groups", (2,4,5,5), (6,2,3,3), True, "groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 1>", (2,6,3,5))
conv("conv_depthwise_relu", (1,3,6,6), (3,1,3,3), True, "groups = 3 : i64, pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation relu>", (1,3,6,6))
conv("conv_1x1_pad_sigmoid", (1,2,4,4), (3,2,1,1), True, "pads = array<i64: 1, 1, 1, 1>, activation = #tg<activation sigmoid>", (1,3,6,6))
conv("conv_patches", (2,3,9,8), (5,3,3,2), True, "strides = array<i64: 3, 3>", (2,5,3,3))
conv("conv_patches_gaps_pads", (1,2,9,9), (3,2,2,2), False, "strides = array<i64: 3, 2>, pads = array<i64: 1, 0, 0, 1>", (1,3,3,5))
conv("conv_stride3_tanh", (1,2,8,8), (2,2,2,2), False, "strides = array<i64: 3, 3>, activation = #tg<activation tanh>", (1,2,3,3))
case("maxpool_overlap_pad", [("x",(1,2,7,7))], ["%y = tg.maxpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>"], (1,2,4,4))
case("maxpool_2x2", [("x",(2,3,4,6))], ["%y = tg.maxpool %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x4x6xf32>) -> tensor<2x3x2x3xf32>"], (2,3,2,3))
case("avgpool_pad_excluded", [("x",(1,2,5,5))], ["%y = tg.avgpool %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>"], (1,2,3,3))
case("avgpool_pad_included", [("x",(1,2,5,5))], ["%y = tg.avgpool %x {kernel_size = array<i64: 3, 2>, strides = array<i64: 1, 2>, pads = array<i64: 1, 0, 1, 1>, count_include_pad = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x5x3xf32>"], (1,2,5,3))
case("global_avgpool", [("x",(2,3,4,5))], ["%y = tg.global_avgpool %x : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x1xf32>"], (2,3,1,1))
case("transpose", [("x",(2,3,4))], ["%y = tg.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>"], (4,2,3))
case("reshape", [("x",(2,3,4))], ["%y = tg.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>"], (6,4))
case("concat_repeated", [("a",(2,3)),("b",(2,5))], ["%y = tg.concat %a, %b, %a {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x3xf32>) -> tensor<2x11xf32>"], (2,11))
case("split_unused_piece", [("x",(2,9))], ["%p:3 = tg.split %x {axis = 1 : i64, sizes = array<i64: 2, 3, 4>} : (tensor<2x9xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x4xf32>)", "%e = tg.exp %p#2 : tensor<2x4xf32>", "%y = tg.concat %p#0, %e {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>"], (2,6))
case("slice_strided", [("x",(5,9))], ["%y = tg.slice %x {starts = array<i64: 1, 2>, limits = array<i64: 5, 9>, strides = array<i64: 2, 3>} : (tensor<5x9xf32>) -> tensor<2x3xf32>"], (2,3))
case("pad", [("x",(2,3))], ["%y = tg.pad %x {low = array<i64: 1, 0>, high = array<i64: 0, 2>, value = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<3x5xf32>"], (3,5))
case("enlarge", [("x",(2,2,1,3))], ["%y = tg.enlarge %x {kernel_size = array<i64: 3, 5>} : (tensor<2x2x1x3xf32>) -> tensor<2x2x3x5xf32>"], (2,2,3,5))
case("broadcast_to", [("x",(3,1))], ["%y = tg.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>"], (2,3,4))
case("gather_repeated_negative", [("x",(5,3))], ["%i = tg.constant dense<[[4, 0], [4, -1]]> : tensor<2x2xi64>", "%y = tg.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>"], (2,2,3))
case("gather_axis1", [("x",(2,5,3))], ["%i = tg.constant dense<[1, 1, 3]> : tensor<3xi32>", "%y = tg.gather %x, %i {axis = 1 : i64} : (tensor<2x5x3xf32>, tensor<3xi32>) -> tensor<2x3x3xf32>"], (2,3,3))
case("softmax_cross_entropy", [("x",(4,5))], ["%l = tg.constant dense<[3, 0, 4, 3]> : tensor<4xi64>", "%y = tg.softmax_cross_entropy %x, %l : (tensor<4x5xf32>, tensor<4xi64>) -> tensor<f32>"], ())
case("mse_loss", [("a",(2,3,4)),("b",(2,3,4))], ["%y = tg.mse_loss %a, %b : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<f32>"], ())
case("reduce_sum", [("x",(2,3,4))], ["%y = tg.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>"], (3,))
case("reduce_mean_keep", [("x",(2,3,4))], ["%y = tg.reduce_mean %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>"], (2,3,1))
case("reduce_max", [("x",(2,3,4))], ["%y = tg.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xf32>"], (2,4))
case("softmax_axis1", [("x",(2,3,4))], ["%y = tg.softmax %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>"], (2,3,4))
case("layernorm", [("x",(2,3,4)),("g",(3,4)),("b",(4,))], ["%bb = tg.broadcast_to %b : (tensor<4xf32>) -> tensor<3x4xf32>", "%y = tg.layernorm %x, %g, %bb {axis = 1 : i64, epsilon = 1.0e-3 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>"], (2,3,4))
case("batchnorm_inference", [("x",(2,3,2,2)),("g",(3,)),("b",(3,)),("m",(3,)),("v",(3,))], ["%v2 = tg.mul %v, %v : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>", "%y = tg.batchnorm %x, %g, %b, %m, %v2 {epsilon = 0.1 : f64} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x2x2xf32>"], (2,3,2,2))

out = ["// Gradient checks of the differentiable tg ops: each function is a weighted",
       "// sum of one op's result (awkward shapes, broadcasting, strides, groups,",
       "// dilations, padding), and loom-run --check-gradients compares the",
       "// gradient --tg-autodiff builds with central finite differences in f64.",
       "// Written by Inputs/gen-gradients.py: add a case there and rerun it.", "//"]
for c in cases:
    out.append(f"// RUN: loom-run %s --entry {c[0]} --check-gradients --gradient-tolerance 1e-6 | FileCheck %s")
out.append("// CHECK: largest relative error")
out.append("")
for name, args, body, outs, et in cases:
    sig = ", ".join(f"%{a[0]}: {T(a[1])}" for a in args) + f", %weight: {T(outs, et)}"
    out.append(f"func.func @{name}({sig}) -> tensor<{et}> {{")
    for l in body:
        out.append("  " + l)
    axes = ", ".join(str(i) for i in range(len(outs)))
    out.append(f"  %wy = tg.mul %y, %weight : ({T(outs, et)}, {T(outs, et)}) -> {T(outs, et)}")
    if outs:
        out.append(f"  %r = tg.reduce_sum %wy {{axes = array<i64: {axes}>, keepdims = false}} : ({T(outs, et)}) -> tensor<{et}>")
    else:
        out.append(f"  %r = tg.add %wy, %wy : (tensor<{et}>, tensor<{et}>) -> tensor<{et}>")
    out.append(f"  return %r : tensor<{et}>\n}}\n")
import os
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gradients.mlir"), "w").write("\n".join(out))
print(len(cases), "cases")
