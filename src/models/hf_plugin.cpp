// The hf backend's loader: finds liblmeval_hf_{cpu,cuda}.so and opens it with dlopen the first
// time an hf model is built, so that commands without one (-h, ls, validate, dummy, the API
// models, compare, merge, ...) never map libtorch (as llama.cpp loads its ggml backends).
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "lmeval/core/error.hpp"
#include "lmeval/data/hub_client.hpp"
#include "lmeval/models/hf/hf_args.hpp"
#include "lmeval/models/hf/hf_model.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "models/malloc_policy.hpp"

namespace lmeval {

namespace fs = std::filesystem;

fs::path hf_plugin_dir() {
  if (const char* env = std::getenv("LMEVAL_PLUGIN_DIR"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path();
  // build/: beside build/lm-eval. Installed (cmake --install): PREFIX/lib/lm-eval beside
  // PREFIX/bin.
  fs::path here = exe.parent_path();
  fs::path installed = here.parent_path() / "lib" / "lm-eval";
  for (const char* name : {"liblmeval_hf_cpu.so", "liblmeval_hf_cuda.so"})
    if (fs::exists(here / name, ec)) return here;
  for (const char* name : {"liblmeval_hf_cpu.so", "liblmeval_hf_cuda.so"})
    if (fs::exists(installed / name, ec)) return installed;
  return here;
}

namespace {

using CreateFn = LM* (*)(const Json&, const ModelOptions&);
using AbiFn = const char* (*)();

std::string expected_abi() {
  return std::string(LMEVAL_VERSION_STRING) + "/" + std::to_string(kHfPluginAbi);
}

std::string plugin_file(const std::string& flavour) { return "liblmeval_hf_" + flavour + ".so"; }

// What to run to get the plugin of a flavour.
std::string how_to_build(const std::string& flavour) {
  if (flavour == "cuda")
    return "build it with `scripts/setup.sh --cuda` (a Python venv with PyPI's CUDA torch wheel, "
           "then "
           "the plugin against that wheel's libtorch), or run on the CPU with --device cpu";
  return "build it with `scripts/setup.sh` (Debian's libtorch-dev; it is built next to "
         "build/lm-eval), "
         "or point LMEVAL_PLUGIN_DIR at the folder that holds it";
}

// libgomp (libtorch's OpenMP) reads OMP_WAIT_POLICY once, when the plugin loads it. Its default
// lets a worker that finished its share spin before sleeping; on cores shared with other jobs the
// spinning thread holds the core the straggler needs, and every parallel region of a decode step
// waits for a time slice: a small model's generations ran more than 8x slower that way
// (docs/performance.md, "OpenMP wait policy"). PASSIVE sleeps at once. The user's own setting wins.
void default_openmp_wait_policy() { setenv("OMP_WAIT_POLICY", "PASSIVE", /*overwrite=*/0); }

// OpenBLAS (Debian's libtorch multiplies float32 through it) reads OPENBLAS_THREAD_TIMEOUT once,
// when it loads: its workers spin in sched_yield for 2^n cycles after each product before they
// sleep (n = 28 by default, about 0.1 s). Between a prefill's products lm-eval's own kernels run
// on both cores, and the spinning workers took their time slices: a 102M Llama's gsm8k prefill
// ran 20% faster with n = 4, the least it takes (docs/performance.md, "Prefill attention"). The
// user's own setting (this name or GOTO_THREAD_TIMEOUT) wins.
void default_openblas_thread_timeout() {
  if (!std::getenv("GOTO_THREAD_TIMEOUT")) setenv("OPENBLAS_THREAD_TIMEOUT", "4", /*overwrite=*/0);
}

// Opens (once per process) and checks a plugin; UserError when absent or unusable.
CreateFn open_plugin(const std::string& flavour) {
  static std::mutex mu;
  static std::map<std::string, CreateFn> opened;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = opened.find(flavour); it != opened.end()) return it->second;
  const fs::path path = hf_plugin_dir() / plugin_file(flavour);
  const std::string what = "the " +
                           std::string(flavour == "cuda"           ? "CUDA "
                                       : flavour == "transformers" ? "transformers-path "
                                                                   : "CPU ") +
                           "hf backend " + path.string();
  if (!fs::exists(path))
    throw UserError(what + " is not there: " + how_to_build(flavour), {"", 0, 0, "--model hf"},
                    plugin_file(flavour) + " next to lm-eval or in $LMEVAL_PLUGIN_DIR");
  default_openmp_wait_policy();
  default_openblas_thread_timeout();
  keep_freed_memory();
  // Never closed: libtorch does not support being unloaded.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    throw UserError(what + " could not be loaded (" + std::string(err ? err : "unknown error") +
                        "): re" + how_to_build(flavour),
                    {"", 0, 0, "--model hf"},
                    "a plugin built from these sources with its libtorch installed");
  }
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "lmeval_hf_plugin_abi"));
  auto create = reinterpret_cast<CreateFn>(dlsym(handle, "lmeval_hf_plugin_create"));
  if (!abi || !create || abi() != expected_abi())
    throw UserError(what + " was built from other sources (" +
                        (abi ? std::string(abi()) : "no version") + ", this lm-eval is " +
                        expected_abi() + "): re" + how_to_build(flavour),
                    {"", 0, 0, "--model hf"}, "a plugin built with this lm-eval");
  opened[flavour] = create;
  return create;
}

// The folder HFLM will load (pretrained, a Hub id fetched, subfolder applied); nullopt when it
// cannot be had, which the plugin then reports as it always has.
std::optional<fs::path> model_dir_of(const hf::HfArgs& a) {
  std::error_code ec;
  if (fs::is_directory(a.pretrained, ec))
    return a.subfolder.empty() ? fs::path(a.pretrained) : fs::path(a.pretrained) / a.subfolder;
  if (fs::exists(a.pretrained, ec) || a.pretrained.rfind('/', 0) == 0 ||
      a.pretrained.rfind('.', 0) == 0)
    return std::nullopt;
  try {
    return hub::resolve_model_dir(a.pretrained, a.revision.empty() ? "main" : a.revision,
                                  a.subfolder);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::unique_ptr<LM> load_hf_model(const Json& model_args, const ModelOptions& options) {
  // A model that needs transformers runs in the transformers plugin, which maps no libtorch of its
  // own: transformers' libtorch (imported by the embedded Python) and the native plugin's cannot
  // share a process (their static registries collide).
  {
    const hf::HfArgs args = hf::parse_hf_args(model_args, options);
    const auto dir = model_dir_of(args);
    if (dir && hf::transformers_path_reason(args, *dir))
      return std::unique_ptr<LM>(open_plugin("transformers")(model_args, options));
  }
  // The device as HFLM will see it: --device wins over model_args device.
  std::string device;
  if (options.device)
    device = *options.device;
  else if (model_args.is_object() && model_args.contains("device") &&
           model_args["device"].is_string())
    device = model_args["device"].get<std::string>();
  std::string flavour;
  if (device.rfind("cuda", 0) == 0) {
    flavour = "cuda";
  } else if (device.empty()) {
    // HFLM: cuda when available, else cpu. The CUDA plugin itself falls back to the CPU.
    flavour = fs::exists(hf_plugin_dir() / plugin_file("cuda")) ? "cuda" : "cpu";
  } else {
    // A CUDA libtorch runs on the CPU as well: the CUDA plugin serves when it is the only one.
    flavour = !fs::exists(hf_plugin_dir() / plugin_file("cpu")) &&
                      fs::exists(hf_plugin_dir() / plugin_file("cuda"))
                  ? "cuda"
                  : "cpu";
  }
  CreateFn create;
  try {
    create = open_plugin(flavour);
  } catch (const UserError& e) {
    if (flavour != "cuda" || device.empty()) throw;
    // Name the device that asked for CUDA and where it was given.
    const std::string from = options.device ? "--device" : "--model_args device";
    throw UserError("device " + device + " (" + from + ") runs on CUDA: " + e.message(),
                    {"", 0, 0, from}, e.expected());
  }
  return std::unique_ptr<LM>(create(model_args, options));
}

void register_hf_model(ModelRegistry& registry) {
  ModelInfoEntry e;
  e.name = "hf";
  e.description =
      "Hugging Face causal LM folder (safetensors) run with libtorch (plugin, loaded on use)";
  e.args = model_args::infos(hf::hf_model_args());
  e.factory = [](const Json& args, const ModelOptions& options) {
    return load_hf_model(args, options);
  };
  registry.add(std::move(e), {"hf-auto", "huggingface"});
}

}  // namespace lmeval
