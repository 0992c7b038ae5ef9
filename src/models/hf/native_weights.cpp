// The native loaders' shared set-up and checked tensor lookup (native_weights.hpp).
#include "models/hf/native_weights.hpp"

#include <torch/cuda.h>

#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"

namespace lmeval::hf {

at::Device native_device(const std::string& requested) {
  std::string dev = requested.empty() ? "cpu" : requested;
  if (dev.rfind("cuda", 0) == 0) {
    if (!torch::cuda::is_available()) {
      // HFLM does the same silently; a warning tells users why the run is slow.
      log::warn("hf: device " + dev +
                ": CUDA is not available (no GPU, or a libtorch built without CUDA); running on "
                "the CPU");
      dev = "cpu";
    } else if (dev.size() > 5 && dev[4] == ':') {
      // An index past the GPUs present would fail inside libtorch on first use.
      const std::string idx = dev.substr(5);
      long n = idx.find_first_not_of("0123456789") == std::string::npos && idx.size() < 6
                   ? std::stol(idx)
                   : -1;
      long count = static_cast<long>(torch::cuda::device_count());
      if (n < 0 || n >= count)
        throw UserError("device '" + dev + "' does not exist: this machine has " +
                            std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s"),
                        {"", 0, 0, "device"},
                        "cpu, cuda or cuda:N with N from 0 to " + std::to_string(count - 1));
    }
  } else if (dev != "cpu") {
    throw UserError("unsupported device '" + requested + "'", {"", 0, 0, "device"},
                    "cpu, cuda or cuda:N");
  }
  try {
    return at::Device(dev);
  } catch (const c10::Error&) {
    throw UserError("invalid device '" + requested + "'", {"", 0, 0, "device"},
                    "cpu, cuda or cuda:N");
  }
}

at::ScalarType safetensors_scalar_type(const std::string& dtype) {
  if (dtype == "F32") return at::kFloat;
  if (dtype == "F16") return at::kHalf;
  if (dtype == "BF16") return at::kBFloat16;
  if (dtype == "F64") return at::kDouble;
  if (dtype == "I64") return at::kLong;
  if (dtype == "I32") return at::kInt;
  if (dtype == "I8") return at::kChar;
  if (dtype == "U8") return at::kByte;
  if (dtype == "BOOL") return at::kBool;
  return at::kFloat;
}

std::string torch_dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kDouble:
      return "torch.float64";
    default:
      return "torch.float32";
  }
}

const TensorView* find_weight(const WeightArchive& w, const std::vector<std::string>& names,
                              const std::vector<int64_t>& shape, bool required,
                              const std::string& architecture) {
  const TensorView* view = nullptr;
  for (const auto& n : names)
    if ((view = w.find(n))) break;
  if (!view) {
    if (!required) return nullptr;
    throw UserError("weights lack tensor '" + names.front() + "'", {"", 0, 0, names.front()},
                    "a checkpoint of " + architecture + " matching config.json");
  }
  if (view->shape != shape) {
    auto fmt = [](const std::vector<int64_t>& s) {
      std::string o = "[";
      for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
      return o + "]";
    };
    throw UserError("tensor '" + view->name + "' has shape " + fmt(view->shape) +
                        " but config.json implies " + fmt(shape),
                    {view->file, 0, 0, view->name}, "weights consistent with config.json");
  }
  if (view->dtype != "F32" && view->dtype != "F16" && view->dtype != "BF16" && view->dtype != "F64")
    throw UserError("tensor '" + view->name + "' has dtype " + view->dtype,
                    {view->file, 0, 0, view->name}, "F32, F16 or BF16 weights");
  return view;
}

at::Tensor tensor_over(const TensorView& view) {
  return at::from_blob(const_cast<std::byte*>(view.data), view.shape,
                       at::TensorOptions().dtype(safetensors_scalar_type(view.dtype)));
}

}  // namespace lmeval::hf
