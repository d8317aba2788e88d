//===- VulkanDevice.cpp - The Vulkan device -------------------------------===//
//
// Part of Loom. See Device.h and docs/Runtime.md. The Vulkan loader
// (libvulkan.so.1, or LOOM_VULKAN_LIBRARY) is opened with dlopen when a
// model asks for a Vulkan device, never linked: libloomrt loads where there
// is no Vulkan, and a model for Vulkan then fails to load with
// LOOM_ERROR_NO_DEVICE. Every other entry point comes from
// vkGetInstanceProcAddr / vkGetDeviceProcAddr.
//
// Memory: an allocation is one VkBuffer (storage, transfer source and
// destination) with its own memory, named by a reserved, inaccessible range
// of host addresses (mmap PROT_NONE) of its size: base + offset maps back to
// (VkBuffer, offset). On a CPU or integrated device (lavapipe) the memory is
// host-visible and coherent, mapped once, and host transfers are memcpy's
// after the queue is idle; on a discrete GPU (or with LOOM_VULKAN_STAGING=1)
// it is device-local and host transfers go through the queue's host-visible
// staging buffer.
//
// Code: the image is one SPIR-V module; each gpu.dispatch step gets the
// compute pipeline of its entry point (made from the module cut down to that
// entry point, SpirvModule.h) over a descriptor set layout of n
// storage buffers (bindings 0..n-1 of set 0), its launch sizes checked
// against the device's limits and the entry point's LocalSize at load.
//
// A queue records every dispatch and copy into one command buffer, with a
// memory barrier between consecutive commands, and submits it when it
// synchronizes (an event, a host transfer, the end of a run), waiting on a
// fence for at most DeviceOptions::timeoutSeconds.
//
//===----------------------------------------------------------------------===//

#include "Gpu.h"

#ifndef LOOM_RT_VULKAN

using namespace loom::rt;

Error loom::rt::createVulkanDevice(int64_t ordinal, const DeviceOptions &,
                                   std::unique_ptr<Device> &) {
  return makeError(LOOM_ERROR_NO_DEVICE,
                   "no device vulkan:" + std::to_string(ordinal) +
                       ": this libloomrt was built without the Vulkan "
                       "headers (vulkan/vulkan.h)");
}

#else

#define VK_NO_PROTOTYPES
#include "DynamicSymbols.h"
#include "Environment.h"
#include "Vulkan/SpirvModule.h"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sys/mman.h>

using namespace loom;
using namespace loom::rt;
namespace art = loom::artifact;

namespace {

// The entry points this device calls, resolved per instance and device.
#define LOOM_VK_INSTANCE_FUNCTIONS(X)                                          \
  X(vkDestroyInstance)                                                         \
  X(vkEnumeratePhysicalDevices)                                                \
  X(vkGetPhysicalDeviceProperties)                                             \
  X(vkGetPhysicalDeviceProperties2)                                            \
  X(vkGetPhysicalDeviceFeatures2)                                              \
  X(vkGetPhysicalDeviceQueueFamilyProperties)                                  \
  X(vkGetPhysicalDeviceMemoryProperties)                                       \
  X(vkCreateDevice)                                                            \
  X(vkGetDeviceProcAddr)

#define LOOM_VK_DEVICE_FUNCTIONS(X)                                            \
  X(vkDestroyDevice)                                                           \
  X(vkGetDeviceQueue)                                                          \
  X(vkCreateBuffer)                                                            \
  X(vkDestroyBuffer)                                                           \
  X(vkGetBufferMemoryRequirements)                                             \
  X(vkAllocateMemory)                                                          \
  X(vkFreeMemory)                                                              \
  X(vkBindBufferMemory)                                                        \
  X(vkMapMemory)                                                               \
  X(vkCreateShaderModule)                                                      \
  X(vkDestroyShaderModule)                                                     \
  X(vkCreateDescriptorSetLayout)                                               \
  X(vkDestroyDescriptorSetLayout)                                              \
  X(vkCreatePipelineLayout)                                                    \
  X(vkDestroyPipelineLayout)                                                   \
  X(vkCreateComputePipelines)                                                  \
  X(vkDestroyPipeline)                                                         \
  X(vkCreateCommandPool)                                                       \
  X(vkDestroyCommandPool)                                                      \
  X(vkAllocateCommandBuffers)                                                  \
  X(vkResetCommandPool)                                                        \
  X(vkBeginCommandBuffer)                                                      \
  X(vkEndCommandBuffer)                                                        \
  X(vkCreateDescriptorPool)                                                    \
  X(vkDestroyDescriptorPool)                                                   \
  X(vkResetDescriptorPool)                                                     \
  X(vkAllocateDescriptorSets)                                                  \
  X(vkUpdateDescriptorSets)                                                    \
  X(vkCmdBindPipeline)                                                         \
  X(vkCmdBindDescriptorSets)                                                   \
  X(vkCmdDispatch)                                                             \
  X(vkCmdPipelineBarrier)                                                      \
  X(vkCmdCopyBuffer)                                                           \
  X(vkCreateFence)                                                             \
  X(vkDestroyFence)                                                            \
  X(vkResetFences)                                                             \
  X(vkWaitForFences)                                                           \
  X(vkQueueSubmit)

struct Api {
  DynamicLibrary library;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
#define LOOM_VK_DECLARE(name) PFN_##name name = nullptr;
  LOOM_VK_INSTANCE_FUNCTIONS(LOOM_VK_DECLARE)
  LOOM_VK_DEVICE_FUNCTIONS(LOOM_VK_DECLARE)
#undef LOOM_VK_DECLARE
};

/// A zeroed Vulkan structure of type \p type.
template <typename T> T make(VkStructureType type) {
  T value{};
  value.sType = type;
  return value;
}

std::string vkResultName(VkResult r) {
  switch (r) {
  case VK_ERROR_OUT_OF_HOST_MEMORY:
    return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED:
    return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST:
    return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_INCOMPATIBLE_DRIVER:
    return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_INVALID_SHADER_NV:
    return "VK_ERROR_INVALID_SHADER_NV";
  case VK_ERROR_OUT_OF_POOL_MEMORY:
    return "VK_ERROR_OUT_OF_POOL_MEMORY";
  case VK_TIMEOUT:
    return "VK_TIMEOUT";
  default:
    return "VkResult " + std::to_string(int(r));
  }
}

/// What a SPIR-V module says of one of its entry points.
struct EntryPoint {
  uint32_t executionModel = 0;
  uint32_t id = 0;
  /// The LocalSize execution mode, or zeros when the module has none
  /// (LocalSizeId: sizes from specialization constants).
  std::array<int64_t, 3> localSize = {0, 0, 0};
};

/// Reads the entry points of a SPIR-V module (docs: the SPIR-V
/// specification, "Physical Layout"), bounds-checked.
Error readEntryPoints(const std::vector<uint32_t> &words,
                      std::map<std::string, EntryPoint> &out) {
  if (words.size() < 5 || words[0] != 0x07230203u)
    return makeError(LOOM_ERROR_FORMAT,
                     "the vulkan image is not a SPIR-V module (bad magic)");
  std::map<uint32_t, std::string> names;
  for (size_t at = 5; at < words.size();) {
    uint32_t count = words[at] >> 16, opcode = words[at] & 0xffff;
    if (count == 0 || at + count > words.size())
      return makeError(LOOM_ERROR_FORMAT,
                       "the vulkan image is a truncated SPIR-V module (word " +
                           std::to_string(at) + ")");
    const uint32_t *op = &words[at];
    if (opcode == 15 && count >= 4) { // OpEntryPoint
      const char *name = reinterpret_cast<const char *>(op + 3);
      size_t limit = (count - 3) * 4;
      std::string text(name, strnlen(name, limit));
      EntryPoint &e = out[text];
      e.executionModel = op[1];
      e.id = op[2];
      names[op[2]] = text;
    } else if (opcode == 16 && count >= 6 && op[2] == 17) { // LocalSize
      auto it = names.find(op[1]);
      if (it != names.end())
        out[it->second].localSize = {op[3], op[4], op[5]};
    }
    at += count;
  }
  return Error::ok();
}

/// A device allocation: a VkBuffer and its memory, named by a reserved
/// range of host addresses.
struct Region {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  /// The memory mapped (host-visible devices), else null.
  char *mapped = nullptr;
  int64_t bytes = 0;
};

class VulkanDevice;

class VulkanQueue : public Queue {
public:
  explicit VulkanQueue(VulkanDevice &device) : owner(device) {}
  ~VulkanQueue() override;
  Device &device() const override;
  Error synchronize() override;
  std::unique_ptr<Event> record() override;
  Error wait(const Event &event) override { return event.synchronize(); }

  /// The command buffer being recorded, begun on first use; a memory
  /// barrier before every command after the first.
  Error begin(VkCommandBuffer &cb);
  /// A descriptor set of \p layout from this queue's pool (which a
  /// submission resets: a full pool runs what was recorded first). Called
  /// before the command that binds it is begun.
  Error descriptorSet(VkDescriptorSetLayout layout, VkDescriptorSet &out);
  /// \p bytes of the host-visible staging buffer, valid until the next
  /// submission.
  Error stagingSpace(int64_t bytes, VkBuffer &buffer, int64_t &offset,
                     char *&host);

private:
  Error create();
  VulkanDevice &owner;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer commands = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  bool recording = false;
  /// A submission whose fence has not been seen signalled.
  bool pending = false;
  Region staging;
  int64_t stagingUsed = 0;
};

/// The queue's work is done once recorded (record() synchronizes).
class DoneEvent : public Event {
public:
  bool query() const override { return true; }
  Error synchronize() const override { return Error::ok(); }
};

/// A gpu.dispatch made ready: its pipeline and what it binds.
struct Dispatch : public PreparedStep {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  art::DispatchStep step;
  std::vector<int64_t> argBytes;

  StepDescription describe() const override {
    return {"vulkan pipeline " + step.kernel, {}, "workgroups"};
  }
};

/// A compute pipeline of one entry point over n storage buffers.
struct Pipeline {
  VkDescriptorSetLayout setLayout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class VulkanDevice : public GpuDevice {
public:
  VulkanDevice(int64_t ordinal, const DeviceOptions &options)
      : number(ordinal), timeoutSeconds(options.timeoutSeconds) {}
  ~VulkanDevice() override;

  Error open();

  art::DeviceKind kind() const override { return art::DeviceKind::Vulkan; }
  int64_t ordinal() const override { return number; }
  Error supports(const art::Device &spec) const override;
  Error allocate(int64_t bytes, Allocation &out) override;
  void deallocate(Allocation &allocation) override;
  int64_t bufferAlignment() const override {
    return std::max<int64_t>(
        64, int64_t(properties.limits.minStorageBufferOffsetAlignment));
  }
  Error loadImage(const art::Device &spec, const uint8_t *data,
                  uint64_t size) override;
  std::unique_ptr<Queue> createQueue() override {
    return std::make_unique<VulkanQueue>(*this);
  }
  Error prepareDispatch(const art::DispatchStep &step, const std::string &at,
                        const std::vector<int64_t> &bufferBytes,
                        std::unique_ptr<PreparedStep> &out) override;
  Error launchLibrary(Queue &queue, const PreparedStep &step,
                      void *const *buffers) override;
  Error copy(Queue &queue, void *dst, const void *src,
             int64_t bytes) override;
  Error readToHost(Queue &queue, void *host, const void *src,
                   int64_t bytes) override;
  Error writeFromHost(Queue &queue, void *dst, const void *host,
                      int64_t bytes) override;

  /// An error naming this device and \p what failed.
  Error fail(const std::string &what, VkResult r) const {
    return makeError(r == VK_ERROR_DEVICE_LOST ? LOOM_ERROR_NO_DEVICE
                                               : LOOM_ERROR_LIBRARY,
                     name() + ": " + what + " failed (" + vkResultName(r) +
                         ")");
  }
  /// The region holding \p address and the address's offset in it.
  Error resolve(const void *address, int64_t bytes, Region &region,
                int64_t &offset);
  /// Copies \p bytes between \p host and the device memory at \p address
  /// (after what \p q holds; a read waits for it).
  Error hostTransfer(VulkanQueue &q, const void *address, void *host,
                     int64_t bytes, bool toDevice);
  /// A buffer of \p bytes; host-visible and mapped when \p host.
  Error createRegion(int64_t bytes, bool host, Region &out);
  void destroyRegion(Region &region);

  Api api;
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queueFamily = 0;
  VkPhysicalDeviceProperties properties{};
  VkPhysicalDeviceSubgroupProperties subgroup{};
  VkPhysicalDeviceFeatures2 features{};
  VkPhysicalDeviceVulkan11Features features11{};
  VkPhysicalDeviceVulkan12Features features12{};
  VkPhysicalDeviceMemoryProperties memoryProperties{};
  /// Whether allocations are host-visible, coherent and mapped.
  bool direct = false;
  int64_t number;
  double timeoutSeconds;
  /// vkQueueSubmit on the one VkQueue, from every context's queue.
  std::mutex submitMutex;
  /// Set when submitted work did not finish within the timeout even as its
  /// queue went: that work may still read and write the device's objects
  /// and memory, so nothing of the device is destroyed (it is left to the
  /// process's exit) rather than freed under the running work.
  std::atomic<bool> abandoned{false};

private:
  Error openInstance();
  Error openDevice();
  Error pipelineFor(const std::string &kernel, size_t numBuffers,
                    Pipeline &out);
  Error checkLaunch(const art::DispatchStep &s, const std::string &at) const;

  std::mutex regionsMutex;
  std::map<uintptr_t, Region> regions;
  /// The image, cut into one module per entry point as pipelines are made.
  spirv::EntryPointModules image;
  std::map<std::string, EntryPoint> entryPoints;
  std::map<std::pair<std::string, size_t>, Pipeline> pipelines;
};

//===----------------------------------------------------------------------===//
// Opening the device
//===----------------------------------------------------------------------===//

Error VulkanDevice::openInstance() {
  if (!api.library.open("LOOM_VULKAN_LIBRARY", {"libvulkan.so.1"}))
    return makeError(
        LOOM_ERROR_NO_DEVICE,
        "no device " + name() + ": " + api.library.tried() +
            " not found (no Vulkan loader): " + api.library.reason());
  if (const char *missing = api.library.resolve(
          {requiredSymbol("vkGetInstanceProcAddr", api.vkGetInstanceProcAddr)}))
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + name() + ": " +
                                               api.library.tried() +
                                               " has no " + missing);
  api.vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(
      api.vkGetInstanceProcAddr(nullptr, "vkCreateInstance"));
  auto app = make<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libloomrt";
  app.pEngineName = "Loom";
  app.apiVersion = VK_API_VERSION_1_2;
  auto info = make<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  info.pApplicationInfo = &app;
  VkResult r = api.vkCreateInstance
                   ? api.vkCreateInstance(&info, nullptr, &instance)
                   : VK_ERROR_INITIALIZATION_FAILED;
  if (r != VK_SUCCESS)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     "no device " + name() +
                         ": the Vulkan loader cannot create an instance (" +
                         vkResultName(r) + "; no Vulkan 1.2 driver)");
#define LOOM_VK_RESOLVE(fn)                                                    \
  api.fn = reinterpret_cast<PFN_##fn>(                                         \
      api.vkGetInstanceProcAddr(instance, #fn));                               \
  if (!api.fn)                                                                 \
    return makeError(LOOM_ERROR_NO_DEVICE,                                     \
                     "no device " + name() + ": the Vulkan loader lacks " #fn);
  LOOM_VK_INSTANCE_FUNCTIONS(LOOM_VK_RESOLVE)
#undef LOOM_VK_RESOLVE
  return Error::ok();
}

Error VulkanDevice::openDevice() {
  uint32_t count = 0;
  api.vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> all(count);
  if (count)
    api.vkEnumeratePhysicalDevices(instance, &count, all.data());
  if (number < 0 || number >= int64_t(count))
    return makeError(LOOM_ERROR_NO_DEVICE,
                     "no device " + name() + ": the Vulkan loader found " +
                         std::to_string(count) + " device" +
                         (count == 1 ? "" : "s"));
  physical = all[number];
  api.vkGetPhysicalDeviceProperties(physical, &properties);
  if (properties.apiVersion < VK_API_VERSION_1_2)
    return makeError(LOOM_ERROR_NO_DEVICE,
                     "no device " + name() + ": " + properties.deviceName +
                         " supports Vulkan " +
                         std::to_string(VK_API_VERSION_MAJOR(
                             properties.apiVersion)) +
                         "." +
                         std::to_string(VK_API_VERSION_MINOR(
                             properties.apiVersion)) +
                         "; libloomrt needs 1.2");
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  auto props2 = make<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2);
  props2.pNext = &subgroup;
  api.vkGetPhysicalDeviceProperties2(physical, &props2);
  // Every feature the device has is enabled: the kernels' capabilities
  // were checked against them in supports().
  features12.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
  features11.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES;
  features11.pNext = &features12;
  features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  features.pNext = &features11;
  api.vkGetPhysicalDeviceFeatures2(physical, &features);
  api.vkGetPhysicalDeviceMemoryProperties(physical, &memoryProperties);

  api.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  api.vkGetPhysicalDeviceQueueFamilyProperties(physical, &count,
                                               families.data());
  queueFamily = count;
  for (uint32_t f = 0; f < count && queueFamily == count; ++f)
    if (families[f].queueFlags & VK_QUEUE_COMPUTE_BIT)
      queueFamily = f;
  if (queueFamily == count)
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + name() + ": " +
                                               properties.deviceName +
                                               " has no compute queue");
  float priority = 1;
  auto queueInfo = make<VkDeviceQueueCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO);
  queueInfo.queueFamilyIndex = queueFamily;
  queueInfo.queueCount = 1;
  queueInfo.pQueuePriorities = &priority;
  auto info = make<VkDeviceCreateInfo>(VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO);
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queueInfo;
  if (VkResult r = api.vkCreateDevice(physical, &info, nullptr, &device))
    return makeError(LOOM_ERROR_NO_DEVICE, "no device " + name() +
                                               ": vkCreateDevice failed (" +
                                               vkResultName(r) + ")");
#define LOOM_VK_RESOLVE(fn)                                                    \
  api.fn = reinterpret_cast<PFN_##fn>(api.vkGetDeviceProcAddr(device, #fn));   \
  if (!api.fn)                                                                 \
    return makeError(LOOM_ERROR_NO_DEVICE,                                     \
                     "no device " + name() + ": the driver lacks " #fn);
  LOOM_VK_DEVICE_FUNCTIONS(LOOM_VK_RESOLVE)
#undef LOOM_VK_RESOLVE
  api.vkGetDeviceQueue(device, queueFamily, 0, &queue);
  direct = (properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ||
            properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU) &&
           !environmentIs("LOOM_VULKAN_STAGING", "1", {"0", "1"});
  return Error::ok();
}

Error VulkanDevice::open() {
  if (Error err = openInstance())
    return err;
  return openDevice();
}

VulkanDevice::~VulkanDevice() {
  if (abandoned)
    return;
  if (device) {
    // Every queue (a context's) waited for its work when it went.
    for (auto &[key, p] : pipelines) {
      api.vkDestroyPipeline(device, p.pipeline, nullptr);
      api.vkDestroyPipelineLayout(device, p.layout, nullptr);
      api.vkDestroyDescriptorSetLayout(device, p.setLayout, nullptr);
    }
    for (auto &[base, region] : regions) {
      munmap(reinterpret_cast<void *>(base), size_t(region.bytes));
      destroyRegion(region);
    }
    api.vkDestroyDevice(device, nullptr);
  }
  if (instance)
    api.vkDestroyInstance(instance, nullptr);
}

/// A SPIR-V capability the kernels may require (the device's "features"),
/// and whether the device has it.
bool hasCapability(const VulkanDevice &d, const std::string &c) {
  uint32_t ops = d.subgroup.supportedOperations;
  bool compute = d.subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT;
  // Every Vulkan device runs shaders, and Shader implies Matrix (SPIR-V
  // lists both in a module that declares Shader).
  if (c == "Shader" || c == "Matrix")
    return true;
  if (c == "Int64")
    return d.features.features.shaderInt64;
  if (c == "Int16")
    return d.features.features.shaderInt16;
  if (c == "Float64")
    return d.features.features.shaderFloat64;
  if (c == "Float16")
    return d.features12.shaderFloat16;
  if (c == "Int8")
    return d.features12.shaderInt8;
  if (c == "StorageBuffer16BitAccess")
    return d.features11.storageBuffer16BitAccess;
  if (c == "StorageBuffer8BitAccess")
    return d.features12.storageBuffer8BitAccess;
  if (c == "GroupNonUniform")
    return compute && (ops & VK_SUBGROUP_FEATURE_BASIC_BIT);
  if (c == "GroupNonUniformVote")
    return compute && (ops & VK_SUBGROUP_FEATURE_VOTE_BIT);
  if (c == "GroupNonUniformArithmetic")
    return compute && (ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
  if (c == "GroupNonUniformBallot")
    return compute && (ops & VK_SUBGROUP_FEATURE_BALLOT_BIT);
  if (c == "GroupNonUniformShuffle")
    return compute && (ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT);
  if (c == "GroupNonUniformShuffleRelative")
    return compute && (ops & VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT);
  if (c == "GroupNonUniformClustered")
    return compute && (ops & VK_SUBGROUP_FEATURE_CLUSTERED_BIT);
  return false;
}

Error VulkanDevice::supports(const art::Device &spec) const {
  if (spec.triple.rfind("spirv", 0) != 0)
    return makeError(LOOM_ERROR_FORMAT, "the code is for '" + spec.triple +
                                            "', not a SPIR-V target");
  for (const std::string &f : spec.features)
    if (!hasCapability(*this, f))
      return makeError(LOOM_ERROR_NO_DEVICE,
                       name() + " (" + properties.deviceName +
                           ") lacks the SPIR-V capability '" + f +
                           "' the code requires");
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Error VulkanDevice::createRegion(int64_t bytes, bool host, Region &out) {
  out = {};
  out.bytes = bytes;
  auto info = make<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  info.size = VkDeviceSize(bytes);
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
               VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = api.vkCreateBuffer(device, &info, nullptr, &out.buffer))
    return fail("vkCreateBuffer of " + std::to_string(bytes) + " bytes", r);
  VkMemoryRequirements req;
  api.vkGetBufferMemoryRequirements(device, out.buffer, &req);
  VkMemoryPropertyFlags want =
      host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                 VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
           : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = memoryProperties.memoryTypeCount;
  for (uint32_t t = 0; t < memoryProperties.memoryTypeCount; ++t)
    if ((req.memoryTypeBits & (1u << t)) &&
        (memoryProperties.memoryTypes[t].propertyFlags & want) == want) {
      type = t;
      break;
    }
  if (type == memoryProperties.memoryTypeCount) {
    destroyRegion(out);
    return makeError(LOOM_ERROR_LIBRARY,
                     name() + " has no " +
                         (host ? "host-visible" : "device-local") +
                         " memory for a storage buffer");
  }
  auto alloc = make<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkResult r = api.vkAllocateMemory(device, &alloc, nullptr, &out.memory);
  if (r == VK_SUCCESS)
    r = api.vkBindBufferMemory(device, out.buffer, out.memory, 0);
  void *mapped = nullptr;
  if (r == VK_SUCCESS && host)
    r = api.vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &mapped);
  out.mapped = static_cast<char *>(mapped);
  if (r != VK_SUCCESS) {
    destroyRegion(out);
    return fail("allocating " + std::to_string(bytes) + " bytes", r);
  }
  return Error::ok();
}

void VulkanDevice::destroyRegion(Region &region) {
  if (region.buffer)
    api.vkDestroyBuffer(device, region.buffer, nullptr);
  if (region.memory)
    api.vkFreeMemory(device, region.memory, nullptr);
  region = {};
}

Error VulkanDevice::allocate(int64_t bytes, Allocation &out) {
  out = {};
  if (bytes <= 0)
    return Error::ok();
  void *base = mmap(nullptr, size_t(bytes), PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    return makeError(LOOM_ERROR_IO, "cannot reserve " + std::to_string(bytes) +
                                        " bytes of addresses for " + name());
  Region region;
  if (Error err = createRegion(bytes, direct, region)) {
    munmap(base, size_t(bytes));
    return err;
  }
  std::lock_guard<std::mutex> lock(regionsMutex);
  regions[reinterpret_cast<uintptr_t>(base)] = region;
  out.data = base;
  out.bytes = bytes;
  return Error::ok();
}

void VulkanDevice::deallocate(Allocation &allocation) {
  if (!allocation.data || abandoned)
    return;
  std::lock_guard<std::mutex> lock(regionsMutex);
  auto it = regions.find(reinterpret_cast<uintptr_t>(allocation.data));
  if (it != regions.end()) {
    destroyRegion(it->second);
    regions.erase(it);
  }
  munmap(allocation.data, size_t(allocation.bytes));
  allocation = {};
}

Error VulkanDevice::resolve(const void *address, int64_t bytes,
                            Region &region, int64_t &offset) {
  auto at = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(regionsMutex);
  auto it = regions.upper_bound(at);
  if (it != regions.begin()) {
    --it;
    offset = int64_t(at - it->first);
    if (offset + bytes <= it->second.bytes) {
      region = it->second;
      return Error::ok();
    }
  }
  return makeError(LOOM_ERROR_INVALID_ARGUMENT,
                   name() + ": " + std::to_string(bytes) +
                       " bytes at an address that is not its memory");
}

//===----------------------------------------------------------------------===//
// Queues
//===----------------------------------------------------------------------===//

Device &VulkanQueue::device() const { return owner; }

Error VulkanQueue::create() {
  const Api &api = owner.api;
  auto poolInfo = make<VkCommandPoolCreateInfo>(VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO);
  poolInfo.queueFamilyIndex = owner.queueFamily;
  if (VkResult r =
          api.vkCreateCommandPool(owner.device, &poolInfo, nullptr, &pool))
    return owner.fail("vkCreateCommandPool", r);
  auto cbInfo = make<VkCommandBufferAllocateInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO);
  cbInfo.commandPool = pool;
  cbInfo.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cbInfo.commandBufferCount = 1;
  if (VkResult r =
          api.vkAllocateCommandBuffers(owner.device, &cbInfo, &commands))
    return owner.fail("vkAllocateCommandBuffers", r);
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 4096};
  auto dpInfo = make<VkDescriptorPoolCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO);
  dpInfo.maxSets = 512;
  dpInfo.poolSizeCount = 1;
  dpInfo.pPoolSizes = &size;
  if (VkResult r = api.vkCreateDescriptorPool(owner.device, &dpInfo, nullptr,
                                              &descriptors))
    return owner.fail("vkCreateDescriptorPool", r);
  auto fenceInfo = make<VkFenceCreateInfo>(VK_STRUCTURE_TYPE_FENCE_CREATE_INFO);
  if (VkResult r = api.vkCreateFence(owner.device, &fenceInfo, nullptr, &fence))
    return owner.fail("vkCreateFence", r);
  return Error::ok();
}

VulkanQueue::~VulkanQueue() {
  const Api &api = owner.api;
  if (recording)
    (void)synchronize();
  if (pending && api.vkWaitForFences(owner.device, 1, &fence, VK_TRUE,
                                     uint64_t(owner.timeoutSeconds * 1e9)) !=
                     VK_SUCCESS) {
    owner.abandoned = true;
    return;
  }
  owner.destroyRegion(staging);
  if (fence)
    api.vkDestroyFence(owner.device, fence, nullptr);
  if (descriptors)
    api.vkDestroyDescriptorPool(owner.device, descriptors, nullptr);
  if (pool)
    api.vkDestroyCommandPool(owner.device, pool, nullptr);
}

/// Every earlier compute or transfer write is visible to every later
/// compute or transfer access (and, before the host reads, to the host).
void barrier(const Api &api, VkCommandBuffer cb, bool toHost) {
  auto b = make<VkMemoryBarrier>(VK_STRUCTURE_TYPE_MEMORY_BARRIER);
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  b.dstAccessMask =
      toHost ? VK_ACCESS_HOST_READ_BIT
             : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  VkPipelineStageFlags stages =
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  api.vkCmdPipelineBarrier(cb, stages,
                           toHost ? VK_PIPELINE_STAGE_HOST_BIT : stages, 0, 1,
                           &b, 0, nullptr, 0, nullptr);
}

Error VulkanQueue::begin(VkCommandBuffer &cb) {
  if (!pool)
    if (Error err = create())
      return err;
  if (!recording) {
    auto info = make<VkCommandBufferBeginInfo>(VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO);
    info.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    if (VkResult r = owner.api.vkBeginCommandBuffer(commands, &info))
      return owner.fail("vkBeginCommandBuffer", r);
    recording = true;
  } else {
    barrier(owner.api, commands, false);
  }
  cb = commands;
  return Error::ok();
}

Error VulkanQueue::synchronize() {
  if (!recording)
    return Error::ok();
  const Api &api = owner.api;
  barrier(api, commands, true);
  recording = false;
  if (VkResult r = api.vkEndCommandBuffer(commands))
    return owner.fail("vkEndCommandBuffer", r);
  api.vkResetFences(owner.device, 1, &fence);
  auto submit = make<VkSubmitInfo>(VK_STRUCTURE_TYPE_SUBMIT_INFO);
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &commands;
  VkResult r;
  {
    std::lock_guard<std::mutex> lock(owner.submitMutex);
    r = api.vkQueueSubmit(owner.queue, 1, &submit, fence);
  }
  if (r != VK_SUCCESS)
    return owner.fail("vkQueueSubmit", r);
  pending = true;
  r = api.vkWaitForFences(owner.device, 1, &fence, VK_TRUE,
                          uint64_t(owner.timeoutSeconds * 1e9));
  if (r == VK_TIMEOUT)
    return makeError(LOOM_ERROR_LIBRARY,
                     owner.name() + ": the queue's work did not finish "
                                    "within " +
                         std::to_string(owner.timeoutSeconds) +
                         " s (LOOM_DEVICE_TIMEOUT)");
  if (r != VK_SUCCESS)
    return owner.fail("vkWaitForFences", r);
  pending = false;
  api.vkResetCommandPool(owner.device, pool, 0);
  api.vkResetDescriptorPool(owner.device, descriptors, 0);
  stagingUsed = 0;
  return Error::ok();
}

std::unique_ptr<Event> VulkanQueue::record() {
  // Events are recorded by completing the queue's work: an error of that
  // work surfaces at the queue's next synchronize.
  (void)synchronize();
  return std::make_unique<DoneEvent>();
}

Error VulkanQueue::descriptorSet(VkDescriptorSetLayout layout,
                                 VkDescriptorSet &out) {
  auto info = make<VkDescriptorSetAllocateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO);
  info.descriptorSetCount = 1;
  info.pSetLayouts = &layout;
  if (!pool)
    if (Error err = create())
      return err;
  info.descriptorPool = descriptors;
  VkResult r = owner.api.vkAllocateDescriptorSets(owner.device, &info, &out);
  if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
    if (Error err = synchronize())
      return err;
    r = owner.api.vkAllocateDescriptorSets(owner.device, &info, &out);
  }
  if (r != VK_SUCCESS)
    return owner.fail("vkAllocateDescriptorSets", r);
  return Error::ok();
}

Error VulkanQueue::stagingSpace(int64_t bytes, VkBuffer &buffer,
                                int64_t &offset, char *&host) {
  if (stagingUsed + bytes > staging.bytes) {
    if (Error err = synchronize())
      return err;
    if (bytes > staging.bytes) {
      owner.destroyRegion(staging);
      int64_t size = std::max<int64_t>(bytes, 1 << 20);
      if (Error err = owner.createRegion(size, true, staging))
        return err;
    }
  }
  buffer = staging.buffer;
  offset = stagingUsed;
  host = staging.mapped + stagingUsed;
  stagingUsed += (bytes + 63) / 64 * 64;
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// Code
//===----------------------------------------------------------------------===//

Error VulkanDevice::loadImage(const art::Device &, const uint8_t *data,
                              uint64_t size) {
  if (size % 4)
    return makeError(LOOM_ERROR_FORMAT,
                     "the vulkan image is not a SPIR-V module (" +
                         std::to_string(size) +
                         " bytes, not a whole number of words)");
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), data, size);
  if (Error err = readEntryPoints(words, entryPoints))
    return err;
  std::string error;
  if (!image.index(std::move(words), error))
    return makeError(LOOM_ERROR_FORMAT, "the vulkan image is " + error);
  return Error::ok();
}

Error VulkanDevice::pipelineFor(const std::string &kernel, size_t numBuffers,
                                Pipeline &out) {
  auto key = std::make_pair(kernel, numBuffers);
  auto it = pipelines.find(key);
  if (it != pipelines.end()) {
    out = it->second;
    return Error::ok();
  }
  // A module of the entry point alone: a driver parses the whole module for
  // each pipeline (SpirvModule.h).
  std::vector<uint32_t> words;
  std::string error;
  if (!image.cut(entryPoints.at(kernel).id, words, error))
    return makeError(LOOM_ERROR_FORMAT, "the vulkan image: " + error);
  Pipeline p;
  std::vector<VkDescriptorSetLayoutBinding> bindings(numBuffers);
  for (size_t i = 0; i < numBuffers; ++i)
    bindings[i] = {uint32_t(i), VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                   VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
  auto setInfo = make<VkDescriptorSetLayoutCreateInfo>(VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO);
  setInfo.bindingCount = uint32_t(numBuffers);
  setInfo.pBindings = bindings.data();
  VkResult r =
      api.vkCreateDescriptorSetLayout(device, &setInfo, nullptr, &p.setLayout);
  auto layoutInfo = make<VkPipelineLayoutCreateInfo>(VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO);
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pSetLayouts = &p.setLayout;
  if (r == VK_SUCCESS)
    r = api.vkCreatePipelineLayout(device, &layoutInfo, nullptr, &p.layout);
  auto moduleInfo = make<VkShaderModuleCreateInfo>(
      VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
  moduleInfo.codeSize = words.size() * 4;
  moduleInfo.pCode = words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (r == VK_SUCCESS)
    r = api.vkCreateShaderModule(device, &moduleInfo, nullptr, &module);
  auto info = make<VkComputePipelineCreateInfo>(VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO);
  info.stage = make<VkPipelineShaderStageCreateInfo>(
      VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO);
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = kernel.c_str();
  info.layout = p.layout;
  if (r == VK_SUCCESS)
    r = api.vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, nullptr,
                                     &p.pipeline);
  // A pipeline keeps nothing of its module.
  if (module)
    api.vkDestroyShaderModule(device, module, nullptr);
  // Whatever was made is destroyed with the device.
  pipelines[key] = p;
  if (r != VK_SUCCESS)
    return fail("creating the pipeline of kernel '" + kernel + "'", r);
  out = p;
  return Error::ok();
}

Error VulkanDevice::checkLaunch(const art::DispatchStep &s,
                                const std::string &at) const {
  const VkPhysicalDeviceLimits &l = properties.limits;
  auto it = entryPoints.find(s.kernel);
  if (it == entryPoints.end())
    return makeError(LOOM_ERROR_FORMAT,
                     at + "the vulkan image has no entry point '" + s.kernel +
                         "'");
  if (it->second.executionModel != 5) // GLCompute
    return makeError(LOOM_ERROR_FORMAT,
                     at + "the entry point is not a compute shader");
  const std::array<int64_t, 3> &local = it->second.localSize;
  if (local[0] && local != s.block)
    return makeError(LOOM_ERROR_FORMAT,
                     at + "block " + launchSizes(s.block) +
                         ", but the kernel's workgroup size is " +
                         launchSizes(local));
  int64_t invocations = s.block[0] * s.block[1] * s.block[2];
  for (int i = 0; i < 3; ++i) {
    if (s.block[i] > int64_t(l.maxComputeWorkGroupSize[i]) ||
        invocations > int64_t(l.maxComputeWorkGroupInvocations))
      return makeError(LOOM_ERROR_FORMAT,
                       at + "block " + launchSizes(s.block) + " exceeds " + name() +
                           "'s workgroup limits (" +
                           std::to_string(l.maxComputeWorkGroupInvocations) +
                           " invocations, " +
                           launchSizes({l.maxComputeWorkGroupSize[0],
                                  l.maxComputeWorkGroupSize[1],
                                  l.maxComputeWorkGroupSize[2]}) +
                           ")");
    if (s.grid[i] > int64_t(l.maxComputeWorkGroupCount[i]))
      return makeError(LOOM_ERROR_FORMAT,
                       at + "grid " + launchSizes(s.grid) + " exceeds " + name() +
                           "'s workgroup count limits " +
                           launchSizes({l.maxComputeWorkGroupCount[0],
                                  l.maxComputeWorkGroupCount[1],
                                  l.maxComputeWorkGroupCount[2]}));
  }
  if (s.sharedBytes > int64_t(l.maxComputeSharedMemorySize))
    return makeError(LOOM_ERROR_FORMAT,
                     at + std::to_string(s.sharedBytes) +
                         " shared bytes exceed " + name() + "'s " +
                         std::to_string(l.maxComputeSharedMemorySize));
  if (s.args.size() > l.maxPerStageDescriptorStorageBuffers)
    return makeError(LOOM_ERROR_FORMAT,
                     at + std::to_string(s.args.size()) +
                         " buffers exceed " + name() + "'s " +
                         std::to_string(l.maxPerStageDescriptorStorageBuffers) +
                         " storage buffers per stage");
  return Error::ok();
}

Error VulkanDevice::prepareDispatch(const art::DispatchStep &s,
                                    const std::string &at,
                                    const std::vector<int64_t> &bufferBytes,
                                    std::unique_ptr<PreparedStep> &out) {
  if (Error err = checkLaunch(s, at))
    return err;
  Pipeline p;
  if (Error err = pipelineFor(s.kernel, s.args.size(), p))
    return err;
  auto d = std::make_unique<Dispatch>();
  d->pipeline = p.pipeline;
  d->layout = p.layout;
  d->setLayout = p.setLayout;
  d->step = s;
  for (int64_t id : s.args)
    d->argBytes.push_back(bufferBytes[id]);
  out = std::move(d);
  return Error::ok();
}

//===----------------------------------------------------------------------===//
// Launches and transfers
//===----------------------------------------------------------------------===//

Error VulkanDevice::launchLibrary(Queue &queue, const PreparedStep &step,
                                  void *const *buffers) {
  // This device made both.
  auto &q = static_cast<VulkanQueue &>(queue);
  const auto &d = static_cast<const Dispatch &>(step);
  size_t n = d.step.args.size();
  std::vector<VkDescriptorBufferInfo> infos(n);
  std::vector<VkWriteDescriptorSet> writes(n);
  int64_t alignment = int64_t(properties.limits.minStorageBufferOffsetAlignment);
  for (size_t i = 0; i < n; ++i) {
    Region region;
    int64_t offset = 0, bytes = d.argBytes[i];
    if (Error err = resolve(buffers[d.step.args[i]], bytes, region, offset))
      return err;
    if (alignment > 1 && offset % alignment)
      return makeError(LOOM_ERROR_FORMAT,
                       "gpu.dispatch of '" + d.step.kernel + "': buffer " +
                           std::to_string(d.step.args[i]) + " at offset " +
                           std::to_string(offset) + " is not a multiple of " +
                           name() + "'s storage buffer alignment " +
                           std::to_string(alignment));
    infos[i] = {region.buffer, VkDeviceSize(offset),
                bytes > 0 ? VkDeviceSize(bytes) : VK_WHOLE_SIZE};
    writes[i] = make<VkWriteDescriptorSet>(VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET);
    writes[i].dstBinding = uint32_t(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  VkDescriptorSet set;
  if (Error err = q.descriptorSet(d.setLayout, set))
    return err;
  VkCommandBuffer cb;
  if (Error err = q.begin(cb))
    return err;
  for (VkWriteDescriptorSet &w : writes)
    w.dstSet = set;
  api.vkUpdateDescriptorSets(device, uint32_t(n), writes.data(), 0, nullptr);
  api.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
  api.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.layout, 0,
                              1, &set, 0, nullptr);
  api.vkCmdDispatch(cb, uint32_t(d.step.grid[0]), uint32_t(d.step.grid[1]),
                    uint32_t(d.step.grid[2]));
  return Error::ok();
}

Error VulkanDevice::copy(Queue &queue, void *dst, const void *src,
                         int64_t bytes) {
  if (bytes <= 0)
    return Error::ok();
  Region from, to;
  int64_t fromOffset = 0, toOffset = 0;
  if (Error err = resolve(src, bytes, from, fromOffset))
    return err;
  if (Error err = resolve(dst, bytes, to, toOffset))
    return err;
  VkCommandBuffer cb;
  if (Error err = static_cast<VulkanQueue &>(queue).begin(cb))
    return err;
  VkBufferCopy region{VkDeviceSize(fromOffset), VkDeviceSize(toOffset),
                      VkDeviceSize(bytes)};
  api.vkCmdCopyBuffer(cb, from.buffer, to.buffer, 1, &region);
  return Error::ok();
}

Error VulkanDevice::readToHost(Queue &queue, void *host, const void *src,
                               int64_t bytes) {
  return hostTransfer(static_cast<VulkanQueue &>(queue), src, host, bytes,
                      false);
}

Error VulkanDevice::writeFromHost(Queue &queue, void *dst, const void *host,
                                  int64_t bytes) {
  return hostTransfer(static_cast<VulkanQueue &>(queue), dst,
                      const_cast<void *>(host), bytes, true);
}

Error VulkanDevice::hostTransfer(VulkanQueue &q, const void *address,
                                 void *host, int64_t bytes, bool toDevice) {
  if (bytes <= 0)
    return Error::ok();
  Region region;
  int64_t offset = 0;
  if (Error err = resolve(address, bytes, region, offset))
    return err;
  if (region.mapped) {
    // What the queue holds may still read or write these bytes.
    if (Error err = q.synchronize())
      return err;
    if (toDevice)
      std::memcpy(region.mapped + offset, host, size_t(bytes));
    else
      std::memcpy(host, region.mapped + offset, size_t(bytes));
    return Error::ok();
  }
  VkBuffer staging = VK_NULL_HANDLE;
  int64_t stagingOffset = 0;
  char *stagingHost = nullptr;
  if (Error err = q.stagingSpace(bytes, staging, stagingOffset, stagingHost))
    return err;
  if (toDevice)
    std::memcpy(stagingHost, host, size_t(bytes));
  VkCommandBuffer cb;
  if (Error err = q.begin(cb))
    return err;
  VkBufferCopy copy{VkDeviceSize(toDevice ? stagingOffset : offset),
                    VkDeviceSize(toDevice ? offset : stagingOffset),
                    VkDeviceSize(bytes)};
  api.vkCmdCopyBuffer(cb, toDevice ? staging : region.buffer,
                      toDevice ? region.buffer : staging, 1, &copy);
  if (toDevice)
    return Error::ok();
  if (Error err = q.synchronize())
    return err;
  std::memcpy(host, stagingHost, size_t(bytes));
  return Error::ok();
}

} // namespace

Error loom::rt::createVulkanDevice(int64_t ordinal,
                                   const DeviceOptions &options,
                                   std::unique_ptr<Device> &out) {
  auto device = std::make_unique<VulkanDevice>(ordinal, options);
  if (Error err = device->open())
    return err;
  out = std::move(device);
  return Error::ok();
}

#endif // LOOM_RT_VULKAN
