// Memory-mapped safetensors archives and config.json parsing for the hf backend (no torch here).
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
#include "models/hf/lora.hpp"
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

namespace {

Json read_json_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UserError(what + " is a folder", {path.string(), 0, 0, ""}, "a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open " + what, {path.string(), 0, 0, ""}, "a readable file");
  std::stringstream ss;
  ss << in.rdbuf();
  require_json_nesting(ss.str(), path.string());
  try {
    return Json::parse(ss.str());
  } catch (const Json::parse_error& e) {
    throw UserError(std::string("invalid JSON in ") + what + ": " + e.what(),
                    {path.string(), 0, 0, ""}, "a JSON object");
  }
}

}  // namespace

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
  archive->base_ = WeightFiles::open_model(dir);
  if (sources.peft.empty() && sources.delta.empty()) return archive;
  const ArchConfig cfg = load_arch_config(dir);
  if (!sources.peft.empty())
    archive->adapter_ = LoraAdapter::open(
        sources.peft, {archive->base_.get(), cfg.architecture, cfg.tie_word_embeddings},
        *archive->edits_);
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
  const TensorView* base = base_->find(name);
  if (!base) return nullptr;
  auto it = edits_->find(name);
  if (!delta_ && it == edits_->end()) return base;
  std::lock_guard<std::mutex> lock(made_mutex_);
  if (auto m = made_.find(name); m != made_.end()) return &m->second;
  std::vector<TensorEdit> edits = it == edits_->end() ? std::vector<TensorEdit>{} : it->second;
  if (delta_)
    for (auto& e : delta_edits(*base)) edits.push_back(e);
  TensorView v;
  if (edits.size() == 1 && edits[0].kind == TensorEdit::Kind::kReplace) {
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

std::vector<std::string> WeightArchive::names() const { return base_->names(); }

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

// ---------------------------------------------------------------------------------------------
// config.json

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> archs = {
      "LlamaForCausalLM",   "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
      "GPTNeoXForCausalLM", "GPT2LMHeadModel",    "PhiForCausalLM",   "Phi3ForCausalLM",
      "GemmaForCausalLM",   "Gemma2ForCausalLM",  "OPTForCausalLM"};
  return archs;
}

namespace {

class ConfigReader {
 public:
  ConfigReader(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  bool has(const std::string& k) const { return j_.contains(k) && !j_[k].is_null(); }

  int64_t int_(const std::string& k) const {
    if (!has(k))
      throw UserError("config.json lacks '" + k + "'", {path_, 0, 0, "$." + k}, "an integer");
    return as_int(j_[k], k);
  }
  int64_t int_or(const std::string& k, int64_t def) const {
    return has(k) ? as_int(j_[k], k) : def;
  }
  // A size (layers, heads, widths): refused outside [1, 2^31) before anything is allocated from it.
  int64_t size_(const std::string& k) const { return in_range(k, int_(k), 1); }
  int64_t size_or(const std::string& k, int64_t def) const {
    return has(k) ? in_range(k, as_int(j_[k], k), 1) : def;
  }
  int64_t in_range(const std::string& k, int64_t v, int64_t min) const {
    constexpr int64_t kMax = (int64_t{1} << 31) - 1;
    if (v < min || v > kMax)
      throw UserError("'" + k + "' is " + std::to_string(v), {path_, 0, 0, "$." + k},
                      "an integer from " + std::to_string(min) + " to " + std::to_string(kMax));
    return v;
  }
  // max_position_embeddings / n_positions: positive when given.
  std::optional<int64_t> opt_size(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    return in_range(k, as_int(j_[k], k), 1);
  }
  double num_or(const std::string& k, double def) const { return has(k) ? as_num(j_[k], k) : def; }
  bool bool_or(const std::string& k, bool def) const {
    if (!has(k)) return def;
    if (!j_[k].is_boolean())
      throw UserError("'" + k + "' is not a boolean", {path_, 0, 0, "$." + k}, "true or false");
    return j_[k].get<bool>();
  }
  std::string str_or(const std::string& k, const std::string& def) const {
    if (!has(k)) return def;
    if (!j_[k].is_string())
      throw UserError("'" + k + "' is not a string", {path_, 0, 0, "$." + k}, "a string");
    return j_[k].get<std::string>();
  }
  std::optional<int64_t> opt_int(const std::string& k) const {
    if (!has(k)) return std::nullopt;
    // eos_token_id may be a list; the first one is the model's EOS for our purposes.
    if (j_[k].is_array()) return j_[k].empty() ? std::nullopt : std::optional(as_int(j_[k][0], k));
    return as_int(j_[k], k);
  }
  int64_t as_int(const Json& v, const std::string& k) const {
    if (!v.is_number_integer())
      throw UserError("'" + k + "' is not an integer", {path_, 0, 0, "$." + k}, "an integer");
    return v.get<int64_t>();
  }
  double as_num(const Json& v, const std::string& k) const {
    if (!v.is_number())
      throw UserError("'" + k + "' is not a number", {path_, 0, 0, "$." + k}, "a number");
    return v.get<double>();
  }
  const Json& json() const { return j_; }
  const std::string& path() const { return path_; }

 private:
  const Json& j_;
  std::string path_;
};

Activation parse_activation(const std::string& name, const std::string& path,
                            const std::string& field) {
  if (name == "silu" || name == "swish") return Activation::kSilu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    return Activation::kGeluTanh;
  if (name == "gelu") return Activation::kGeluExact;
  if (name == "relu") return Activation::kRelu;
  throw UserError("unsupported activation '" + name + "'", {path, 0, 0, field},
                  "one of silu, gelu, gelu_new, gelu_pytorch_tanh, relu");
}

// The names of torch's dtypes (torch 2.15: [n for n in dir(torch) if isinstance(getattr(torch, n),
// torch.dtype)]), the names a config's dtype may take.
bool is_torch_dtype_name(const std::string& name) {
  static const std::set<std::string> names = {"bcomplex32",
                                              "bfloat16",
                                              "bit",
                                              "bits16",
                                              "bits1x8",
                                              "bits2x4",
                                              "bits4x2",
                                              "bits8",
                                              "bool",
                                              "cdouble",
                                              "cfloat",
                                              "chalf",
                                              "complex128",
                                              "complex32",
                                              "complex64",
                                              "double",
                                              "float",
                                              "float16",
                                              "float32",
                                              "float4_e2m1fn_x2",
                                              "float64",
                                              "float8_e4m3fn",
                                              "float8_e4m3fnuz",
                                              "float8_e5m2",
                                              "float8_e5m2fnuz",
                                              "float8_e8m0fnu",
                                              "half",
                                              "int",
                                              "int1",
                                              "int16",
                                              "int2",
                                              "int3",
                                              "int32",
                                              "int4",
                                              "int5",
                                              "int6",
                                              "int64",
                                              "int7",
                                              "int8",
                                              "long",
                                              "qint32",
                                              "qint8",
                                              "quint2x4",
                                              "quint4x2",
                                              "quint8",
                                              "short",
                                              "uint1",
                                              "uint16",
                                              "uint2",
                                              "uint3",
                                              "uint32",
                                              "uint4",
                                              "uint5",
                                              "uint6",
                                              "uint64",
                                              "uint7",
                                              "uint8"};
  return names.count(name) > 0;
}

// Rotary settings from transformers 5's rope_parameters or 4.x's rope_theta/rope_scaling.
void parse_rope(const ConfigReader& c, ArchConfig& a, double default_partial,
                double default_theta) {
  const Json& j = c.json();
  // transformers' config classes validate rope_parameters (4.x's rope_scaling is converted into
  // it) as a mapping and raise StrictDataclassFieldValidationError for a string, a number or a
  // list; ignoring it would run the model with default rotary settings.
  for (const char* key : {"rope_parameters", "rope_scaling"})
    if (c.has(key) && !j[key].is_object())
      throw UserError(std::string(key) + " is " + j[key].dump() + ", not a mapping",
                      {c.path(), 0, 0, std::string("$.") + key},
                      "a mapping such as {\"rope_type\": \"linear\", \"factor\": 2.0}, or null");
  Json params = Json::object();
  if (c.has("rope_parameters") && j["rope_parameters"].is_object()) params = j["rope_parameters"];
  Json scaling = Json::object();
  if (c.has("rope_scaling") && j["rope_scaling"].is_object()) scaling = j["rope_scaling"];
  for (const auto& [k, v] : scaling.items())
    if (!params.contains(k)) params[k] = v;
  auto pnum = [&](const char* k, double def) {
    if (params.contains(k) && params[k].is_number()) return params[k].get<double>();
    return def;
  };
  a.rope_theta =
      pnum("rope_theta", c.num_or("rope_theta", c.num_or("rotary_emb_base", default_theta)));
  double partial = pnum("partial_rotary_factor",
                        c.num_or("partial_rotary_factor", c.num_or("rotary_pct", default_partial)));
  a.rotary_dim = static_cast<int64_t>(static_cast<double>(a.head_dim) * partial);
  std::string type = "default";
  if (params.contains("rope_type") && params["rope_type"].is_string())
    type = params["rope_type"].get<std::string>();
  else if (params.contains("type") && params["type"].is_string())
    type = params["type"].get<std::string>();
  const bool phi3 = a.architecture == "Phi3ForCausalLM";
  // Phi3Config reads its old names "su" and "yarn" as longrope.
  if (phi3 && (type == "su" || type == "yarn")) type = "longrope";
  const std::string field = c.has("rope_parameters") ? "$.rope_parameters" : "$.rope_scaling";
  auto need_max_positions = [&]() {
    if (!a.max_position_embeddings)
      throw UserError("rope type '" + type + "' needs max_position_embeddings",
                      {c.path(), 0, 0, "$.max_position_embeddings"}, "the model's maximum length");
    return *a.max_position_embeddings;
  };
  // transformers' standardize_rope_params: the pretraining length of llama3/yarn/longrope comes
  // from the rope parameters, else max_position_embeddings; Phi3's own top-level field wins.
  auto original_max = [&]() {
    if (phi3) return c.int_or("original_max_position_embeddings", 4096);
    if (params.contains("original_max_position_embeddings") &&
        params["original_max_position_embeddings"].is_number())
      return params["original_max_position_embeddings"].get<int64_t>();
    return need_max_positions();
  };
  auto factors = [&](const char* key) {
    std::vector<double> out;
    if (params.contains(key) && params[key].is_array())
      for (const auto& v : params[key])
        if (v.is_number()) out.push_back(v.get<double>());
    if (static_cast<int64_t>(out.size()) != a.rotary_dim / 2 ||
        (params.contains(key) && out.size() != params[key].size()))
      throw UserError(std::string(key) + " must hold rotary_dim / 2 = " +
                          std::to_string(a.rotary_dim / 2) + " numbers",
                      {c.path(), 0, 0, field + "." + key},
                      "a list of " + std::to_string(a.rotary_dim / 2) + " numbers");
    return out;
  };
  if (type == "default") {
    a.rope = RopeType::kDefault;
  } else if (type == "linear") {
    a.rope = RopeType::kLinear;
    a.rope_factor = pnum("factor", 1.0);
  } else if (type == "llama3") {
    a.rope = RopeType::kLlama3;
    a.rope_factor = pnum("factor", 8.0);
    a.rope_low_freq_factor = pnum("low_freq_factor", 1.0);
    a.rope_high_freq_factor = pnum("high_freq_factor", 4.0);
    a.rope_original_max_positions = original_max();
  } else if (type == "yarn") {
    // transformers' _compute_yarn_parameters.
    a.rope = RopeType::kYarn;
    a.rope_original_max_positions = original_max();
    a.rope_factor = pnum("factor", static_cast<double>(need_max_positions()) /
                                       static_cast<double>(a.rope_original_max_positions));
    auto mscale = [](double scale, double m) {
      return scale <= 1 ? 1.0 : 0.1 * m * std::log(scale) + 1.0;
    };
    const double ms = pnum("mscale", 0.0), ms_all = pnum("mscale_all_dim", 0.0);
    if (params.contains("attention_factor") && params["attention_factor"].is_number())
      a.rope_attention_factor = params["attention_factor"].get<double>();
    else if (ms != 0.0 && ms_all != 0.0)
      a.rope_attention_factor = mscale(a.rope_factor, ms) / mscale(a.rope_factor, ms_all);
    else
      a.rope_attention_factor = mscale(a.rope_factor, 1.0);
    // `get("beta_fast") or 32`: a zero means the default too.
    a.rope_beta_fast = pnum("beta_fast", 0.0) != 0.0 ? pnum("beta_fast", 0.0) : 32.0;
    a.rope_beta_slow = pnum("beta_slow", 0.0) != 0.0 ? pnum("beta_slow", 0.0) : 1.0;
    a.rope_truncate = !(params.contains("truncate") && params["truncate"].is_boolean()) ||
                      params["truncate"].get<bool>();
  } else if (type == "dynamic") {
    // transformers' _compute_dynamic_ntk_parameters; the length is applied per sequence (rope.cpp).
    a.rope = RopeType::kDynamic;
    a.rope_factor = pnum("factor", 1.0);
    need_max_positions();
  } else if (type == "longrope") {
    // transformers' _compute_longrope_parameters.
    a.rope = RopeType::kLongRope;
    a.rope_original_max_positions = original_max();
    a.rope_short_factor = factors("short_factor");
    a.rope_long_factor = factors("long_factor");
    const double factor = pnum("factor", static_cast<double>(need_max_positions()) /
                                             static_cast<double>(a.rope_original_max_positions));
    if (params.contains("attention_factor") && params["attention_factor"].is_number())
      a.rope_attention_factor = params["attention_factor"].get<double>();
    else
      a.rope_attention_factor =
          factor <= 1.0
              ? 1.0
              : std::sqrt(1 + std::log(factor) /
                                  std::log(static_cast<double>(a.rope_original_max_positions)));
  } else {
    throw UserError("unsupported rope type '" + type + "'", {c.path(), 0, 0, field},
                    "default, linear, llama3, yarn, dynamic or longrope rotary embeddings");
  }
}

}  // namespace

ArchConfig parse_arch_config(const Json& j, const std::string& path) {
  if (!j.is_object())
    throw UserError("config.json is not an object", {path, 0, 0, ""}, "a JSON object");
  ConfigReader c(j, path);
  ArchConfig a;
  std::string arch;
  if (c.has("architectures") && j["architectures"].is_array() && !j["architectures"].empty() &&
      j["architectures"][0].is_string())
    arch = j["architectures"][0].get<std::string>();
  const auto& supported = supported_architectures();
  if (std::find(supported.begin(), supported.end(), arch) == supported.end()) {
    std::string list;
    for (const auto& s : supported) list += (list.empty() ? "" : ", ") + s;
    throw UserError("unsupported architecture '" + arch + "'", {path, 0, 0, "$.architectures"},
                    "one of " + list);
  }
  a.architecture = arch;
  a.model_type = c.str_or("model_type", "");
  // transformers' Auto classes build the model of model_type, not of architectures, and raise for
  // a model_type they do not know: a model_type other than the architecture's would be another
  // model (or none) there, so it is refused rather than run as `arch`. Absent, arch decides.
  static const std::map<std::string, std::string> type_of = {
      {"LlamaForCausalLM", "llama"},      {"MistralForCausalLM", "mistral"},
      {"Qwen2ForCausalLM", "qwen2"},      {"Qwen3ForCausalLM", "qwen3"},
      {"GPTNeoXForCausalLM", "gpt_neox"}, {"GPT2LMHeadModel", "gpt2"},
      {"PhiForCausalLM", "phi"},          {"Phi3ForCausalLM", "phi3"},
      {"GemmaForCausalLM", "gemma"},      {"Gemma2ForCausalLM", "gemma2"},
      {"OPTForCausalLM", "opt"}};
  if (auto it = type_of.find(arch);
      it != type_of.end() && !a.model_type.empty() && a.model_type != it->second)
    throw UserError("model_type '" + a.model_type + "' is not the model_type of " + arch,
                    {path, 0, 0, "$.model_type"}, "'" + it->second + "' (or no model_type)");
  a.vocab_size = c.size_("vocab_size");
  // PretrainedConfig keeps `dtype` over the older `torch_dtype` and turns the name into
  // getattr(torch, name) when the config is read, so a name torch lacks fails whatever dtype
  // the model is then loaded in (AttributeError: module 'torch' has no attribute ...).
  const std::string dtype_key = c.has("dtype") ? "dtype" : "torch_dtype";
  a.torch_dtype = c.str_or(dtype_key, "");
  if (c.has(dtype_key) && !is_torch_dtype_name(a.torch_dtype))
    throw UserError("'" + a.torch_dtype + "' is not a torch dtype", {path, 0, 0, "$." + dtype_key},
                    "a torch dtype name such as float32, bfloat16 or float16");
  a.bos_token_id = c.opt_int("bos_token_id");
  a.eos_token_id = c.opt_int("eos_token_id");
  a.pad_token_id = c.opt_int("pad_token_id");

  auto finish_heads = [&]() {
    if (a.num_heads <= 0 || a.hidden_size <= 0 || a.num_layers <= 0)
      throw UserError("config.json has non-positive sizes", {path, 0, 0, ""}, "positive sizes");
    // transformers: `getattr(config, "head_dim", None) or hidden_size // num_attention_heads`.
    if (a.head_dim <= 0) a.head_dim = a.hidden_size / a.num_heads;
    if (a.head_dim <= 0)
      throw UserError("hidden_size " + std::to_string(a.hidden_size) +
                          " is smaller than num_attention_heads " + std::to_string(a.num_heads),
                      {path, 0, 0, "$.num_attention_heads"},
                      "at most hidden_size heads (or a head_dim)");
    if (a.num_kv_heads <= 0) a.num_kv_heads = a.num_heads;
    if (a.num_heads % a.num_kv_heads != 0)
      throw UserError("num_attention_heads is not a multiple of num_key_value_heads",
                      {path, 0, 0, "$.num_key_value_heads"}, "a divisor of num_attention_heads");
    a.attn_scale = 1.0 / std::sqrt(static_cast<double>(a.head_dim));
  };
  auto sliding_all = [&](int64_t window) { a.layer_sliding_window.assign(a.num_layers, window); };
  auto layer_types = [&](int64_t window) {
    // transformers 5 writes layer_types; "sliding_attention" layers use the window.
    if (!c.has("layer_types") || !j["layer_types"].is_array()) return false;
    a.layer_sliding_window.assign(a.num_layers, 0);
    for (int64_t i = 0; i < a.num_layers && i < static_cast<int64_t>(j["layer_types"].size()); ++i)
      if (j["layer_types"][i] == "sliding_attention") a.layer_sliding_window[i] = window;
    return true;
  };

  const bool llama_like = arch == "LlamaForCausalLM" || arch == "MistralForCausalLM" ||
                          arch == "Qwen2ForCausalLM" || arch == "Qwen3ForCausalLM" ||
                          arch == "Phi3ForCausalLM" || arch == "GemmaForCausalLM" ||
                          arch == "Gemma2ForCausalLM";
  if (llama_like) {
    a.hidden_size = c.size_("hidden_size");
    a.num_layers = c.size_("num_hidden_layers");
    a.num_heads = c.size_("num_attention_heads");
    a.num_kv_heads = c.size_or("num_key_value_heads", a.num_heads);
    a.head_dim = c.has("head_dim") ? c.in_range("head_dim", c.int_("head_dim"), 0) : 0;
    a.intermediate_size = c.size_("intermediate_size");
    a.max_position_embeddings = c.opt_size("max_position_embeddings");
    a.norm = NormKind::kRms;
    a.norm_eps = c.num_or("rms_norm_eps", 1e-6);
    a.gated_mlp = true;
    finish_heads();
    const bool gemma = arch == "GemmaForCausalLM" || arch == "Gemma2ForCausalLM";
    if (gemma) {
      a.activation = parse_activation(c.str_or("hidden_activation", "gelu_pytorch_tanh"), path,
                                      "$.hidden_activation");
      a.norm_plus_one = true;
      a.embed_scale = true;
      a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
    } else {
      a.activation = parse_activation(c.str_or("hidden_act", "silu"), path, "$.hidden_act");
      a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
    }
    parse_rope(c, a, 1.0, 10000.0);
    a.qk_norm = arch == "Qwen3ForCausalLM";
    int64_t window = c.int_or("sliding_window", 0);
    a.layer_sliding_window.assign(a.num_layers, 0);
    if (arch == "MistralForCausalLM" || arch == "Phi3ForCausalLM") {
      if (window > 0) sliding_all(window);
    } else if (arch == "Qwen2ForCausalLM" || arch == "Qwen3ForCausalLM") {
      if (!layer_types(window) && c.bool_or("use_sliding_window", false) && window > 0) {
        const int64_t from = c.int_or("max_window_layers", a.num_layers);
        for (int64_t i = from; i < a.num_layers; ++i) a.layer_sliding_window[i] = window;
      }
      if (!c.bool_or("use_sliding_window", false)) a.layer_sliding_window.assign(a.num_layers, 0);
    } else if (arch == "Gemma2ForCausalLM") {
      if (!layer_types(window))
        for (int64_t i = 0; i < a.num_layers; i += 2) a.layer_sliding_window[i] = window;
      a.sandwich_norms = true;
      a.attn_scale =
          1.0 / std::sqrt(c.num_or("query_pre_attn_scalar", static_cast<double>(a.head_dim)));
      a.attn_softcap = c.num_or("attn_logit_softcapping", 0.0);
      a.final_softcap = c.num_or("final_logit_softcapping", 0.0);
    }
    if (arch == "LlamaForCausalLM" &&
        (c.bool_or("attention_bias", false) || c.bool_or("mlp_bias", false))) {
      // Handled by the weight loader: biases are optional tensors.
    }
  } else if (arch == "GPTNeoXForCausalLM") {
    a.hidden_size = c.size_("hidden_size");
    a.num_layers = c.size_("num_hidden_layers");
    a.num_heads = c.size_("num_attention_heads");
    a.intermediate_size = c.size_("intermediate_size");
    a.max_position_embeddings = c.opt_size("max_position_embeddings");
    a.norm = NormKind::kLayerNorm;
    a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
    a.activation = parse_activation(c.str_or("hidden_act", "gelu"), path, "$.hidden_act");
    a.gated_mlp = false;
    a.parallel_residual = c.bool_or("use_parallel_residual", true);
    a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
    finish_heads();
    parse_rope(c, a, 0.25, 10000.0);
    a.layer_sliding_window.assign(a.num_layers, 0);
  } else if (arch == "GPT2LMHeadModel") {
    a.hidden_size = c.size_("n_embd");
    a.num_layers = c.size_("n_layer");
    a.num_heads = c.size_("n_head");
    a.intermediate_size = c.size_or("n_inner", 4 * a.hidden_size);
    a.max_position_embeddings = c.opt_size("n_positions");
    a.learned_positions = c.size_or("n_positions", 1024);
    a.norm = NormKind::kLayerNorm;
    a.norm_eps = c.num_or("layer_norm_epsilon", 1e-5);
    a.activation = parse_activation(c.str_or("activation_function", "gelu_new"), path,
                                    "$.activation_function");
    a.gated_mlp = false;
    a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
    finish_heads();
    if (!c.bool_or("scale_attn_weights", true)) a.attn_scale = 1.0;
    if (c.bool_or("scale_attn_by_inverse_layer_idx", false))
      throw UserError("scale_attn_by_inverse_layer_idx is not supported",
                      {path, 0, 0, "$.scale_attn_by_inverse_layer_idx"}, "false");
    a.layer_sliding_window.assign(a.num_layers, 0);
  } else if (arch == "PhiForCausalLM") {
    a.hidden_size = c.size_("hidden_size");
    a.num_layers = c.size_("num_hidden_layers");
    a.num_heads = c.size_("num_attention_heads");
    a.num_kv_heads = c.size_or("num_key_value_heads", a.num_heads);
    a.intermediate_size = c.size_("intermediate_size");
    a.max_position_embeddings = c.opt_size("max_position_embeddings");
    a.norm = NormKind::kLayerNorm;
    a.norm_eps = c.num_or("layer_norm_eps", 1e-5);
    a.activation = parse_activation(c.str_or("hidden_act", "gelu_new"), path, "$.hidden_act");
    a.gated_mlp = false;
    a.parallel_residual = true;
    a.shared_layer_norm = true;
    a.tie_word_embeddings = c.bool_or("tie_word_embeddings", false);
    a.qk_norm = c.bool_or("qk_layernorm", false);  // LayerNorms (with bias) over head_dim
    finish_heads();
    parse_rope(c, a, 0.5, 10000.0);
    a.layer_sliding_window.assign(a.num_layers, 0);
  } else if (arch == "OPTForCausalLM") {
    a.hidden_size = c.size_("hidden_size");
    a.num_layers = c.size_("num_hidden_layers");
    a.num_heads = c.size_("num_attention_heads");
    a.intermediate_size = c.size_("ffn_dim");
    a.max_position_embeddings = c.opt_size("max_position_embeddings");
    a.learned_positions = c.size_or("max_position_embeddings", 2048) + 2;
    a.position_offset = 2;
    a.norm = NormKind::kLayerNorm;
    a.norm_eps = 1e-5;
    a.activation =
        parse_activation(c.str_or("activation_function", "relu"), path, "$.activation_function");
    a.gated_mlp = false;
    a.tie_word_embeddings = c.bool_or("tie_word_embeddings", true);
    // opt-350m: norms after the residual adds and no final norm (OPTDecoder keeps one only with
    // do_layer_norm_before and not _remove_final_layer_norm); embeddings of word_embed_proj_dim
    // projected in to hidden_size and out again before the (tied) LM head.
    a.post_norm = !c.bool_or("do_layer_norm_before", true);
    a.final_norm = !a.post_norm && !c.bool_or("_remove_final_layer_norm", false);
    const int64_t proj = c.size_or("word_embed_proj_dim", a.hidden_size);
    if (proj != a.hidden_size) a.embed_proj_dim = proj;
    if (!c.bool_or("layer_norm_elementwise_affine", true))
      throw UserError("OPT without layer norm weights is not supported",
                      {path, 0, 0, "$.layer_norm_elementwise_affine"}, "true");
    finish_heads();
    a.layer_sliding_window.assign(a.num_layers, 0);
  }
  if (a.rope != RopeType::kNone &&
      (a.rotary_dim <= 0 || a.rotary_dim % 2 != 0 || a.rotary_dim > a.head_dim))
    throw UserError("rotary dimension " + std::to_string(a.rotary_dim) + " is invalid",
                    {path, 0, 0, "$.partial_rotary_factor"}, "an even number of dims ≤ head_dim");
  return a;
}

ArchConfig load_arch_config(const fs::path& dir) {
  const fs::path p = dir / "config.json";
  if (!fs::exists(dir))
    throw UserError("model folder does not exist", {dir.string(), 0, 0, "pretrained"},
                    "a local Hugging Face model folder (config.json + model.safetensors)");
  if (!fs::exists(p))
    throw UserError("model folder has no config.json", {p.string(), 0, 0, ""},
                    "a Hugging Face model folder with config.json");
  return parse_arch_config(read_json_file(p, "config.json"), p.string());
}

std::vector<int64_t> load_generation_eos(const fs::path& dir) {
  const fs::path p = dir / "generation_config.json";
  std::vector<int64_t> out;
  if (!fs::exists(p)) return out;
  Json j = read_json_file(p, "generation_config.json");
  if (!j.is_object() || !j.contains("eos_token_id")) return out;
  const Json& e = j["eos_token_id"];
  if (e.is_number_integer()) out.push_back(e.get<int64_t>());
  if (e.is_array())
    for (const auto& v : e)
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  return out;
}

}  // namespace lmeval::hf
