#!/usr/bin/python3
"""PyTorch's reference for loom-train's accuracy (docs/benchmarks/train.md):
trains the same network (torch_step.py's definitions) on Fashion-MNIST the
way loom-train does: pixels in [0, 1] standardised with the training set's
mean and standard deviation, batch 64, shuffled each epoch, the last partial
batch skipped, Adam lr 0.001 (or SGD with momentum), PyTorch's default
initialisation; prints the mean training loss and the test accuracy per
epoch. Needs Debian's dataset-fashion-mnist and python3-torch."""
import argparse
import gzip
import os
import time

import numpy as np
import torch
from torch import nn

from torch_step import network


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    rank = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def load(directory, prefix):
    def find(base):
        for suffix in (".gz", ""):
            if os.path.exists(os.path.join(directory, base + suffix)):
                return os.path.join(directory, base + suffix)
        raise SystemExit(f"{directory}/{base}(.gz) not found "
                         "(apt-get install dataset-fashion-mnist)")
    images = read_idx(find(f"{prefix}-images-idx3-ubyte")).astype(np.float32) / 255
    labels = read_idx(find(f"{prefix}-labels-idx1-ubyte")).astype(np.int64)
    return torch.from_numpy(images).unsqueeze(1), torch.from_numpy(labels)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="cnn", choices=["cnn", "mlp"])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--optimizer", default="adam", choices=["adam", "sgd"])
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    x, y = load(a.data, "train")
    tx, ty = load(a.data, "t10k")
    mean, std = x.mean().item(), x.std(unbiased=False).item()
    x, tx = (x - mean) / std, (tx - mean) / std
    net = network(a.model)
    opt = (torch.optim.Adam(net.parameters(), lr=a.lr) if a.optimizer == "adam"
           else torch.optim.SGD(net.parameters(), lr=a.lr, momentum=0.9))
    loss_fn = nn.CrossEntropyLoss()
    steps = len(x) // 64
    for epoch in range(1, a.epochs + 1):
        net.train()
        order = torch.randperm(len(x))
        total, start = 0.0, time.perf_counter()
        for s in range(steps):
            idx = order[s * 64:(s + 1) * 64]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(net(x[idx]), y[idx])
            loss.backward()
            opt.step()
            total += loss.item()
        seconds = time.perf_counter() - start
        net.eval()
        with torch.no_grad():
            correct = sum((net(tx[i:i + 500]).argmax(1) == ty[i:i + 500]).sum().item()
                          for i in range(0, len(tx), 500))
        print(f"epoch {epoch}/{a.epochs}: loss {total / steps:.4f}, test accuracy "
              f"{100 * correct / len(tx):.2f}%, {seconds:.1f} s", flush=True)


if __name__ == "__main__":
    main()
