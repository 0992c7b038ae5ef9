// Which weight files of a folder are read, in transformers' order of preference
// (modeling_utils._get_resolved_checkpoint_files for a local folder), and the index over them.
#include "models/hf/weight_files.hpp"

#include <set>

#include "lmeval/core/error.hpp"
#include "models/hf/gguf_model.hpp"
#include "models/hf/json_file.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

namespace {

// The shard files an index (model.safetensors.index.json, pytorch_model.bin.index.json) names,
// each once, in the order first named.
std::vector<fs::path> shards_of_index(const fs::path& dir, const fs::path& index) {
  const Json j = load_json_file(index, "the weights index");
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw UserError("the weights index has no weight_map", {index.string(), 0, 0, "$.weight_map"},
                    "an object mapping tensor names to shard files");
  std::vector<fs::path> files;
  std::set<std::string> seen;
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string())
      throw UserError("shard name is not a string", {index.string(), 0, 0, "$.weight_map." + name},
                      "a file name");
    // transformers joins the name to the folder as given, so an absolute name or one with ".."
    // would read weights from anywhere: only files inside the model folder are accepted.
    const fs::path rel(shard.get<std::string>());
    bool inside = !rel.empty() && rel.is_relative() && rel.has_filename();
    for (const auto& part : rel) inside = inside && part != "..";
    if (!inside)
      throw UserError(
          "shard name '" + shard.get<std::string>() + "' is not a file inside " + dir.string(),
          {index.string(), 0, 0, "$.weight_map." + name},
          "the name of a shard file in the model folder");
    if (seen.insert(shard.get<std::string>()).second) files.push_back(dir / rel);
  }
  for (const auto& f : files)
    if (!fs::exists(f))
      throw UserError("weights shard " + f.filename().string() + " named in the index is missing",
                      {index.string(), 0, 0, "$.weight_map"}, "every shard file present");
  return files;
}

}  // namespace

std::unique_ptr<WeightFiles> WeightFiles::open_model(const fs::path& dir) {
  auto w = std::unique_ptr<WeightFiles>(new WeightFiles());
  // transformers prefers safetensors whenever present; pytorch_model.bin is read only without.
  const std::vector<std::pair<const char*, bool>> candidates = {
      {"model.safetensors", false},
      {"model.safetensors.index.json", true},
      {"pytorch_model.bin", false},
      {"pytorch_model.bin.index.json", true}};
  for (const auto& [name, is_index] : candidates) {
    const fs::path p = dir / name;
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;
    w->source_ = p;
    if (is_index)
      for (const auto& f : shards_of_index(dir, p)) w->add(f);
    else
      w->add(p);
    return w;
  }
  throw UserError("no model weights found in " + dir.string(), {dir.string(), 0, 0, ""},
                  "model.safetensors, pytorch_model.bin, or the index of their shards "
                  "(model.safetensors.index.json, pytorch_model.bin.index.json)");
}

std::unique_ptr<WeightFiles> WeightFiles::open_file(const fs::path& path) {
  auto w = std::unique_ptr<WeightFiles>(new WeightFiles());
  w->source_ = path;
  w->add(path);
  return w;
}

std::unique_ptr<WeightFiles> WeightFiles::open_gguf(const fs::path& path) {
  auto w = std::unique_ptr<WeightFiles>(new WeightFiles());
  w->source_ = path;
  w->gguf_ = std::make_unique<GgufTensors>(path);
  return w;
}

WeightFiles::~WeightFiles() = default;

void WeightFiles::add(const fs::path& f) {
  // A tensor named by two shards is read from the last, as a dict update over the shards is.
  if (f.extension() == ".safetensors") {
    auto& file = files_.emplace_back(std::make_unique<SafetensorsFile>(f));
    for (const auto& [name, view] : std::get<0>(file)->tensors()) index_[name] = {&file, &view};
  } else {
    auto& file = files_.emplace_back(std::make_unique<TorchFile>(f));
    for (const auto& [name, view] : std::get<1>(file)->tensors()) index_[name] = {&file, &view};
  }
}

const TensorView* WeightFiles::find(const std::string& name) const {
  if (gguf_) return gguf_->find(name);
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second.second;
}

std::vector<std::string> WeightFiles::names() const {
  if (gguf_) return gguf_->names();
  std::vector<std::string> out;
  out.reserve(index_.size());
  for (const auto& [k, v] : index_) out.push_back(k);
  return out;
}

void WeightFiles::release(const TensorView& t) const {
  if (gguf_) return gguf_->release(t);
  auto it = index_.find(t.name);
  if (it == index_.end() || it->second.second != &t) return;
  std::visit([&](const auto& f) { f->release(t); }, *it->second.first);
}

}  // namespace lmeval::hf
