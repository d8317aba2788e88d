#!/usr/bin/env python3
"""Builds a GPU artifact by hand, without the compiler (docs/Testing.md).

Usage: gpu-artifact.py OUT.so MANIFEST.json [--image FILE] [--source FILE]
                       [--weights-from CPU_ARTIFACT.so] [--cc CC] [--include DIR]

The artifact is what loom-compile writes (docs/Artifact.md): a shared object
whose .loom_manifest section holds MANIFEST (its "weights" taken from
CPU_ARTIFACT, an artifact loom-compile wrote for the same source and
weights, with its .loom_weights section), .loom_image_0 the device code
(a SPIR-V module or a CUDA fatbin), .loom_source the tg source, and the
descriptor loom_artifact_v1 pointing at them. It has no host kernels.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def dump_section(objcopy, so, section, out):
    subprocess.run([objcopy, "--dump-section", section + "=" + out, so,
                    os.devnull], check=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("manifest")
    p.add_argument("--image")
    p.add_argument("--source")
    p.add_argument("--weights-from")
    p.add_argument("--cc", default="clang-22")
    p.add_argument("--objcopy", default="llvm-objcopy")
    p.add_argument("--include", required=True)
    a = p.parse_args()
    manifest = json.load(open(a.manifest))
    tmp = tempfile.mkdtemp()
    sections = {}
    if a.weights_from:
        cpu = os.path.join(tmp, "cpu.json")
        dump_section(a.objcopy, a.weights_from, ".loom_manifest", cpu)
        manifest["weights"] = json.load(open(cpu))["weights"]
        sections["weights"] = os.path.join(tmp, "weights.bin")
        dump_section(a.objcopy, a.weights_from, ".loom_weights",
                     sections["weights"])
    sections["manifest"] = os.path.join(tmp, "manifest.json")
    with open(sections["manifest"], "w") as f:
        json.dump(manifest, f, indent=1)
    if a.source:
        sections["source"] = a.source
    if a.image:
        sections["image_0"] = a.image
    c = ['#include "loom-c/ArtifactABI.h"']
    for name, path in sections.items():
        c.append('__asm__(".section .loom_%s,\\"a\\"\\n.globl loom_%s_begin\\n'
                 '.hidden loom_%s_begin\\nloom_%s_begin:\\n.incbin \\"%s\\"\\n'
                 '.globl loom_%s_end\\n.hidden loom_%s_end\\nloom_%s_end:\\n'
                 '.previous");' % ((name,) * 4 + (os.path.abspath(path),) +
                                   (name,) * 3))
        c.append("extern const char loom_%s_begin[], loom_%s_end[];" %
                 (name, name))

    def field(name):
        if name not in sections:
            return "0, 0"
        return "(const void *)loom_%s_begin, (uint64_t)(loom_%s_end - loom_%s_begin)" % (
            name, name, name)
    c.append("__attribute__((visibility(\"default\")))\n"
             "const loom_artifact_descriptor *loom_artifact_v1(void) {\n"
             "  static loom_artifact_descriptor d;\n"
             "  d = (loom_artifact_descriptor){LOOM_ARTIFACT_MAGIC,\n"
             "    LOOM_ARTIFACT_ABI_VERSION, %s, %s, %s, 0, 0};\n"
             "  return &d;\n}" % (field("manifest"), field("weights"),
                                  field("source")))
    src = os.path.join(tmp, "artifact.c")
    open(src, "w").write("\n".join(c) + "\n")
    r = subprocess.run([a.cc, "-shared", "-fPIC", "-O1", "-I", a.include,
                        src, "-o", a.out])
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
