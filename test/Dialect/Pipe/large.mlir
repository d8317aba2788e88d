// The synthetic benchmark: 1F1B and ZB-H1 on 1,024 devices with 256
// micro-batches (1.6 and 1.8 million actions), built, verified and
// simulated; fails if verifying and simulating one schedule takes more than
// 10 s (the planning target of issue 15; it takes about a second here, the
// simulation alone about 0.2 s). The table lists the first and last devices.
// RUN: loom-opt /dev/null --pipe-synthesize="kind=1f1b devices=1024 micro-batches=256 edge-bytes=1048576 activation-bytes=1000000" --pipe-simulate="max-seconds=10" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ONEF
// ONEF: pipe.schedule @chain: 1024 devices, 1024 stages, 256 micro-batches, 1571840 actions
// ONEF: @d0 0.768
// ONEF: ... 992 more devices ...
// ONEF: @d1023 0.768 {{.*}} 1
// ONEF: makespan
// ONEF: 1571840 actions: read from the IR in {{.*}} s, verified in {{.*}} s, simulated in {{.*}} s
// RUN: loom-opt /dev/null --pipe-synthesize="kind=zb-h1 devices=1024 micro-batches=256" --pipe-simulate="max-seconds=10" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZBH
// ZBH: 1833984 actions: read from the IR in
