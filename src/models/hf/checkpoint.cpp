// Memory-mapped safetensors archives and the JSON files of a model folder (no torch here).
#include "models/hf/checkpoint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"
#include "models/hf/json_file.hpp"
#include "models/hf/lora.hpp"
#include "models/hf/quant_weights.hpp"
#include "models/hf/weight_edits.hpp"
#include "models/hf/weight_files.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},      {"BOOL", 1},
      {"U16", 2}, {"U32", 4}, {"U64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

SafetensorsFile::SafetensorsFile(const fs::path& path) : path_(path) {
  const std::string file = path.string();
  auto bad = [&](const std::string& msg, const std::string& field = "") {
    return UserError("corrupt safetensors file: " + msg, {file, 0, 0, field},
                     "a file written by safetensors (8-byte header length, JSON header, data)");
  };
  int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) throw UserError("cannot open weights file", {file, 0, 0, ""}, "a readable file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw UserError("cannot stat weights file", {file, 0, 0, ""}, "a readable file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(std::string("weights file ") +
                        (S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file"),
                    {file, 0, 0, ""}, "a safetensors file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw bad("file is " + std::to_string(size_) + " bytes, shorter than its 8-byte header length");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw RuntimeError("cannot memory-map " + file);
  }
  const auto* base = static_cast<const std::byte*>(map_);
  uint64_t header_len = 0;
  std::memcpy(&header_len, base, 8);  // little-endian on every platform we build for
  if (header_len > size_ - 8) {
    throw bad("header length " + std::to_string(header_len) + " goes beyond the end of the file (" +
              std::to_string(size_) + " bytes)");
  }
  Json header;
  const std::string header_text(reinterpret_cast<const char*>(base + 8), header_len);
  if (json_nesting_exceeds(header_text))
    throw bad("header nests lists/objects more than " + std::to_string(kMaxNestingDepth) +
              " levels deep");
  try {
    header = Json::parse(header_text);
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, "", path_.string(), 0, "safetensors header");
  } catch (const Json::parse_error& e) {
    throw bad(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  const std::byte* data = base + 8 + header_len;
  const size_t data_size = size_ - 8 - header_len;
  // (begin, end, name) of every tensor: the safetensors library wants them laid end to end.
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string field = "$." + name;
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets"))
      throw bad("tensor entry lacks dtype/shape/data_offsets", field);
    TensorView t;
    t.name = name;
    t.file = file;
    if (!entry["dtype"].is_string()) throw bad("dtype is not a string", field);
    t.dtype = entry["dtype"].get<std::string>();
    const size_t esize = safetensors_dtype_size(t.dtype);
    if (esize == 0) throw bad("unknown dtype '" + t.dtype + "'", field);
    const auto& shape = entry["shape"];
    if (!shape.is_array()) throw bad("shape is not a list", field);
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("bad shape", field);
      t.shape.push_back(d.get<int64_t>());
      overflow = __builtin_mul_overflow(numel, static_cast<uint64_t>(d.get<int64_t>()), &numel) ||
                 overflow;
    }
    uint64_t nbytes = 0;
    if (overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(esize), &nbytes))
      throw bad("shape " + shape.dump() + " overflows 64 bits when its size is computed", field);
    const auto& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw bad("data_offsets is not a pair of non-negative integers", field);
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e || e > data_size)
      throw bad("data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                    "] lie outside the data section (" + std::to_string(data_size) +
                    " bytes; the file may be truncated)",
                field);
    if (e - b != nbytes)
      throw bad("data_offsets span " + std::to_string(e - b) + " bytes but shape and dtype need " +
                    std::to_string(nbytes),
                field);
    t.data = data + b;
    t.nbytes = e - b;
    spans.emplace_back(b, e, name);
    tensors_.emplace(name, std::move(t));
  }
  // The safetensors library (Metadata::validate) refuses a file whose tensors overlap, leave a
  // gap, or do not reach the end of the data section: so does this reader.
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0;
  for (const auto& [b, e, name] : spans) {
    if (b != covered)
      throw bad("data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] " +
                    (b < covered ? "overlap the previous tensor's bytes"
                                 : "leave a gap after the previous tensor's bytes") +
                    ", which end at " + std::to_string(covered),
                "$." + name);
    covered = e;
  }
  if (covered != data_size)
    throw bad("bytes " + std::to_string(covered) + " to " + std::to_string(data_size) +
              " of the data section are not covered by any tensor");
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

void SafetensorsFile::release(const TensorView& t) const {
  if (!map_ || t.nbytes == 0) return;
  // Only whole pages inside the tensor can be dropped.
  const long page = ::sysconf(_SC_PAGESIZE);
  auto begin = reinterpret_cast<uintptr_t>(t.data);
  auto end = begin + t.nbytes;
  uintptr_t b = (begin + page - 1) / page * page;
  uintptr_t e = end / page * page;
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

WeightArchive::WeightArchive() = default;
WeightArchive::~WeightArchive() = default;

std::unique_ptr<WeightArchive> WeightArchive::open(const fs::path& dir,
                                                   const WeightSources& sources) {
  auto archive = std::unique_ptr<WeightArchive>(new WeightArchive());
  archive->edits_ = std::make_unique<std::map<std::string, std::vector<TensorEdit>>>();
  archive->base_ =
      sources.gguf.empty() ? WeightFiles::open_model(dir) : WeightFiles::open_gguf(sources.gguf);
  if (sources.gguf.empty())
    archive->quant_ = QuantizedWeights::open(dir, *archive->base_, sources.dtype);
  if (sources.peft.empty() && sources.delta.empty()) return archive;
  const ArchConfig cfg = load_arch_config(dir);
  archive->architecture_ = cfg.architecture;
  archive->tied_embeddings_ = cfg.tie_word_embeddings;
  if (!sources.peft.empty()) archive->switch_adapter(sources.peft);
  if (!sources.delta.empty()) {
    // HFLM._create_model loads the delta with from_pretrained, so it is a model folder of the
    // same architecture.
    const ArchConfig delta_cfg = load_arch_config(sources.delta);
    if (delta_cfg.architecture != cfg.architecture)
      throw UserError(
          "the delta model is a " + delta_cfg.architecture + " and the model a " + cfg.architecture,
          {(sources.delta / "config.json").string(), 0, 0, "$.architectures"},
          "delta weights of the same architecture as pretrained");
    archive->delta_ = WeightFiles::open_model(sources.delta);
    // Both models are loaded in dtype= and the delta added in place: in float16 / bfloat16 each
    // operand and each sum is rounded to it. With dtype=auto each model has its config's dtype;
    // when they agree that is the rounding, otherwise (a mixed pair) the sum is taken in float32.
    auto st_name = [](const std::string& torch_name) -> std::string {
      if (torch_name == "float16" || torch_name == "half") return "F16";
      if (torch_name == "bfloat16") return "BF16";
      return "";
    };
    if (sources.dtype.empty() || sources.dtype == "auto") {
      if (st_name(cfg.torch_dtype) == st_name(delta_cfg.torch_dtype))
        archive->delta_round_ = st_name(cfg.torch_dtype);
    } else {
      archive->delta_round_ = st_name(sources.dtype);
    }
    if (cfg.tie_word_embeddings) {
      // The input embedding names of the checkpoints transformers writes for the architectures
      // with tied heads.
      for (const char* e :
           {"model.embed_tokens.weight", "embed_tokens.weight", "transformer.wte.weight",
            "wte.weight", "model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight",
            "gpt_neox.embed_in.weight", "embed_in.weight"})
        if (archive->base_->find(e)) {
          archive->embedding_ = e;
          break;
        }
    }
  }
  return archive;
}

void WeightArchive::check_adapter(const fs::path& peft) const {
  std::map<std::string, std::vector<TensorEdit>> edits;
  LoraAdapter::open(peft, {base_.get(), architecture_, tied_embeddings_}, edits);
}

void WeightArchive::switch_adapter(const fs::path& peft) {
  // Opened before the present one is let go, so that a bad adapter leaves the archive as it was.
  auto edits = std::make_unique<std::map<std::string, std::vector<TensorEdit>>>();
  auto adapter = LoraAdapter::open(peft, {base_.get(), architecture_, tied_embeddings_}, *edits);
  std::lock_guard<std::mutex> lock(made_mutex_);
  made_.clear();
  edits_ = std::move(edits);
  adapter_ = std::move(adapter);
}

std::vector<TensorEdit> WeightArchive::delta_edits(const TensorView& base) const {
  // HFLM._create_model: `for name, param in self._model.state_dict().items(): param.data +=
  // _model_delta.state_dict()[name]`.
  const std::string folder = delta_->source().parent_path().string();
  auto missing = [&](const std::string& name) {
    return UserError("the delta model lacks tensor '" + name + "' of the model",
                     {delta_->source().string(), 0, 0, name},
                     "delta weights for every tensor of pretrained (" + folder + ")");
  };
  // from_pretrained reads both models' tensors into the same module names, so a checkpoint of
  // the bare base model (names without its prefix, e.g. "layers.0..." for "model.layers.0...")
  // matches the other way of writing them.
  const TensorView* d = delta_->find(base.name);
  if (!d && base.name.find('.') != std::string::npos)
    d = delta_->find(base.name.substr(base.name.find('.') + 1));
  if (!d)
    for (const auto& n : delta_->names())
      if (n.size() > base.name.size() && n.ends_with("." + base.name) &&
          n.find('.') == n.size() - base.name.size() - 1) {
        d = delta_->find(n);
        break;
      }
  if (!d) throw missing(base.name);
  auto check = [&](const TensorView& t) {
    if (t.shape != base.shape)
      throw UserError("delta tensor '" + t.name + "' has another shape than the model's",
                      {t.file, 0, 0, t.name}, "delta weights of the same shapes as pretrained");
    if (!editable_dtype(t.dtype) || !editable_dtype(base.dtype))
      throw UserError("tensor '" + t.name + "' has dtype " + t.dtype + " / " + base.dtype,
                      {t.file, 0, 0, t.name}, "F32, F16 or BF16 weights");
  };
  check(*d);
  TensorEdit e;
  e.kind = TensorEdit::Kind::kAdd;
  e.a = d;
  e.round_to = delta_round_;
  std::vector<TensorEdit> out = {e};
  if (!embedding_.empty() && base.name == embedding_) {
    // A tied lm_head.weight is another entry of the model's state_dict over the same tensor, so
    // the loop above adds to the embedding twice: the delta's embedding, then the delta's
    // lm_head.weight (its own embedding again when the delta is tied too).
    const TensorView* head = delta_->find("lm_head.weight");
    if (!head) head = delta_->find("embed_out.weight");
    if (!head) head = d;
    check(*head);
    e.a = head;
    out.push_back(e);
  }
  return out;
}

const TensorView* WeightArchive::find(const std::string& name) const {
  const bool quantised = quant_ && quant_->serves(name);
  const TensorView* base = quantised ? nullptr : base_->find(name);
  if (!quantised && (!base || (quant_ && quant_->hides(name)))) return nullptr;
  auto it = edits_->find(name);
  if (!quantised && !delta_ && it == edits_->end()) return base;
  std::lock_guard<std::mutex> lock(made_mutex_);
  if (auto m = made_.find(name); m != made_.end()) return &m->second;
  TensorView dequantised;
  if (quantised) {
    dequantised = quant_->dequantised(name);
    base = &dequantised;
  }
  std::vector<TensorEdit> edits = it == edits_->end() ? std::vector<TensorEdit>{} : it->second;
  if (delta_)
    for (auto& e : delta_edits(*base)) edits.push_back(e);
  TensorView v;
  if (edits.empty()) {
    v = std::move(dequantised);
  } else if (edits.size() == 1 && edits[0].kind == TensorEdit::Kind::kReplace) {
    v = *edits[0].a;  // served from the adapter's file as it is
  } else {
    auto values = std::make_shared<std::vector<float>>(apply_edits(*base, edits));
    v.dtype = "F32";
    v.shape = base->shape;
    v.data = reinterpret_cast<const std::byte*>(values->data());
    v.nbytes = values->size() * sizeof(float);
    v.file = base->file;
    v.owner = std::move(values);
  }
  v.name = name;
  return &made_.insert_or_assign(name, std::move(v)).first->second;
}

std::vector<std::string> WeightArchive::names() const {
  return quant_ ? quant_->names(base_->names()) : base_->names();
}

void WeightArchive::release(const TensorView& t) const {
  {
    std::lock_guard<std::mutex> lock(made_mutex_);
    if (auto m = made_.find(t.name); m != made_.end() && &m->second == &t) {
      made_.erase(m);
      return;
    }
  }
  base_->release(t);
}

std::vector<int64_t> load_generation_eos(const fs::path& dir) {
  const fs::path p = dir / "generation_config.json";
  std::vector<int64_t> out;
  if (!fs::exists(p)) return out;
  Json j = load_json_file(p, "generation_config.json");
  if (!j.is_object() || !j.contains("eos_token_id")) return out;
  const Json& e = j["eos_token_id"];
  if (e.is_number_integer()) out.push_back(e.get<int64_t>());
  if (e.is_array())
    for (const auto& v : e)
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  return out;
}

}  // namespace lmeval::hf
