//===- BenchConvForms.cpp - loom-bench-conv-forms: a conv's forms ---------===//
//
// Part of Loom. For each convolution in its table (the stems and grouped
// convolutions of torchvision's CNNs, and --shape ones), every form oneDNN
// 2.6 has for it: each pair of source and destination layouts (NCHW, NHWC,
// nChw16c, or format any: oneDNN chooses) and, for each, every
// implementation oneDNN lists (primitive_desc::next_impl). A form is timed
// the way libloomrt would run it between neighbours holding the --edge
// layouts (default: an NCHW source, the entry's input, and an NHWC
// destination, what the layout plan gives a run of convolutions): the
// reorders from and to them are counted. Weights are reordered once
// (constant). Each cell: the best of up to --repeat runs alternated
// (--budget seconds per shape), L2 flushed before each (--warm: not), on
// --num-threads threads. The measurement behind the layout plan's stem and
// grouped-convolution rules (docs/Runtime.md). A grouped convolution whose
// groups have 16 output channels (or a multiple) also runs libloomrt's
// kernel (lib/Runtime/CPU/Kernels/GroupedConv.cpp, compiled in) between NHWC edges, the
// form "nhwc -> nhwc loom:grouped", the measurement behind libloomrt's
// groupedPays (docs/Runtime.md, "Grouped convolutions of 16-channel
// groups").
//
//===----------------------------------------------------------------------===//

#include "ConvBench.h"
#include "CPU/Cpu.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

using namespace llvm;
using namespace loom::convbench;
namespace cpu = loom::rt::cpu;
using dnnl::memory;
using tag = memory::format_tag;

static cl::OptionCategory formsCat("loom-bench-conv-forms options");
static cl::opt<unsigned> threads("num-threads", cl::desc("Threads (default 2)"),
                                 cl::init(2), cl::cat(formsCat));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Most timed runs per form "
                                         "(default 200)"),
                                cl::init(200), cl::cat(formsCat));
static cl::opt<double>
    budget("budget",
           cl::desc("Seconds per shape, at least 10 runs (default 3)"),
           cl::init(3), cl::cat(formsCat));
static cl::opt<bool> warm("warm", cl::desc("Do not flush L2 between runs"),
                          cl::cat(formsCat));
static cl::list<std::string>
    extra("shape",
          cl::desc("c,o,plane,k,stride,pad,groups: a convolution to add "
                   "(repeatable; batch 1, square)"),
          cl::cat(formsCat));
static cl::opt<bool> onlyExtra("only-shapes",
                               cl::desc("Measure the --shape ones only"),
                               cl::cat(formsCat));
static cl::opt<std::string>
    edges("edge",
          cl::desc("SRC,DST: the neighbours' layouts (nchw, nhwc, nChw16c; "
                   "default nchw,nhwc for stems, nhwc,nhwc else)"),
          cl::cat(formsCat));

namespace {

struct Shape {
  int64_t c, o, plane, k, stride, pad, groups;
  std::string where;
};

/// Stems (3 input channels) and grouped convolutions of torchvision's CNNs
/// at 224 (Inception-v3 at 299), and neighbours of them.
std::vector<Shape> torchvisionShapes() {
  return {
      {3, 64, 224, 3, 2, 0, 1, "SqueezeNet 1.1 stem"},
      {3, 32, 224, 3, 2, 1, 1, "RegNet/EfficientNet/MobileNet stem"},
      {3, 32, 299, 3, 2, 0, 1, "Inception-v3 stem"},
      {3, 64, 224, 7, 2, 3, 1, "ResNet/GoogLeNet stem"},
      {3, 96, 224, 7, 2, 0, 1, "SqueezeNet 1.0 stem"},
      {3, 24, 224, 3, 2, 1, 1, "ShuffleNet stem"},
      {3, 64, 224, 11, 4, 2, 1, "AlexNet stem"},
      {3, 64, 224, 3, 1, 1, 1, "VGG stem"},
      {3, 32, 160, 3, 2, 1, 1, "stem at 160"},
      {64, 64, 112, 3, 2, 1, 4, "RegNet-Y-800MF block1 (g4)"},
      {144, 144, 56, 3, 2, 1, 9, "RegNet-Y-800MF block2 (g9)"},
      {320, 320, 28, 3, 2, 1, 20, "RegNet-Y-800MF block3 (g20)"},
      {320, 320, 14, 3, 1, 1, 20, "RegNet-Y-800MF block3 (g20)"},
      {48, 48, 112, 3, 2, 1, 6, "RegNet-Y-400MF block1 (g6)"},
      {64, 64, 112, 3, 2, 1, 4, "RegNet-X-800MF block1 (g4)"},
      {128, 128, 56, 3, 1, 1, 32, "ResNeXt-50 stage 1 (g32)"},
      {256, 256, 56, 3, 2, 1, 32, "ResNeXt-50 stage 2 first (g32)"},
      {256, 256, 28, 3, 1, 1, 32, "ResNeXt-50 stage 2 (g32)"},
      {512, 512, 14, 3, 1, 1, 32, "ResNeXt-50 stage 3 (g32)"},
      {1024, 1024, 7, 3, 1, 1, 32, "ResNeXt-50 stage 4 (g32)"},
  };
}

/// The layouts the tool names, with their names.
const std::vector<std::pair<tag, std::string>> &namedTags() {
  static const std::vector<std::pair<tag, std::string>> tags = {
      {tag::any, "any"},
      {tag::nchw, "nchw"},
      {tag::nhwc, "nhwc"},
      {tag::nChw16c, "nChw16c"},
      {tag::nChw8c, "nChw8c"}};
  return tags;
}

tag parseTag(const std::string &s) {
  for (const auto &[t, name] : namedTags())
    if (name == s)
      return t;
  errs() << "error: unknown layout " << s << "\n";
  exit(1);
}

std::string tagName(tag t) {
  for (const auto &[known, name] : namedTags())
    if (known == t)
      return name;
  return "blocked";
}

/// One form: a primitive with its layouts, between the edge buffers.
struct Form {
  std::string name;
  dnnl::convolution_forward prim;
  memory src, weights, bias, dst;
  std::optional<dnnl::reorder> in, out;
  /// libloomrt's kernel, run instead of prim where set.
  std::function<void()> kernel;
  std::vector<double> conv, total;
};

/// The layout oneDNN chose for \p md, by name.
std::string layoutName(const memory::desc &md) {
  for (const auto &[t, name] : namedTags())
    if (t != tag::any && md == memory::desc(md.dims(), md.data_type(), t))
      return name;
  return "blocked";
}

/// The form running libloomrt's grouped kernel on \p s between NHWC edges
/// \p edgeIn and \p edgeOut, or null where it does not apply.
std::unique_ptr<Form> loomGrouped(const dnnl::engine &eng, const Shape &s,
                                  memory &edgeIn, memory &edgeOut) {
  auto f32 = memory::data_type::f32;
  int64_t outPlane = (s.plane + 2 * s.pad - s.k) / s.stride + 1;
  memory::desc nhwcIn({1, s.c, s.plane, s.plane}, f32, tag::nhwc);
  memory::desc nhwcOut({1, s.o, outPlane, outPlane}, f32, tag::nhwc);
  if (s.groups <= 1 || s.o % (16 * s.groups) || !cpu::hasGroupedConvKernel() ||
      !(edgeIn.get_desc() == nhwcIn) || !(edgeOut.get_desc() == nhwcOut))
    return nullptr;
  auto g = std::make_shared<cpu::GroupedConvGeometry>();
  g->batch = 1;
  g->h = g->w = s.plane;
  g->channels = s.c;
  g->oh = g->ow = outPlane;
  g->outChannels = s.o;
  g->groups = s.groups;
  g->groupChannels = s.c / s.groups;
  g->kh = g->kw = s.k;
  g->sh = g->sw = s.stride;
  g->padTop = g->padLeft = s.pad;
  g->relu = true;
  auto f = std::make_unique<Form>();
  f->name = "nhwc -> nhwc loom:grouped";
  f->weights = memory({{s.o * g->groupChannels * s.k * s.k}, f32, tag::x}, eng);
  f->bias = memory({{s.o}, f32, tag::x}, eng);
  fill(f->weights, 0.1f);
  fill(f->bias, 0.1f);
  auto packed = std::make_shared<cpu::AlignedFloats>(cpu::packGroupedConvWeights(
      *g, static_cast<const float *>(f->weights.get_data_handle())));
  const float *bias = static_cast<const float *>(f->bias.get_data_handle());
  const float *src = static_cast<const float *>(edgeIn.get_data_handle());
  float *dst = static_cast<float *>(edgeOut.get_data_handle());
  f->kernel = [g, packed, bias, src, dst] {
    cpu::groupedConvChannelsLast(*g, src, packed->data(), bias, dst);
  };
  return f;
}

/// Every form of \p s: each pair of layouts, each implementation.
std::vector<std::unique_ptr<Form>> forms(const dnnl::engine &eng,
                                         const Shape &s, memory &edgeIn,
                                         memory &edgeOut) {
  auto f32 = memory::data_type::f32;
  int64_t outPlane = (s.plane + 2 * s.pad - s.k) / s.stride + 1;
  memory::dims srcD{1, s.c, s.plane, s.plane}, dstD{1, s.o, outPlane, outPlane};
  memory::dims wD{s.o, s.c / s.groups, s.k, s.k};
  if (s.groups > 1)
    wD = {s.groups, s.o / s.groups, s.c / s.groups, s.k, s.k};
  memory::desc w(wD, f32, tag::any), b({s.o}, f32, tag::x);
  std::vector<std::unique_ptr<Form>> out;
  std::vector<tag> tags = {tag::any, tag::nchw, tag::nhwc, tag::nChw16c};
  for (tag st : tags)
    for (tag dt : tags) {
      memory::desc src(srcD, f32, st), dst(dstD, f32, dt);
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                        dnnl::algorithm::convolution_direct,
                                        src, w, b, dst, {s.stride, s.stride},
                                        {0, 0}, {s.pad, s.pad}, {s.pad, s.pad});
      dnnl::primitive_attr attr;
      dnnl::post_ops po;
      po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
      attr.set_post_ops(po);
      dnnl::convolution_forward::primitive_desc pd;
      try {
        pd = dnnl::convolution_forward::primitive_desc(d, attr, eng);
      } catch (const dnnl::error &) {
        continue;
      }
      // format any: only oneDNN's first choice (the others repeat fixed
      // pairs).
      for (bool more = true; more;
           more = st != tag::any && dt != tag::any && pd.next_impl()) {
        std::string impl = pd.impl_info_str();
        if (impl.rfind("ref", 0) == 0)
          continue;
        auto f = std::make_unique<Form>();
        f->name = formatv(
            "{0} -> {1} {2}",
            st == tag::any ? "any:" + layoutName(pd.src_desc()) : tagName(st),
            dt == tag::any ? "any:" + layoutName(pd.dst_desc()) : tagName(dt),
            impl);
        f->prim = dnnl::convolution_forward(pd);
        f->src = memory(pd.src_desc(), eng);
        f->weights = memory(pd.weights_desc(), eng);
        f->bias = memory(pd.bias_desc(), eng);
        f->dst = memory(pd.dst_desc(), eng);
        fill(f->weights, 0.1f);
        fill(f->bias, 0.1f);
        if (!(pd.src_desc() == edgeIn.get_desc()))
          f->in = dnnl::reorder(edgeIn, f->src);
        else
          f->src = edgeIn;
        if (!(pd.dst_desc() == edgeOut.get_desc()))
          f->out = dnnl::reorder(f->dst, edgeOut);
        else
          f->dst = edgeOut;
        out.push_back(std::move(f));
      }
    }
  if (std::unique_ptr<Form> f = loomGrouped(eng, s, edgeIn, edgeOut))
    out.push_back(std::move(f));
  return out;
}

void measure(const dnnl::engine &eng, dnnl::stream &strm, const Shape &s) {
  auto f32 = memory::data_type::f32;
  int64_t outPlane = (s.plane + 2 * s.pad - s.k) / s.stride + 1;
  std::string e = edges.empty() ? (s.c == 3 ? "nchw,nhwc" : "nhwc,nhwc")
                                : std::string(edges);
  size_t comma = e.find(',');
  if (comma == std::string::npos) {
    errs() << "error: --edge " << e << ": expected SRC,DST\n";
    exit(1);
  }
  memory edgeIn({{1, s.c, s.plane, s.plane}, f32, parseTag(e.substr(0, comma))},
                eng);
  memory edgeOut(
      {{1, s.o, outPlane, outPlane}, f32, parseTag(e.substr(comma + 1))}, eng);
  fill(edgeIn, 1.0f);
  auto all = forms(eng, s, edgeIn, edgeOut);
  auto start = Clock::now();
  for (unsigned i = 0; anotherRun(i, repeat, budget, start); ++i)
    for (auto &f : all) {
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, f->src},
                                           {DNNL_ARG_WEIGHTS, f->weights},
                                           {DNNL_ARG_BIAS, f->bias},
                                           {DNNL_ARG_DST, f->dst}};
      auto conv = [&] {
        if (f->kernel)
          f->kernel();
        else
          f->prim.execute(strm, args);
      };
      f->conv.push_back(timeRun(strm, warm, conv));
      f->total.push_back(timeRun(strm, warm, [&] {
        if (f->in)
          f->in->execute(strm, edgeIn, f->src);
        conv();
        if (f->out)
          f->out->execute(strm, f->dst, edgeOut);
      }));
    }
  std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
    return best(a->total) < best(b->total);
  });
  outs() << formatv("\n{0} -> {1}, {2}x{2}, {3}x{3}/{4} pad {5}, groups {6}: "
                    "{7} (edges {8}, {9})\n",
                    s.c, s.o, s.plane, s.k, s.stride, s.pad, s.groups, s.where,
                    e, warm ? "warm" : "L2 flushed before each run");
  outs() << "| form (src -> dst, implementation) | conv ms | with reorders "
            "ms |\n| --- | ---: | ---: |\n";
  for (auto &f : all)
    outs() << formatv("| {0} | {1:F3} | {2:F3} |\n", f->name, best(f->conv),
                      best(f->total));
  outs().flush();
}

/// A --shape value, or nullopt where it is malformed or out of range.
std::optional<Shape> parseShape(StringRef text) {
  std::optional<std::vector<int64_t>> f = integerFields(text, ',', 7, 7);
  if (!f)
    return std::nullopt;
  Shape s{(*f)[0], (*f)[1], (*f)[2], (*f)[3], (*f)[4], (*f)[5], (*f)[6],
          "--shape"};
  if (s.c < 1 || s.o < 1 || s.plane < 1 || s.k < 1 || s.stride < 1 ||
      s.pad < 0 || s.groups < 1 || s.c % s.groups || s.o % s.groups ||
      s.plane + 2 * s.pad < s.k)
    return std::nullopt;
  return s;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM x(argc, argv);
  cl::HideUnrelatedOptions(formsCat);
  cl::ParseCommandLineOptions(
      argc, argv, "Every oneDNN form of a convolution, with its reorders\n");
  omp_set_num_threads(threads);
  std::vector<Shape> given = parseShapes<Shape>(
      extra, parseShape,
      "c,o,plane,k,stride,pad,groups");
  std::vector<Shape> shapes =
      shapesToMeasure(onlyExtra.getValue(), torchvisionShapes(), given);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  for (const Shape &s : shapes)
    measure(eng, strm, s);
  return 0;
}
