#!/usr/bin/python3
"""PyTorch's CPU training step for loom-bench-train (bench/train).

The same networks as python-free-examples/fashion-mnist/{cnn,mlp}.mlir, the
same batch, loss (mean softmax cross-entropy) and optimizer (Adam with
PyTorch's defaults beside lr, or SGD with momentum), on
torch.set_num_threads(N) threads. Driven over stdin/stdout so that
loom-bench-train can time it in turn with Loom's columns:

  -> "ready {json}"            after building the model and --warmup steps
  <- "run K"                   run K steps
  -> "{json}"                  {"seconds": [...one per step...], "loss": last loss}
  <- "quit"

Inputs are fixed random images in [0, 1) and labels in [0, 10) (the step time
does not depend on the data)."""
import argparse
import json
import sys
import time

import torch
from torch import nn


def network(name):
    if name == "cnn":
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
            nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))
    raise SystemExit(f"torch_step.py: unknown model {name!r} (cnn, mlp)")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, choices=["cnn", "mlp"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    net = network(a.model)
    net.train()
    if a.optimizer == "adam":
        opt = torch.optim.Adam(net.parameters(), lr=a.lr)
    else:
        opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=a.momentum)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.rand(a.batch, 1, 28, 28)
    y = torch.randint(0, 10, (a.batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    loss = 0.0
    for _ in range(a.warmup):
        loss = step()
    info = {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "parameters": sum(t.numel() for t in net.parameters()),
            "mkldnn": torch.backends.mkldnn.is_available()}
    print("ready " + json.dumps(info), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] != "run" or len(words) != 2:
            raise SystemExit(f"torch_step.py: bad command {line!r}")
        seconds = []
        for _ in range(int(words[1])):
            t0 = time.perf_counter()
            loss = step()
            seconds.append(time.perf_counter() - t0)
        print(json.dumps({"seconds": seconds, "loss": loss}), flush=True)


if __name__ == "__main__":
    main()
