//===- Passes.td - Training passes --------------------------*- tablegen -*-===//
//
// Part of Loom. docs/Training.md describes the training step these build.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_AUTODIFF_PASSES_TD
#define LOOM_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def TGAutodiff : Pass<"tg-autodiff", "mlir::ModuleOp"> {
  let summary = "Build a training step (loss, gradients, optimizer update) "
                "by reverse-mode differentiation";
  let description = [{
    From `function` (it returns exactly one scalar float, the loss), adds
    `@<function>_train_step` to the module, or `@<function>_grad` with
    `optimizer=none`. Every float `tg.weight` of the function becomes a
    parameter: an argument after the function's own (named by `tg.name`,
    in order of first use). The new function returns the loss, then the
    updated parameters and the optimizer state (`adam`: `NAME.m` for every
    parameter, then `NAME.v`, then `adam.step`; `sgd` with momentum:
    `NAME.velocity`), each taken as an argument after the parameters and
    starting at zero; with `hyper-parameter-arguments=true` the
    hyper-parameters (`lr`; `momentum` when not 0; `beta1`, `beta2` for Adam;
    `weight_decay` when not 0) are scalar f32 arguments between the
    parameters and the state instead of constants. Parameters carry the
    argument attribute `tg.parameter`, state `tg.optimizer_state` and
    hyper-parameters `tg.hyper_parameter` (the option's value). With `optimizer=none` it returns the gradient of every
    parameter (`NAME.grad`) and, with `wrt-arguments`, first those of the
    function's float arguments.

    The backward ops are ordinary tg ops after the forward ops: the
    superoptimiser, backend placement and `loom-compile` apply to them. The
    activations the backward pass keeps are the forward values it uses;
    `recompute=elementwise` recomputes cheap elementwise ones before their
    first backward use instead (clones marked `tg.recomputed`).
    `tg.batchnorm` takes the batch's statistics (training form) unless
    `batchnorm-training=false`.

    ```
    loom-opt model.mlir --tg-autodiff="function=loss optimizer=adam lr=0.001"
    loom-opt model.mlir --tg-autodiff="function=loss optimizer=sgd lr=0.1 momentum=0.9"
    loom-opt model.mlir --tg-autodiff="function=loss optimizer=none wrt-arguments=true"
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The loss function (default: the module's only function)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"none\"",
           "none (gradients only), sgd or adam">,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum (PyTorch's convention: v = m v + g, p -= lr v)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 weight decay, added to the gradient">,
    Option<"hyperParameterArguments", "hyper-parameter-arguments", "bool",
           /*default=*/"false",
           "Take lr, momentum, beta1, beta2 and weight-decay as scalar f32 "
           "arguments (the option values become their nominal values)">,
    Option<"wrtArguments", "wrt-arguments", "bool", /*default=*/"false",
           "Also return the gradients of the function's float arguments "
           "(optimizer=none)">,
    Option<"batchnormTraining", "batchnorm-training", "bool",
           /*default=*/"true",
           "Normalise tg.batchnorm with the batch's statistics">,
    Option<"recompute", "recompute", "std::string", /*default=*/"\"none\"",
           "Activations to recompute in the backward pass: none, elementwise">,
    Option<"name", "name", "std::string", /*default=*/"\"\"",
           "Name of the new function (default: <function>_train_step or "
           "<function>_grad)">,
  ];
}

def TGWeightsToArguments : Pass<"tg-weights-to-arguments", "mlir::ModuleOp"> {
  let summary = "Turn a function's float tg.weights into arguments";
  let description = [{
    Every float `tg.weight` of `function` becomes an argument after the
    function's own, named by `tg.name` (the weight's name), in order of
    first use, as `--tg-autodiff` orders parameters: an evaluation function
    can then take the parameters a training step returns.

    ```
    loom-opt model.mlir --tg-weights-to-arguments=function=logits
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "The function (default: the module's only function)">,
  ];
}

#endif // LOOM_AUTODIFF_PASSES_TD
