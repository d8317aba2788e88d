#!/usr/bin/python3
"""PyTorch's time for N hyper-parameter trials of the Fashion-MNIST MLP or CNN
(python-free-examples/fashion-mnist: the same layers, batch 64, SGD with
momentum 0.9) run one after another, as scripts/bench-trials.sh compares the
fused step with: one training step per trial (forward, cross-entropy,
backward, optimizer step), each trial its own model and learning rate.
Prints the median over REPEAT rounds of N steps, in ms: wall clock, or with
CLOCK cpu the process's CPU time (time.process_time) per round.

  /usr/bin/python3 scripts/bench-trials-torch.py MODEL N REPEAT [THREADS [CLOCK]]
"""
import statistics
import sys
import time

import torch
import torch.nn as nn


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(),
                         nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn():
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    if (len(sys.argv) not in (4, 5, 6) or sys.argv[1] not in ("mlp", "cnn")
            or sys.argv[5:] not in ([], ["wall"], ["cpu"])):
        sys.exit("usage: bench-trials-torch.py mlp|cnn N REPEAT [THREADS [wall|cpu]]")
    model, n, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) >= 5 else 2)
    clock = time.process_time if sys.argv[5:] == ["cpu"] else time.perf_counter
    torch.manual_seed(0)
    trials = []
    for t in range(n):
        net = mlp() if model == "mlp" else cnn()
        opt = torch.optim.SGD(net.parameters(), lr=0.05 * (1 - 0.5 * t / n), momentum=0.9)
        trials.append((net, opt))
    x = torch.randn(64, 1, 28, 28)
    y = torch.randint(0, 10, (64,))
    loss_fn = nn.CrossEntropyLoss()

    def round_of_steps():
        for net, opt in trials:
            opt.zero_grad(set_to_none=True)
            loss_fn(net(x), y).backward()
            opt.step()

    round_of_steps()  # warm-up: allocations, oneDNN primitives
    times = []
    for _ in range(repeat):
        start = clock()
        round_of_steps()
        times.append(clock() - start)
    print(f"{statistics.median(times) * 1000:.3f}")


if __name__ == "__main__":
    main()
