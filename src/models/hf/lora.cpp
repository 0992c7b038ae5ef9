// LoRA as peft 0.21 loads and computes it (PeftModel.from_pretrained over LoraModel):
// - a module is adapted when adapter_config.json targets it (tuners_utils.
//   check_target_module_exists) and the adapter's weights hold its lora_A and lora_B;
// - its output gains scaling · lora_B(lora_A(x)), scaling = lora_alpha / r (lora_alpha / √r with
//   use_rslora), r and lora_alpha per module from rank_pattern / alpha_pattern (get_pattern_key);
//   merged here into the weight: W + scaling · B·A, transposed for Conv1D layers and embeddings;
// - with use_dora (DoRA, lora/variants.py DoraLinearVariant and DoraEmbeddingVariant), each
//   output of W + scaling · B·A is then rescaled to lora_magnitude_vector / its L2 norm;
// - IA3 (peft_type IA3, ia3/layer.py): a vector ia3_l per targeted layer scales its input when
//   feedforward_modules names the layer, else its output (bias included), merged into the weight;
// - LoHa and LoKr (peft_type LOHA / LOKR, tuners/loha, tuners/lokr) on linear layers: the weight
//   gains (alpha / r) · (w1_a·w1_b) ⊙ (w2_a·w2_b), or (alpha / r) · kron(w1, w2) with each factor
//   whole or a product of two;
// - every other tensor the adapter holds (modules_to_save copies, trained biases, an embedding's
//   base_layer) is loaded in place of the base's.
// Other peft types and LoRA variants are peft's to apply (adapter_config_reason): lm-eval runs
// them through transformers.
#include "models/hf/lora.hpp"

#include <cmath>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"
#include "lmeval/core/regex.hpp"
#include "lmeval/models/hf/transformers_path.hpp"
#include "models/hf/json_file.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

namespace {

namespace lr {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + "]";
}

// adapter_config.json, as LoraConfig reads it.
struct Config {
  std::string path;
  std::string type;          // LORA, IA3, LOHA or LOKR
  bool dora = false;         // use_dora
  Json feedforward_modules;  // IA3
  int64_t r = 8;
  double alpha = 8;
  bool rslora = false;
  Json target_modules, exclude_modules, layers_to_transform, layers_pattern;
  std::vector<std::string> modules_to_save;
  Json rank_pattern = Json::object(), alpha_pattern = Json::object();

  UserError bad(const std::string& field, const std::string& what,
                const std::string& expected) const {
    return UserError(what, {path, 0, 0, "$." + field}, expected);
  }

  std::shared_ptr<const PyRegex> regex(const std::string& pattern, const std::string& field) const {
    try {
      return PyRegex::compile(pattern);
    } catch (const UserError& e) {
      throw bad(field, "'" + pattern + "' is not a regular expression: " + e.message(),
                "a Python regular expression");
    }
  }

  // tuners_utils.check_target_module_exists.
  bool targets(const std::string& key) const {
    if (exclude_modules.is_string()) {
      if (regex(exclude_modules.get<std::string>(), "exclude_modules")->fullmatch(key))
        return false;
    } else if (exclude_modules.is_array()) {
      for (const auto& e : exclude_modules)
        if (key == e.get<std::string>() || ends_with(key, "." + e.get<std::string>())) return false;
    }
    for (const auto& m : modules_to_save)
      if (regex("(^|.*\\.)" + m + "($|\\..*)", "modules_to_save")->match(key)) return false;
    if (target_modules.is_string())
      return regex(target_modules.get<std::string>(), "target_modules")->fullmatch(key).has_value();
    if (!target_modules.is_array()) return false;
    bool found = false;
    for (const auto& t : target_modules)
      found = found || key == t.get<std::string>() || ends_with(key, "." + t.get<std::string>());
    const bool by_layer = layers_to_transform.is_number_integer() ||
                          (layers_to_transform.is_array() && !layers_to_transform.empty());
    if (!found || !by_layer) return found;
    std::optional<std::string> index;
    std::vector<std::string> patterns;
    if (layers_pattern.is_string()) patterns.push_back(layers_pattern.get<std::string>());
    if (layers_pattern.is_array())
      for (const auto& p : layers_pattern) patterns.push_back(p.get<std::string>());
    if (patterns.empty() || (layers_pattern.is_string() && patterns[0].empty())) {
      // The first numbered segment (the layer), not a nested one such as an expert's.
      if (auto m = regex(R"(.*?\.[^.]*\.(?P<idx>\d+)\.)", "layers_pattern")->match(key))
        index = std::string(*m->group("idx"));
    } else {
      for (const auto& p : patterns)
        if (auto m =
                regex(R"((?:^|.*?\.))" + p + R"(\.(?P<idx>\d+)\.)", "layers_pattern")->match(key)) {
          index = std::string(*m->group("idx"));
          break;
        }
    }
    if (!index) return false;
    const int64_t layer = std::stoll(*index);
    if (layers_to_transform.is_number_integer()) return layer == layers_to_transform.get<int64_t>();
    for (const auto& l : layers_to_transform)
      if (l.is_number_integer() && l.get<int64_t>() == layer) return true;
    return false;
  }

  // IA3Model._check_target_module_feedforward: a regular expression matching the whole key, or
  // a name the key ends with (on no dot boundary, unlike target_modules).
  bool feedforward(const std::string& key) const {
    if (feedforward_modules.is_string())
      return regex(feedforward_modules.get<std::string>(), "feedforward_modules")
          ->fullmatch(key)
          .has_value();
    if (feedforward_modules.is_array())
      for (const auto& f : feedforward_modules)
        if (ends_with(key, f.get<std::string>())) return true;
    return false;
  }

  // get_pattern_key: the first pattern matching the end of the key on a dot boundary.
  const Json* pattern_value(const Json& patterns, const std::string& key,
                            const std::string& field) const {
    for (const auto& [p, v] : patterns.items())
      if (regex("(.*\\.)?(" + p + ")$", field)->match(key)) return &v;
    return nullptr;
  }

  std::pair<int64_t, double> rank_and_alpha(const std::string& key) const {
    int64_t rank = r;
    double a = alpha;
    if (const Json* v = pattern_value(rank_pattern, key, "rank_pattern")) rank = v->get<int64_t>();
    if (const Json* v = pattern_value(alpha_pattern, key, "alpha_pattern")) a = v->get<double>();
    return {rank, a};
  }
};

Config read_config(const fs::path& dir) {
  Config c;
  const fs::path p = dir / "adapter_config.json";
  c.path = p.string();
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw UserError("the adapter folder has no adapter_config.json", {dir.string(), 0, 0, ""},
                    "a PEFT adapter folder (adapter_config.json and adapter_model.safetensors)");
  const Json j = load_json_file(p, "adapter_config.json");
  if (!j.is_object()) throw c.bad("", "adapter_config.json is not an object", "a JSON object");
  auto has = [&](const char* k) { return j.contains(k) && !j[k].is_null(); };
  const std::string type = has("peft_type") && j["peft_type"].is_string()
                               ? j["peft_type"].get<std::string>()
                               : std::string("(none)");
  // HFLM loads those through transformers and peft (hf_lm.cpp asks adapter_reason first).
  if (auto why = adapter_config_reason(j)) {
    std::string field = "peft_type";
    if (type == "LORA")
      for (const auto& [k, v] : j.items())
        if (why->rfind(k + " ", 0) == 0) field = k;
    throw c.bad(field, "the adapter has " + *why + ": peft applies it, not lm-eval's loader",
                "an adapter lm-eval merges (LORA, DoRA included, or IA3), or lm-eval choosing the "
                "transformers path for it");
  }
  if (type != "LORA" && type != "IA3" && type != "LOHA" && type != "LOKR")
    throw c.bad("peft_type",
                has("peft_type") ? "peft_type is " + j["peft_type"].dump()
                                 : std::string("adapter_config.json has no peft_type"),
                "a PEFT type such as \"LORA\"");
  c.type = type;
  if (has("r")) {
    if (!j["r"].is_number_integer() || j["r"].get<int64_t>() <= 0)
      throw c.bad("r", "r is " + j["r"].dump(), "a positive integer");
    c.r = j["r"].get<int64_t>();
  }
  // LoHa and LoKr call it alpha.
  const char* alpha_key = type == "LOHA" || type == "LOKR" ? "alpha" : "lora_alpha";
  if (has(alpha_key)) {
    if (!j[alpha_key].is_number())
      throw c.bad(alpha_key, std::string(alpha_key) + " is " + j[alpha_key].dump(), "a number");
    c.alpha = j[alpha_key].get<double>();
  }
  if (has("use_rslora")) {
    if (!j["use_rslora"].is_boolean())
      throw c.bad("use_rslora", "use_rslora is " + j["use_rslora"].dump(), "true or false");
    c.rslora = j["use_rslora"].get<bool>();
  }
  if (has("bias")) {
    const Json& b = j["bias"];
    if (b != "none" && b != "all" && b != "lora_only")
      throw c.bad("bias", "bias is " + b.dump(), "\"none\", \"all\" or \"lora_only\"");
  }
  auto names = [&](const char* k, bool string_ok) {
    if (!has(k)) return Json();
    const Json& v = j[k];
    bool ok = v.is_array() || (string_ok && v.is_string());
    if (v.is_array())
      for (const auto& e : v) ok = ok && e.is_string();
    if (!ok)
      throw c.bad(
          k, std::string(k) + " is " + v.dump(),
          string_ok ? "a list of module names or a regular expression" : "a list of module names");
    return v;
  };
  c.target_modules = names("target_modules", true);
  c.exclude_modules = names("exclude_modules", true);
  c.layers_pattern = names("layers_pattern", true);
  c.feedforward_modules = names("feedforward_modules", true);
  for (const auto& m : names("modules_to_save", false)) c.modules_to_save.push_back(m);
  if (has("layers_to_transform")) {
    const Json& l = j["layers_to_transform"];
    bool ok = l.is_number_integer() || l.is_array();
    if (l.is_array())
      for (const auto& e : l) ok = ok && e.is_number_integer();
    if (!ok)
      throw c.bad("layers_to_transform", "layers_to_transform is " + l.dump(),
                  "a layer index or a list of them");
    c.layers_to_transform = l;
  }
  for (const char* k : {"rank_pattern", "alpha_pattern"}) {
    if (!has(k)) continue;
    bool ok = j[k].is_object();
    for (const auto& [p, v] : j[k].items())
      ok = ok && (std::string(k) == "rank_pattern" ? v.is_number_integer() && v.get<int64_t>() > 0
                                                   : v.is_number());
    if (!ok) throw c.bad(k, std::string(k) + " is " + j[k].dump(), "a mapping of names to numbers");
    (std::string(k) == "rank_pattern" ? c.rank_pattern : c.alpha_pattern) = j[k];
  }
  if (has("use_dora")) {
    if (!j["use_dora"].is_boolean())
      throw c.bad("use_dora", "use_dora is " + j["use_dora"].dump(), "true or false");
    c.dora = type == "LORA" && j["use_dora"].get<bool>();
  }
  return c;
}

// The LoHa / LoKr parameter a tensor name ends with (hada_w1_a, lokr_w2, ...), or "".
std::string lycoris_suffix(const std::string& key) {
  for (const char* s :
       {"hada_w1_a", "hada_w1_b", "hada_w2_a", "hada_w2_b", "hada_t1", "hada_t2", "lokr_w1",
        "lokr_w1_a", "lokr_w1_b", "lokr_w2", "lokr_w2_a", "lokr_w2_b", "lokr_t2"})
    if (ends_with(key, std::string(".") + s)) return s;
  return "";
}

// The adapter's tensors of one module.
struct ModuleWeights {
  const TensorView *a = nullptr, *b = nullptr, *b_bias = nullptr;  // lora_A, lora_B (linear)
  const TensorView *emb_a = nullptr, *emb_b = nullptr;             // lora_embedding_A/B
  const TensorView* magnitude = nullptr;                           // DoRA
  const TensorView* ia3 = nullptr;                                 // IA3's ia3_l
  std::map<std::string, const TensorView*> lycoris;  // LoHa's hada_*, LoKr's lokr_*, by suffix
};

}  // namespace lr

}  // namespace

std::unique_ptr<LoraAdapter> LoraAdapter::open(
    const fs::path& dir, const LoraBase& base,
    std::map<std::string, std::vector<TensorEdit>>& edits) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UserError("the adapter folder '" + dir.string() + "' does not exist",
                    {dir.string(), 0, 0, "--model_args peft"},
                    "a PEFT adapter folder (adapter_config.json and adapter_model.safetensors) or "
                    "a Hub repo id");
  const lr::Config config = lr::read_config(dir);
  auto adapter = std::unique_ptr<LoraAdapter>(new LoraAdapter());
  // peft reads adapter_model.safetensors when present, else adapter_model.bin.
  const fs::path st = dir / "adapter_model.safetensors", bin = dir / "adapter_model.bin";
  if (fs::exists(st, ec))
    adapter->files_ = WeightFiles::open_file(st);
  else if (fs::exists(bin, ec))
    adapter->files_ = WeightFiles::open_file(bin);
  else
    throw UserError("the adapter folder has no adapter_model.safetensors or adapter_model.bin",
                    {dir.string(), 0, 0, ""}, "the adapter's weights next to adapter_config.json");
  const WeightFiles& files = *adapter->files_;
  const std::string file = files.source().string();
  auto bad = [&](const std::string& module, const std::string& what, const std::string& expected) {
    return UserError(what, {file, 0, 0, module}, expected);
  };

  // The base tensor a module's parameter is: as named, or without the base model's prefix in a
  // checkpoint of the bare base model (the names peft sees always carry it).
  auto base_tensor = [&](const std::string& name) -> const TensorView* {
    if (const TensorView* t = base.weights->find(name)) return t;
    const size_t dot = name.find('.');
    return dot == std::string::npos ? nullptr : base.weights->find(name.substr(dot + 1));
  };
  auto tied_head = [&](const std::string& module) {
    return base.tied_embeddings && (module == "lm_head" || module == "embed_out") &&
           !base_tensor(module + ".weight");
  };
  auto editable = [&](const TensorView& t, const std::string& module) {
    if (!editable_dtype(t.dtype))
      throw UserError("tensor '" + t.name + "' has dtype " + t.dtype, {t.file, 0, 0, module},
                      "F32, F16 or BF16 tensors to merge the adapter into");
  };

  const std::string prefix = "base_model.model.";
  std::map<std::string, lr::ModuleWeights> modules;
  std::vector<std::pair<std::string, const TensorView*>> replaced;  // base name, new value
  for (const auto& name : files.names()) {
    const TensorView* t = files.find(name);
    if (name.rfind(prefix, 0) != 0)
      throw bad(name, "adapter tensor '" + name + "' is not named " + prefix + "...",
                "the tensors of a LoRA adapter saved by peft");
    const std::string key = name.substr(prefix.size());
    auto module_of = [&](const std::string& tail) {
      return lr::ends_with(key, tail) ? key.substr(0, key.size() - tail.size()) : std::string();
    };
    if (auto m = module_of(".lora_A.weight"); !m.empty()) {
      modules[m].a = t;
    } else if (auto m2 = module_of(".lora_B.weight"); !m2.empty()) {
      modules[m2].b = t;
    } else if (auto m3 = module_of(".lora_B.bias"); !m3.empty()) {
      modules[m3].b_bias = t;
    } else if (auto m4 = module_of(".lora_embedding_A"); !m4.empty()) {
      modules[m4].emb_a = t;
    } else if (auto m5 = module_of(".lora_embedding_B"); !m5.empty()) {
      modules[m5].emb_b = t;
    } else if (auto m6 = module_of(".lora_magnitude_vector"); !m6.empty()) {
      modules[m6].magnitude = t;
    } else if (auto m7 = module_of(".lora_magnitude_vector.weight"); !m7.empty()) {
      modules[m7].magnitude = t;
    } else if (auto m8 = module_of(".ia3_l"); !m8.empty()) {
      modules[m8].ia3 = t;
    } else if (const std::string suffix = lr::lycoris_suffix(key); !suffix.empty()) {
      modules[key.substr(0, key.size() - suffix.size() - 1)].lycoris[suffix] = t;
    } else if (key.find("lora_") != std::string::npos || key.find("ia3_") != std::string::npos ||
               key.find("hada_") != std::string::npos || key.find("lokr_") != std::string::npos) {
      throw bad(
          name,
          "adapter tensor '" + name + "' is of no LoRA, IA3, LoHa or LoKr layer lm-eval knows",
          "lora_A / lora_B / lora_embedding_A / lora_embedding_B / lora_magnitude_vector, "
          "ia3_l, hada_w1_a/b, hada_w2_a/b or lokr_w1(_a/_b), lokr_w2(_a/_b) tensors");
    } else {
      // A wrapped layer's own parameters are saved under base_layer (an embedding targeted by
      // LoRA); the model's tensor is the unwrapped name.
      std::string target = key;
      for (size_t at; (at = target.find(".base_layer.")) != std::string::npos;)
        target.erase(at, std::string(".base_layer").size());
      // A modules_to_save copy saved under its wrapper's name (X.modules_to_save.<adapter>.Y).
      if (size_t at = target.find(".modules_to_save."); at != std::string::npos) {
        const size_t name_end = target.find('.', at + 17);
        if (name_end != std::string::npos) target.erase(at, name_end - at);
      }
      replaced.emplace_back(target, t);
    }
  }

  for (const auto& [target, value] : replaced) {
    const std::string module = target.substr(0, target.rfind('.'));
    if (tied_head(module))
      throw bad(value->name,
                "the adapter replaces " + target +
                    ", which the base model ties to its input "
                    "embeddings; lm-eval cannot untie them",
                "an adapter of a model without tie_word_embeddings");
    const TensorView* b = base_tensor(target);
    if (!b)
      throw bad(value->name,
                "the adapter's tensor " + target +
                    " is not in the base model (an adapter of "
                    "another model?)",
                "the tensors of the base model the adapter was trained on");
    if (b->shape != value->shape)
      throw bad(value->name,
                "the adapter's " + target + " has shape " + lr::shape_text(value->shape) +
                    " but the base model's has " + lr::shape_text(b->shape) +
                    " (an adapter of another model?)",
                "the shapes of the base model the adapter was trained on");
    editable(*value, value->name);
    editable(*b, value->name);
    TensorEdit e;
    e.kind = TensorEdit::Kind::kReplace;
    e.a = value;
    edits[b->name].push_back(e);
  }

  // target_modules must name something: peft raises "Target modules ... not found in the base
  // model" for an adapter of another architecture.
  if (config.target_modules.is_array() || config.target_modules.is_string()) {
    const bool all_linear = config.target_modules.is_string() &&
                            config.target_modules.get<std::string>() == "all-linear";
    bool any = all_linear;
    for (const auto& n : base.weights->names())
      if (!any && lr::ends_with(n, ".weight")) any = config.targets(n.substr(0, n.size() - 7));
    if (!any)
      throw UserError("target_modules " + config.target_modules.dump() +
                          " match no module of the base model (an adapter of another model?)",
                      {config.path, 0, 0, "$.target_modules"}, "names of the base model's layers");
  }

  // peft decides the layout from the layer, whatever fan_in_fan_out says: GPT-2's Conv1D layers
  // store [in, out] (and nn.Linear [out, in]); embeddings are [vocab, dim].
  auto conv1d_layer = [&](const std::string& module) {
    return base.architecture == "GPT2LMHeadModel" &&
           (lr::ends_with(module, ".c_attn") || lr::ends_with(module, ".c_proj") ||
            lr::ends_with(module, ".c_fc"));
  };
  const bool ia3 = config.type == "IA3";
  // all-linear targets every linear layer but the output layer, as the adapter was saved.
  const bool all_linear =
      config.target_modules.is_string() && config.target_modules.get<std::string>() == "all-linear";
  std::vector<std::string> ignored, unused_magnitudes;
  for (const auto& [module, w] : modules) {
    const bool embedding = w.emb_a || w.emb_b;
    const TensorView* fa = embedding ? w.emb_a : w.a;
    const TensorView* fb = embedding ? w.emb_b : w.b;
    const TensorView* lora_any = fa ? fa : fb ? fb : w.b_bias ? w.b_bias : w.magnitude;
    // The peft type the module's tensors are of.
    const TensorView* any = lora_any ? lora_any : w.ia3 ? w.ia3 : w.lycoris.begin()->second;
    const std::string kind = lora_any                                          ? "LORA"
                             : w.ia3                                           ? "IA3"
                             : w.lycoris.begin()->first.rfind("hada_", 0) == 0 ? "LOHA"
                                                                               : "LOKR";
    if (kind != config.type)
      throw bad(any->name,
                "module " + module + " has " +
                    (kind == "LORA"   ? "LoRA tensors"
                     : kind == "IA3"  ? "an IA3 vector (ia3_l)"
                     : kind == "LOHA" ? "LoHa tensors (hada_*)"
                                      : "LoKr tensors (lokr_*)") +
                    " in an adapter whose adapter_config.json gives peft_type " + config.type,
                "the tensors of a " + config.type + " adapter");
    if (kind == "LOHA" || kind == "LOKR") {
      if (!all_linear && !config.targets(module)) {
        ignored.push_back(module);
        continue;
      }
      const std::string name = any->name;
      const TensorView* weight = base_tensor(module + ".weight");
      if (!weight)
        throw bad(name,
                  "module " + module + " is not in the base model (an adapter of another model?)",
                  "the layers of the base model the adapter was trained on");
      // peft's LoHa and LoKr adapt nn.Linear and convolutions, not GPT-2's Conv1D or embeddings.
      if (weight->shape.size() != 2 || conv1d_layer(module))
        throw bad(name,
                  "module " + module + " (weight " + lr::shape_text(weight->shape) +
                      ") is not a linear layer lm-eval merges " + config.type + " into",
                  "an adapter of linear layers");
      editable(*weight, name);
      for (const auto& [suffix, t] : w.lycoris) editable(*t, name);
      auto part = [&](const std::string& s) -> const TensorView* {
        auto it = w.lycoris.find(s);
        return it == w.lycoris.end() ? nullptr : it->second;
      };
      for (const char* cp : {"hada_t1", "hada_t2", "lokr_t2"})
        if (part(cp))
          throw bad(part(cp)->name,
                    "module " + module + " has " + cp +
                        " (a CP decomposition of a convolution's kernel, use_effective_conv2d)",
                    "the factors of a linear layer");
      const auto [rank, alpha] = config.rank_and_alpha(module);
      TensorEdit e;
      e.scale = alpha / static_cast<double>(rank);  // LycorisLayer.update_layer: alpha / r
      auto matrix = [&](const TensorView* t) {
        if (t->shape.size() != 2)
          throw bad(t->name, "tensor " + t->name + " has shape " + lr::shape_text(t->shape),
                    "a matrix");
      };
      // A factor whole (`whole`) or as the product of `a` [m, r] and `b` [r, n]: its [m, n].
      auto factor = [&](const char* whole, const char* a, const char* b, const TensorView*& x,
                        const TensorView*& y) -> std::vector<int64_t> {
        x = whole ? part(whole) : nullptr;
        y = nullptr;
        if (x) {
          matrix(x);
          return x->shape;
        }
        x = part(a);
        y = part(b);
        if (!x || !y)
          throw bad(name,
                    "module " + module + " lacks its " +
                        (whole ? std::string(whole) + " (or " : std::string()) + a + " and " + b +
                        (whole ? ")" : ""),
                    "every factor of the " + config.type + " layer");
        matrix(x);
        matrix(y);
        if (x->shape[1] != rank || y->shape[0] != rank)
          throw bad(x->name,
                    "module " + module + " has " + a + " " + lr::shape_text(x->shape) + " and " +
                        b + " " + lr::shape_text(y->shape) +
                        " where adapter_config.json gives r=" + std::to_string(rank),
                    std::string(a) + " [m, r] and " + b + " [r, n]");
        return {x->shape[0], y->shape[1]};
      };
      if (kind == "LOHA") {
        e.kind = TensorEdit::Kind::kHadamard;
        const auto s1 = factor(nullptr, "hada_w1_a", "hada_w1_b", e.a, e.b);
        const auto s2 = factor(nullptr, "hada_w2_a", "hada_w2_b", e.c, e.d);
        if (s1 != s2 || s1 != weight->shape)
          throw bad(name,
                    "module " + module + ": LoHa products " + lr::shape_text(s1) + " and " +
                        lr::shape_text(s2) + " do not fit its weight " +
                        lr::shape_text(weight->shape) + " (an adapter of another model?)",
                    "the shapes of the base model the adapter was trained on");
      } else {
        e.kind = TensorEdit::Kind::kKronecker;
        const auto s1 = factor("lokr_w1", "lokr_w1_a", "lokr_w1_b", e.a, e.b);
        const auto s2 = factor("lokr_w2", "lokr_w2_a", "lokr_w2_b", e.c, e.d);
        if (s1[0] * s2[0] != weight->shape[0] || s1[1] * s2[1] != weight->shape[1])
          throw bad(name,
                    "module " + module + ": the Kronecker product of " + lr::shape_text(s1) +
                        " and " + lr::shape_text(s2) + " does not fit its weight " +
                        lr::shape_text(weight->shape) + " (an adapter of another model?)",
                    "the shapes of the base model the adapter was trained on");
      }
      edits[weight->name].push_back(e);
      continue;
    }
    if (ia3) {
      // IA3 (ia3/layer.py Linear.merge): W · ia3_l, the vector [out, 1] for a layer whose output
      // it scales (the bias too), [1, in] for a feedforward layer, whose input it scales.
      if (!all_linear && !config.targets(module)) {
        ignored.push_back(module);
        continue;
      }
      const std::string name = w.ia3->name;
      const TensorView* weight = base_tensor(module + ".weight");
      if (!weight)
        throw bad(name,
                  "module " + module + " is not in the base model (an adapter of another model?)",
                  "the layers of the base model the adapter was trained on");
      editable(*weight, name);
      editable(*w.ia3, name);
      if (weight->shape.size() != 2)
        throw bad(name, "module " + module + " has a weight of " + lr::shape_text(weight->shape),
                  "a linear layer");
      const bool conv1d = conv1d_layer(module), ff = config.feedforward(module);
      const int64_t in = weight->shape[conv1d ? 0 : 1], out = weight->shape[conv1d ? 1 : 0];
      const std::vector<int64_t> want =
          ff ? std::vector<int64_t>{1, in} : std::vector<int64_t>{out, 1};
      if (w.ia3->shape != want)
        throw bad(name,
                  "module " + module + ": ia3_l " + lr::shape_text(w.ia3->shape) +
                      " does not fit its weight " + lr::shape_text(weight->shape) + " (" +
                      (ff ? "a feedforward layer: one factor per input" : "one factor per output") +
                      "; an adapter of another model?)",
                  "ia3_l " + lr::shape_text(want));
      TensorEdit e;
      e.kind = TensorEdit::Kind::kScale;
      e.a = w.ia3;
      e.axis = ff != conv1d ? 1 : 0;  // the input is a column of [out, in], a row of [in, out]
      edits[weight->name].push_back(e);
      if (const TensorView* bias = base_tensor(module + ".bias"); bias && !ff) {
        editable(*bias, name);
        e.axis = 0;
        edits[bias->name].push_back(e);
      }
      continue;
    }
    const std::string first = lora_any->name;
    if (!fa || !fb || (embedding && (w.a || w.b)))
      throw bad(first, "module " + module + " lacks its " + (fa ? "lora_B" : "lora_A") + " tensor",
                "both LoRA factors of every adapted module");
    if (!all_linear && !config.targets(module)) {
      ignored.push_back(module);
      continue;
    }
    if (tied_head(module) || (embedding && base.tied_embeddings && !base_tensor("lm_head.weight")))
      throw bad(first,
                "module " + module + " shares its weights with the " +
                    (embedding ? "output layer" : "input embeddings") +
                    " (tie_word_embeddings); lm-eval merges LoRA into weights and cannot untie "
                    "them",
                "an adapter of untied layers");
    const TensorView* weight = base_tensor(module + ".weight");
    if (!weight)
      throw bad(first,
                "module " + module +
                    " is not in the base model (an adapter of another "
                    "model?)",
                "the layers of the base model the adapter was trained on");
    editable(*weight, first);
    editable(*fa, first);
    editable(*fb, first);
    const auto [rank, alpha] = config.rank_and_alpha(module);
    if (fa->shape.size() != 2 || fb->shape.size() != 2 || weight->shape.size() != 2)
      throw bad(first,
                "module " + module + " has factors " + lr::shape_text(fa->shape) + " and " +
                    lr::shape_text(fb->shape) + " for a weight of " + lr::shape_text(weight->shape),
                "matrices");
    if (fa->shape[0] != rank || fb->shape[1] != rank)
      throw bad(first,
                "module " + module + " has factors of rank " + std::to_string(fa->shape[0]) +
                    " and " + std::to_string(fb->shape[1]) +
                    " where adapter_config.json gives r=" + std::to_string(rank),
                "lora_A [r, in] and lora_B [out, r]");
    const bool transposed = embedding || conv1d_layer(module);
    const std::vector<int64_t> want = transposed ? std::vector<int64_t>{fa->shape[1], fb->shape[0]}
                                                 : std::vector<int64_t>{fb->shape[0], fa->shape[1]};
    if (weight->shape != want)
      throw bad(first,
                "module " + module + ": lora factors " + lr::shape_text(fa->shape) + " and " +
                    lr::shape_text(fb->shape) + " do not fit its weight " +
                    lr::shape_text(weight->shape) + " (an adapter of another model?)",
                "the shapes of the base model the adapter was trained on");
    TensorEdit e;
    e.kind = TensorEdit::Kind::kLowRank;
    e.a = fa;
    e.b = fb;
    e.scale = config.rslora ? alpha / std::sqrt(static_cast<double>(rank))
                            : alpha / static_cast<double>(rank);
    e.transposed = transposed;
    if (config.dora) {
      // A magnitude peft would not find in the file is its initial norm of W + scaling·B·A with
      // the factors before loading (random for init_lora_weights=False): not reproducible.
      if (!w.magnitude)
        throw bad(first,
                  "module " + module +
                      " lacks its lora_magnitude_vector (adapter_config.json sets use_dora)",
                  "a magnitude vector for every module of a DoRA adapter");
      const int64_t outputs = weight->shape[transposed ? 1 : 0];
      if (w.magnitude->shape != std::vector<int64_t>{outputs})
        throw bad(w.magnitude->name,
                  "module " + module + ": lora_magnitude_vector " +
                      lr::shape_text(w.magnitude->shape) + " does not fit its weight " +
                      lr::shape_text(weight->shape),
                  "one magnitude per output, [" + std::to_string(outputs) + "]");
      editable(*w.magnitude, w.magnitude->name);
      e.magnitude = w.magnitude;
    } else if (w.magnitude) {
      unused_magnitudes.push_back(module);
    }
    edits[weight->name].push_back(e);
    if (w.b_bias) {
      // lora_bias: lora_B's bias is scaled with it and lands on the layer's bias.
      const TensorView* bias = base_tensor(module + ".bias");
      if (!bias)
        throw bad(w.b_bias->name,
                  "module " + module + " has a lora_B bias but the base model's layer has no bias",
                  "a base layer with a bias");
      if (bias->shape != w.b_bias->shape)
        throw bad(w.b_bias->name,
                  "module " + module + ": lora_B bias " + lr::shape_text(w.b_bias->shape) +
                      " does not fit its bias " + lr::shape_text(bias->shape),
                  "the shapes of the base model the adapter was trained on");
      editable(*w.b_bias, w.b_bias->name);
      TensorEdit be;
      be.kind = TensorEdit::Kind::kAdd;
      be.a = w.b_bias;
      be.scale = e.scale;
      edits[bias->name].push_back(be);
    }
  }
  if (!unused_magnitudes.empty())
    // peft builds no DoRA layers without use_dora and loads the file's other tensors only.
    log::warn("hf: " + file + " holds DoRA magnitudes (" + unused_magnitudes.front() +
              (unused_magnitudes.size() > 1 ? ", ..." : "") +
              ") but adapter_config.json does not set use_dora: not applied, as in peft");
  if (!ignored.empty()) {
    std::string list;
    for (size_t i = 0; i < ignored.size() && i < 5; ++i) list += (i ? ", " : "") + ignored[i];
    if (ignored.size() > 5) list += ", ...";
    // peft loads only the layers the config targets and skips the rest of the file's tensors.
    log::warn("hf: " + std::to_string(ignored.size()) + " " + config.type + " module" +
              (ignored.size() == 1 ? "" : "s") + " of " + file +
              " not targeted by adapter_config.json, so not applied, as in peft (" + list + ")");
  }
  return adapter;
}

}  // namespace lmeval::hf
