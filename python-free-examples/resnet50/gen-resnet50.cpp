//===- gen-resnet50.cpp - Write ResNet-50 v1.5 as tg dialect MLIR ---------===//
//
// Part of Loom. A small stand-alone C++17 program, with no MLIR dependency,
// that prints ResNet-50 v1.5 in the torchvision layout as tg dialect MLIR
// text:
//
//   loom-gen-resnet50 [--batch N] [-o FILE]
//
// The network: conv1 7x7/2 + bn + relu, maxpool 3x3/2 pad 1, four stages of
// [3, 4, 6, 3] bottleneck blocks of widths 64/128/256/512 (expansion 4) with
// the stride on the 3x3 convolution (the "v1.5" variant) and a projection
// shortcut (conv 1x1 + bn) on the first block of every stage, global average
// pooling, and a fully connected layer to 1000 classes. That is 53
// convolutions: 1 stem + 16 blocks x 3 + 4 shortcuts.
//
// Parameters are tg.weight ops named as in torchvision's state_dict
// (`conv1.weight`, `layer1.0.bn1.running_var`, `layer2.0.downsample.0.weight`,
// ...) and read from the safetensors file named by the module attribute
// `tg.weights = "resnet50.safetensors"`. The one difference from torchvision:
// `fc.weight` is stored TRANSPOSED, as [2048, 1000] ([in, out]), so that it
// feeds tg.matmul directly.
//
//===----------------------------------------------------------------------===//

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

/// An SSA value of rank-4 NCHW activation type.
struct Value {
  std::string name; // including the leading '%'
  int64_t c, h, w;
};

/// Writes the body of @main one op at a time.
class Emitter {
public:
  Emitter(std::ostream &os, int64_t batch) : os(os), batch(batch) {}

  /// tensor<NxCxHxWxf32>
  std::string act(int64_t c, int64_t h, int64_t w) const {
    std::ostringstream s;
    s << "tensor<" << batch << "x" << c << "x" << h << "x" << w << "xf32>";
    return s.str();
  }
  std::string act(const Value &v) const { return act(v.c, v.h, v.w); }

  /// tensor<Cxf32>
  static std::string vec(int64_t c) {
    return "tensor<" + std::to_string(c) + "xf32>";
  }

  /// A comment line in the body.
  void comment(const std::string &text) { os << "    // " << text << "\n"; }

  /// A bias-free convolution whose filter is the weight `prefix.weight`
  /// ([outC, in.c, k, k]), with symmetric padding `pad`.
  Value conv(const Value &in, const std::string &prefix, int64_t outC,
             int64_t k, int64_t stride, int64_t pad) {
    std::string id = ssaName(prefix);
    std::string w = id + "_w";
    std::ostringstream filter;
    filter << "tensor<" << outC << "x" << in.c << "x" << k << "x" << k
           << "xf32>";
    os << "    " << w << " = tg.weight \"" << prefix
       << ".weight\" : " << filter.str() << "\n";
    Value out{id, outC, (in.h + 2 * pad - k) / stride + 1,
              (in.w + 2 * pad - k) / stride + 1};
    os << "    " << out.name << " = tg.conv " << in.name << ", " << w;
    if (stride != 1 || pad != 0) {
      os << " {";
      if (pad != 0)
        os << "pads = array<i64: " << pad << ", " << pad << ", " << pad << ", "
           << pad << ">";
      if (stride != 1)
        os << (pad != 0 ? ", " : "") << "strides = array<i64: " << stride
           << ", " << stride << ">";
      os << "}";
    }
    os << " : (" << act(in) << ", " << filter.str() << ") -> " << act(out)
       << "\n";
    ++numConvs;
    return out;
  }

  /// Inference batchnorm with the four `prefix.{weight,bias,running_mean,
  /// running_var}` parameters (epsilon 1e-5, torchvision's default).
  Value batchnorm(const Value &in, const std::string &prefix) {
    std::string id = ssaName(prefix);
    std::string v = vec(in.c);
    static const char *const params[] = {"weight", "bias", "running_mean",
                                         "running_var"};
    static const char *const suffix[] = {"_g", "_b", "_m", "_v"};
    for (int i = 0; i < 4; ++i)
      os << "    " << id << suffix[i] << " = tg.weight \"" << prefix << "."
         << params[i] << "\" : " << v << "\n";
    Value out{id, in.c, in.h, in.w};
    os << "    " << out.name << " = tg.batchnorm " << in.name << ", " << id
       << "_g, " << id << "_b, " << id << "_m, " << id << "_v : (" << act(in)
       << ", " << v << ", " << v << ", " << v << ", " << v << ") -> "
       << act(out) << "\n";
    return out;
  }

  Value relu(const Value &in, const std::string &name) {
    Value out{ssaName(name), in.c, in.h, in.w};
    os << "    " << out.name << " = tg.relu " << in.name << " : " << act(in)
       << "\n";
    return out;
  }

  Value add(const Value &a, const Value &b, const std::string &name) {
    Value out{ssaName(name), a.c, a.h, a.w};
    os << "    " << out.name << " = tg.add " << a.name << ", " << b.name
       << " : (" << act(a) << ", " << act(b) << ") -> " << act(out) << "\n";
    return out;
  }

  Value maxpool(const Value &in, const std::string &name) {
    Value out{ssaName(name), in.c, (in.h + 2 - 3) / 2 + 1,
              (in.w + 2 - 3) / 2 + 1};
    os << "    " << out.name << " = tg.maxpool " << in.name
       << " {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, "
          "pads = array<i64: 1, 1, 1, 1>} : ("
       << act(in) << ") -> " << act(out) << "\n";
    return out;
  }

  /// One torchvision Bottleneck, `layerS.B`: 1x1 reduce, 3x3 (carrying the
  /// stride), 1x1 expand, plus the identity or, when `project`, a
  /// conv 1x1 + bn shortcut.
  Value bottleneck(const Value &in, const std::string &prefix, int64_t width,
                   int64_t stride, bool project) {
    comment(prefix + ": bottleneck " + std::to_string(in.c) + " -> " +
            std::to_string(width) + " -> " + std::to_string(4 * width) +
            (stride != 1 ? ", stride " + std::to_string(stride) : "") +
            (project ? ", projection shortcut" : ""));
    Value y = conv(in, prefix + ".conv1", width, 1, 1, 0);
    y = relu(batchnorm(y, prefix + ".bn1"), prefix + ".relu1");
    y = conv(y, prefix + ".conv2", width, 3, stride, 1);
    y = relu(batchnorm(y, prefix + ".bn2"), prefix + ".relu2");
    y = conv(y, prefix + ".conv3", 4 * width, 1, 1, 0);
    y = batchnorm(y, prefix + ".bn3");
    Value shortcut = in;
    if (project) {
      shortcut = conv(in, prefix + ".downsample.0", 4 * width, 1, stride, 0);
      shortcut = batchnorm(shortcut, prefix + ".downsample.1");
    }
    return relu(add(y, shortcut, prefix + ".add"), prefix + ".out");
  }

  /// The classifier: global average pool, flatten, fc ([in, out] weight) and
  /// bias. Returns the name of the logits value.
  std::string head(const Value &in) {
    comment("head: global average pool, flatten, fc 2048 -> 1000");
    std::string pooled = act(in.c, 1, 1);
    std::string flat = "tensor<" + std::to_string(batch) + "x" +
                       std::to_string(in.c) + "xf32>";
    std::string logits = "tensor<" + std::to_string(batch) + "x1000xf32>";
    os << "    %pool = tg.global_avgpool " << in.name << " : (" << act(in)
       << ") -> " << pooled << "\n";
    os << "    %flat = tg.reshape %pool : (" << pooled << ") -> " << flat
       << "\n";
    comment("fc.weight is torchvision's transposed: [in, out]");
    os << "    %fc_w = tg.weight \"fc.weight\" : tensor<" << in.c
       << "x1000xf32>\n";
    os << "    %fc_b = tg.weight \"fc.bias\" : tensor<1000xf32>\n";
    os << "    %fc = tg.matmul %flat, %fc_w : (" << flat << ", tensor<" << in.c
       << "x1000xf32>) -> " << logits << "\n";
    os << "    %logits = tg.add %fc, %fc_b : (" << logits
       << ", tensor<1000xf32>) -> " << logits << "\n";
    return "%logits";
  }

  int numConvs = 0;

private:
  /// `layer1.0.conv1` -> `%layer1_0_conv1`.
  static std::string ssaName(const std::string &path) {
    std::string s = "%" + path;
    for (char &c : s)
      if (c == '.')
        c = '_';
    return s;
  }

  std::ostream &os;
  int64_t batch;
};

/// Writes the module; returns the number of convolutions written.
int writeResNet50(std::ostream &os, int64_t batch) {
  Emitter e(os, batch);
  std::string in = e.act(3, 224, 224);
  std::string out = "tensor<" + std::to_string(batch) + "x1000xf32>";
  os << "// ResNet-50 v1.5 (torchvision layout), batch " << batch
     << ", 224x224, inference form.\n"
     << "// Generated by loom-gen-resnet50; do not edit.\n"
     << "// Weights are named as torchvision's state_dict, except that "
        "fc.weight is\n"
     << "// stored transposed, [2048, 1000], to feed tg.matmul directly. "
        "Random ones:\n"
     << "//   loom-run resnet50.mlir --write-random-weights "
        "resnet50.safetensors\n"
     << "module attributes {tg.weights = \"resnet50.safetensors\"} {\n"
     << "  func.func @main(%input: " << in << " {tg.name = \"input\"}) -> ("
     << out << " {tg.name = \"logits\"}) {\n";

  e.comment("stem: conv 7x7/2, bn, relu, maxpool 3x3/2");
  Value x{"%input", 3, 224, 224};
  x = e.conv(x, "conv1", 64, 7, 2, 3);
  x = e.relu(e.batchnorm(x, "bn1"), "relu");
  x = e.maxpool(x, "maxpool");

  static const int blocks[4] = {3, 4, 6, 3};
  for (int s = 0; s < 4; ++s) {
    int64_t width = int64_t(64) << s;
    std::string layer = "layer" + std::to_string(s + 1);
    for (int b = 0; b < blocks[s]; ++b)
      x = e.bottleneck(x, layer + "." + std::to_string(b), width,
                       b == 0 && s > 0 ? 2 : 1, /*project=*/b == 0);
  }
  std::string logits = e.head(x);
  os << "    return " << logits << " : " << out << "\n"
     << "  }\n"
     << "}\n";
  return e.numConvs;
}

void usage(std::FILE *f) {
  std::fprintf(f,
               "usage: loom-gen-resnet50 [--batch N] [-o FILE]\n\n"
               "Writes ResNet-50 v1.5 (torchvision layout, 224x224 input) as\n"
               "tg dialect MLIR to FILE (default: standard output).\n\n"
               "  --batch N   batch size (default 1)\n"
               "  -o FILE     output file ('-': standard output)\n");
}

/// Parses a positive batch size; false on anything else.
bool parseBatch(const char *text, int64_t &batch) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 1 || v > (1 << 20))
    return false;
  batch = v;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  int64_t batch = 1;
  std::string output = "-";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "loom-gen-resnet50: %s needs a value\n", flag);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      return 0;
    }
    const char *batchText = nullptr;
    if (arg == "--batch" || arg == "-batch")
      batchText = value("--batch");
    else if (arg.rfind("--batch=", 0) == 0)
      batchText = argv[i] + std::strlen("--batch=");
    if (batchText) {
      if (!parseBatch(batchText, batch)) {
        std::fprintf(stderr,
                     "loom-gen-resnet50: bad batch size '%s' (expected a "
                     "positive integer)\n",
                     batchText);
        return 2;
      }
      continue;
    }
    if (arg == "-o") {
      output = value("-o");
      continue;
    }
    if (arg.rfind("-o=", 0) == 0) {
      output = arg.substr(3);
      continue;
    }
    std::fprintf(stderr, "loom-gen-resnet50: unknown argument '%s'\n",
                 arg.c_str());
    usage(stderr);
    return 2;
  }

  // Build the text in memory so that nothing is written on an internal error.
  std::ostringstream text;
  int numConvs = writeResNet50(text, batch);
  if (numConvs != 53) {
    std::fprintf(stderr,
                 "loom-gen-resnet50: internal error: %d convolutions instead "
                 "of 53\n",
                 numConvs);
    return 1;
  }

  if (output == "-") {
    std::cout << text.str();
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  std::ofstream file(output);
  if (!file) {
    std::fprintf(stderr, "loom-gen-resnet50: cannot open '%s': %s\n",
                 output.c_str(), std::strerror(errno));
    return 1;
  }
  file << text.str();
  file.close();
  if (!file) {
    std::fprintf(stderr, "loom-gen-resnet50: error writing '%s'\n",
                 output.c_str());
    return 1;
  }
  return 0;
}
