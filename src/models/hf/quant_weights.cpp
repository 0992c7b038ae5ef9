// Which tensors of a pre-quantised checkpoint make each weight, checked against
// quantization_config at load, and the weight computed from them when the model asks for it.
#include "models/hf/quant_weights.hpp"

#include <algorithm>

#include "lmeval/core/error.hpp"
#include "models/hf/bnb_formats.hpp"
#include "models/hf/json_file.hpp"
#include "models/hf/quant_formats.hpp"
#include "models/hf/weight_edits.hpp"
#include "models/hf/weight_files.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

struct QuantizedWeights::Module {
  enum class Kind {
    kGptq,    // qweight [in·bits/32, out] packed down the input rows, qzeros across the columns
    kAwq,     // qweight [in, out/8], eight 4-bit columns a word in AWQ's interleaved order
    kPacked,  // compressed-tensors pack-quantized: weight_packed [out, in·bits/32] along rows
    kScaled,  // an int8 / float8 weight [out, in] times its scales (fp8, naive/float-quantized)
    kBnb4,    // bitsandbytes nf4/fp4: two codes a byte, a code table times per-block absmax
    kBnb8,    // bitsandbytes LLM.int8(): an int8 weight [out, in] times its rows' SCB / 127
  };
  Kind kind = Kind::kScaled;
  const TensorView* q = nullptr;
  const TensorView* scales = nullptr;
  const TensorView* zeros = nullptr;  // none: zero points are 0 (symmetric)
  const TensorView* g_idx = nullptr;
  int bits = 4;
  int64_t rows = 0, cols = 0;              // the weight's [out, in]
  int64_t block_rows = 0, block_cols = 0;  // 0: the scales' grid divides the weight evenly
  bool zero_plus_one = false;              // GPTQ v1 stores each zero point less one
  bool zeros_packed = false;  // compressed-tensors' asymmetric zero points, packed down the rows
  int64_t offset = 0;         // subtracted from each unpacked field (signed compressed-tensors)
  // bitsandbytes 4-bit: quant_state's code table (checked; the CPU kernel's own is used),
  // absmax (uint8 codes when double quantised, with the nested table, absmax and offset), block
  // sizes and the compute dtype it dequantises to. 8-bit: scales holds SCB.
  const TensorView* quant_map = nullptr;
  const TensorView* nested_absmax = nullptr;
  const TensorView* nested_quant_map = nullptr;
  const float* code_table = nullptr;
  int64_t blocksize = 64, nested_blocksize = 256;
  float nested_offset = 0.0f;
  std::string out_dtype = "F32";
};

namespace {

using Module = QuantizedWeights::Module;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Reads the fields of config.json's quantization_config, naming the field of a bad one.
class QuantConfig {
 public:
  QuantConfig(const fs::path& file, const Json& q) : file_(file.string()), q_(q) {}

  UserError bad(const std::string& key, const std::string& msg, const std::string& want) const {
    return UserError(msg, {file_, 0, 0, "$.quantization_config." + key}, want);
  }
  bool has(const std::string& key) const { return q_.contains(key) && !q_[key].is_null(); }
  int64_t integer(const std::string& key, int64_t dflt) const {
    if (!has(key)) return dflt;
    if (!q_[key].is_number_integer()) throw bad(key, key + " is " + q_[key].dump(), "an integer");
    return q_[key].get<int64_t>();
  }
  std::string text(const std::string& key, const std::string& dflt) const {
    if (!has(key)) return dflt;
    if (!q_[key].is_string()) throw bad(key, key + " is " + q_[key].dump(), "a string");
    return q_[key].get<std::string>();
  }
  bool flag(const std::string& key, bool dflt) const {
    if (!has(key)) return dflt;
    if (!q_[key].is_boolean()) throw bad(key, key + " is " + q_[key].dump(), "true or false");
    return q_[key].get<bool>();
  }
  const Json& json() const { return q_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  const Json& q_;
};

UserError bad_tensor(const TensorView& t, const std::string& msg, const std::string& want) {
  return UserError("tensor '" + t.name + "' " + msg, {t.file, 0, 0, t.name}, want);
}

const TensorView& companion(const WeightFiles& files, const TensorView& q, const std::string& name,
                            const std::string& want) {
  const TensorView* t = files.find(name);
  if (!t)
    throw UserError("quantised tensor '" + q.name + "' has no '" + name + "' beside it",
                    {q.file, 0, 0, name}, want);
  return *t;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

void require_shape(const TensorView& t, const std::vector<int64_t>& want, const std::string& why) {
  if (t.shape != want)
    throw bad_tensor(t, "has shape " + shape_text(t.shape),
                     "shape " + shape_text(want) + " (" + why + ")");
}

void require_dtype(const TensorView& t, std::initializer_list<const char*> dtypes,
                   const std::string& want) {
  for (const char* d : dtypes)
    if (t.dtype == d) return;
  throw bad_tensor(t, "has dtype " + t.dtype, want);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void require_bits(const QuantConfig& c, const std::string& key, int bits,
                  std::initializer_list<int> allowed) {
  std::string list;
  for (int b : allowed) {
    if (b == bits) return;
    list += (list.empty() ? "" : ", ") + std::to_string(b);
  }
  throw c.bad(key, key + " is " + std::to_string(bits), "one of " + list);
}

// GPTQ (gptqmodel / AutoGPTQ): qweight, qzeros, scales, g_idx per linear layer.
void add_gptq(const QuantConfig& c, const WeightFiles& files, const TensorView& qweight,
              const std::string& prefix, Module& m) {
  m.kind = Module::Kind::kGptq;
  m.bits = static_cast<int>(c.integer("bits", 4));
  require_bits(c, "bits", m.bits, {2, 3, 4, 8});
  const int64_t group = c.integer("group_size", 128);
  if (group == 0 || group < -1)
    throw c.bad("group_size", "group_size is 0", "-1 or a positive size");
  // gptqmodel's checkpoint_format: "gptq" (v1) stores zero points minus one, "gptq_v2" as they are.
  const std::string format = lower(c.text("checkpoint_format", c.text("format", "gptq")));
  if (format != "gptq" && format != "gptq_v2")
    throw c.bad("checkpoint_format", "checkpoint_format is '" + format + "'",
                "\"gptq\" or \"gptq_v2\"");
  m.zero_plus_one = format == "gptq";
  require_dtype(qweight, {"I32"}, "int32 words of packed weights");
  if (qweight.shape.size() != 2 || (qweight.shape[0] * 32) % m.bits != 0)
    throw bad_tensor(qweight, "has shape " + shape_text(qweight.shape),
                     "[in_features·bits/32, out_features]");
  m.q = &qweight;
  m.cols = qweight.shape[0] * 32 / m.bits;
  m.rows = qweight.shape[1];
  const int64_t groups = group == -1 ? 1 : ceil_div(m.cols, group);
  m.block_cols = group == -1 ? m.cols : group;
  m.scales = &companion(files, qweight, prefix + "scales", "the layer's GPTQ scales");
  require_dtype(*m.scales, {"F16", "BF16", "F32"}, "float scales");
  require_shape(*m.scales, {groups, m.rows}, "[groups, out_features]");
  m.zeros = &companion(files, qweight, prefix + "qzeros", "the layer's packed GPTQ zero points");
  require_dtype(*m.zeros, {"I32"}, "int32 words of packed zero points");
  require_shape(*m.zeros, {groups, ceil_div(m.rows * m.bits, 32)},
                "[groups, out_features·bits/32]");
  if (const TensorView* g = files.find(prefix + "g_idx")) {
    require_shape(*g, {m.cols}, "one group index per input feature");
    m.g_idx = g;
  }
}

// AWQ (AutoAWQ's GEMM layout, which transformers' AwqConfig version "gemm" reads).
void add_awq(const QuantConfig& c, const WeightFiles& files, const TensorView& qweight,
             const std::string& prefix, Module& m) {
  m.kind = Module::Kind::kAwq;
  m.bits = static_cast<int>(c.integer("bits", c.integer("w_bit", 4)));
  require_bits(c, c.has("bits") ? "bits" : "w_bit", m.bits, {4});
  const std::string version = lower(c.text("version", "gemm"));
  if (version != "gemm")
    throw c.bad("version", "version is '" + version + "'",
                "\"gemm\" (the other layouts run on transformers)");
  const int64_t group = c.integer("group_size", c.integer("q_group_size", 128));
  require_dtype(qweight, {"I32"}, "int32 words of packed weights");
  if (qweight.shape.size() != 2)
    throw bad_tensor(qweight, "has shape " + shape_text(qweight.shape),
                     "[in_features, out_features/8]");
  m.q = &qweight;
  m.cols = qweight.shape[0];
  m.rows = qweight.shape[1] * 8;
  if (group <= 0 || m.cols % group != 0)
    throw c.bad("group_size",
                "group_size " + std::to_string(group) + " does not divide in_features " +
                    std::to_string(m.cols) + " of " + qweight.name,
                "a positive divisor of every layer's in_features");
  m.block_cols = group;
  m.scales = &companion(files, qweight, prefix + "scales", "the layer's AWQ scales");
  require_dtype(*m.scales, {"F16", "BF16", "F32"}, "float scales");
  require_shape(*m.scales, {m.cols / group, m.rows}, "[groups, out_features]");
  if (c.flag("zero_point", true)) {
    m.zeros = &companion(files, qweight, prefix + "qzeros", "the layer's packed AWQ zero points");
    require_dtype(*m.zeros, {"I32"}, "int32 words of packed zero points");
    require_shape(*m.zeros, {m.cols / group, m.rows / 8}, "[groups, out_features/8]");
  }
}

// The scales' grid over a [rows, cols] weight: per tensor, per row, per group or per block.
void grid_of(const TensorView& scales, const std::vector<int64_t>& block, Module& m) {
  int64_t numel = 1;
  for (int64_t d : scales.shape) numel *= d;
  if (numel == 1) {
    m.block_rows = m.rows;
    m.block_cols = m.cols;
    return;
  }
  if (scales.shape.size() != 2)
    throw bad_tensor(scales, "has shape " + shape_text(scales.shape),
                     "one scale, or a [rows, groups] grid of them");
  const int64_t sr = scales.shape[0], sc = scales.shape[1];
  m.block_rows = block.size() == 2 ? block[0] : ceil_div(m.rows, sr);
  m.block_cols = block.size() == 2 ? block[1] : ceil_div(m.cols, sc);
  if (ceil_div(m.rows, m.block_rows) != sr || ceil_div(m.cols, m.block_cols) != sc)
    throw bad_tensor(scales, "has shape " + shape_text(scales.shape),
                     "a grid of [" + std::to_string(m.block_rows) + ", " +
                         std::to_string(m.block_cols) + "] blocks over the weight " +
                         shape_text({m.rows, m.cols}));
}

// transformers' FineGrainedFP8 (quant_method "fp8"): float8 weights times weight_scale_inv.
void add_fp8(const QuantConfig& c, const WeightFiles& files, const TensorView& w,
             const std::string& prefix, Module& m) {
  std::vector<int64_t> block;
  if (c.has("weight_block_size")) {
    const Json& b = c.json()["weight_block_size"];
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() ||
        b[0].get<int64_t>() <= 0 || b[1].get<int64_t>() <= 0)
      throw c.bad("weight_block_size", "weight_block_size is " + b.dump(),
                  "[block_rows, block_cols] of positive integers, or null");
    block = {b[0].get<int64_t>(), b[1].get<int64_t>()};
  }
  m.kind = Module::Kind::kScaled;
  m.q = &w;
  if (w.shape.size() != 2) throw bad_tensor(w, "has shape " + shape_text(w.shape), "[out, in]");
  m.rows = w.shape[0];
  m.cols = w.shape[1];
  m.scales = &companion(files, w, prefix + "weight_scale_inv", "the layer's FP8 scales");
  require_dtype(*m.scales, {"F32", "BF16", "F16"}, "float scales");
  grid_of(*m.scales, block, m);
}

// compressed-tensors (llm-compressor's checkpoints): the weights arguments of its config_groups.
struct CtWeights {
  int bits = 8;
  bool is_float = false;
  bool symmetric = true;
  std::vector<int64_t> block;  // strategy "group": [1, group_size]; "block": block_structure
};

CtWeights ct_weights(const QuantConfig& c) {
  if (!c.has("config_groups") || !c.json()["config_groups"].is_object())
    throw c.bad("config_groups", "config_groups is missing", "an object of quantisation schemes");
  const Json* found = nullptr;
  std::string found_key;
  for (const auto& [name, group] : c.json()["config_groups"].items()) {
    if (!group.is_object() || !group.contains("weights") || group["weights"].is_null()) continue;
    if (found && *found != group["weights"])
      throw c.bad("config_groups." + name + ".weights",
                  "config_groups " + found_key + " and " + name + " quantise weights differently",
                  "one weights scheme for every group (several run on transformers only)");
    found = &group["weights"];
    found_key = name;
  }
  if (!found) throw c.bad("config_groups", "no config group quantises weights", "a weights scheme");
  const QuantConfig w(c.file(), *found);
  const std::string key = "config_groups." + found_key + ".weights.";
  auto wbad = [&](const std::string& k, const std::string& msg, const std::string& want) {
    return c.bad(key + k, msg, want);
  };
  CtWeights out;
  out.bits = static_cast<int>(w.integer("num_bits", 8));
  const std::string type = w.text("type", "int");
  if (type != "int" && type != "float")
    throw wbad("type", "type is '" + type + "'", "\"int\" or \"float\"");
  out.is_float = type == "float";
  if (out.is_float && out.bits != 8)
    throw wbad("num_bits", "num_bits is " + std::to_string(out.bits), "8 for float weights");
  if (!out.is_float && (out.bits < 1 || out.bits > 8))
    throw wbad("num_bits", "num_bits is " + std::to_string(out.bits), "1 to 8");
  out.symmetric = w.flag("symmetric", true);
  const std::string strategy = w.text("strategy", "tensor");
  if (strategy == "group" || strategy == "tensor_group") {
    const int64_t g = w.integer("group_size", 0);
    if (g <= 0) throw wbad("group_size", "group_size is " + std::to_string(g), "a positive size");
    out.block = {1, g};
  } else if (strategy == "block") {
    const Json& b = found->contains("block_structure") ? (*found)["block_structure"] : Json();
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer())
      throw wbad("block_structure", "block_structure is " + b.dump(), "[rows, cols]");
    out.block = {b[0].get<int64_t>(), b[1].get<int64_t>()};
  } else if (strategy != "tensor" && strategy != "channel") {
    throw wbad("strategy", "strategy is '" + strategy + "'", "tensor, channel, group or block");
  }
  return out;
}

void add_compressed(const QuantConfig& c, const CtWeights& ct, const WeightFiles& files,
                    const TensorView& q, const std::string& prefix, bool packed, Module& m) {
  m.q = &q;
  m.bits = ct.bits;
  if (packed) {
    m.kind = Module::Kind::kPacked;
    require_dtype(q, {"I32"}, "int32 words of packed weights");
    const TensorView& shape =
        companion(files, q, prefix + "weight_shape", "the weight's [out, in]");
    const std::vector<int64_t> s = quant::ints_of(shape);
    if (s.size() != 2 || s[0] <= 0 || s[1] <= 0)
      throw bad_tensor(shape, "holds " + shape_text(s), "the weight's [out, in]");
    m.rows = s[0];
    m.cols = s[1];
    require_shape(q, {m.rows, ceil_div(m.cols * m.bits, 32)}, "[out, in·num_bits/32]");
    m.offset = int64_t{1} << (m.bits - 1);  // pack_to_int32 stores q + 2^(bits-1)
  } else {
    m.kind = Module::Kind::kScaled;
    if (ct.is_float)
      require_dtype(q, {"F8_E4M3", "F8_E5M2"}, "float8 weights");
    else
      require_dtype(q, {"I8", "U8", "I16", "I32"}, "integer weights");
    if (q.shape.size() != 2) throw bad_tensor(q, "has shape " + shape_text(q.shape), "[out, in]");
    m.rows = q.shape[0];
    m.cols = q.shape[1];
  }
  m.scales = &companion(files, q, prefix + "weight_scale", "the layer's scales");
  require_dtype(*m.scales, {"F32", "F16", "BF16"}, "float scales");
  grid_of(*m.scales, ct.block, m);
  if (const TensorView* z = files.find(prefix + "weight_zero_point")) {
    m.zeros = z;
    m.zeros_packed = packed && !ct.symmetric;
    if (m.zeros_packed) {
      require_dtype(*z, {"I32"}, "int32 words of packed zero points");
      require_shape(*z, {ceil_div(m.scales->shape[0] * m.bits, 32), m.scales->shape[1]},
                    "the scales' grid packed down its rows");
    } else {
      require_shape(*z, m.scales->shape, "the scales' shape");
    }
  } else if (!ct.symmetric) {
    throw UserError(
        "quantised tensor '" + q.name + "' has no '" + prefix + "weight_zero_point' beside it",
        {q.file, 0, 0, prefix + "weight_zero_point"}, "zero points for an asymmetric scheme");
  }
  if (const TensorView* g = files.find(prefix + "weight_g_idx")) {
    require_shape(*g, {m.cols}, "one group index per input feature");
    m.g_idx = g;
  }
  (void)c;
}

// bitsandbytes' serialisation (Linear4bit's _save_to_state_dict): a 4-bit weight keeps its
// QuantState as weight.absmax, weight.quant_map, weight.nested_* and a JSON of the rest in
// weight.quant_state.bitsandbytes__nf4 (or __fp4).
//
// transformers runs such a layer as Linear4bit(compute_dtype=bnb_4bit_compute_dtype): its
// forward casts the input to the compute dtype and bitsandbytes' gemm_4bit (default backend on
// the CPU) dequantises the weight to the input's dtype, so the values are rounded to the compute
// dtype, not to the QuantState's dtype (the dtype the weight had when it was quantised).
std::string bnb_compute_dtype(const QuantConfig& c) {
  // BitsAndBytesConfig: None means float32; a string is getattr(torch, name).
  const std::string name = c.text("bnb_4bit_compute_dtype", "float32");
  if (name == "float32" || name == "float") return "F32";
  if (name == "bfloat16") return "BF16";
  if (name == "float16" || name == "half") return "F16";
  throw c.bad("bnb_4bit_compute_dtype", "bnb_4bit_compute_dtype is '" + name + "'",
              "float32, bfloat16 or float16");
}

void add_bnb4(const QuantConfig& c, const WeightFiles& files, const TensorView& w,
              const std::string& prefix, const TensorView& state, Module& m) {
  m.kind = Module::Kind::kBnb4;
  m.q = &w;
  require_dtype(w, {"U8"}, "uint8 bytes of packed 4-bit codes");
  Json j;
  try {
    j = Json::parse(std::string(reinterpret_cast<const char*>(state.data), state.nbytes));
  } catch (const Json::exception& e) {
    throw bad_tensor(state, std::string("is not the JSON of a QuantState: ") + e.what(),
                     "bitsandbytes' packed quant_state");
  }
  auto field = [&](const char* key) -> const Json& {
    if (!j.is_object() || !j.contains(key))
      throw bad_tensor(state, std::string("lacks ") + key, "bitsandbytes' packed quant_state");
    return j[key];
  };
  const Json& type = field("quant_type");
  m.code_table = type.is_string() ? quant::bnb4_code_table(type.get<std::string>()) : nullptr;
  if (!m.code_table)
    throw bad_tensor(state, "has quant_type " + type.dump(), "quant_type \"nf4\" or \"fp4\"");
  const Json& shape = field("shape");
  if (!shape.is_array() || shape.size() != 2 || !shape[0].is_number_integer() ||
      !shape[1].is_number_integer() || shape[0].get<int64_t>() <= 0 || shape[1].get<int64_t>() <= 0)
    throw bad_tensor(state, "has shape " + shape.dump(), "the weight's [out, in]");
  m.rows = shape[0].get<int64_t>();
  m.cols = shape[1].get<int64_t>();
  m.blocksize = field("blocksize").is_number_integer() ? field("blocksize").get<int64_t>() : 0;
  if (m.blocksize <= 0)
    throw bad_tensor(state, "has blocksize " + field("blocksize").dump(), "a positive block size");
  m.out_dtype = bnb_compute_dtype(c);
  // Params4bit keeps the codes as [(out·in + 1) / 2, 1] bytes.
  if (w.nbytes != static_cast<size_t>(ceil_div(m.rows * m.cols, 2)))
    throw bad_tensor(w, "holds " + std::to_string(w.nbytes) + " bytes",
                     std::to_string(ceil_div(m.rows * m.cols, 2)) + " (two codes a byte for the " +
                         shape.dump() + " weight its quant_state names)");
  const int64_t blocks = ceil_div(m.rows * m.cols, m.blocksize);
  m.scales = &companion(files, w, prefix + "weight.absmax", "the blocks' absmax");
  m.quant_map = &companion(files, w, prefix + "weight.quant_map", "the 16-entry code table");
  require_shape(*m.quant_map, {16}, "nf4 or fp4's 16 codes");
  require_shape(*m.scales, {blocks}, "one absmax per block of " + std::to_string(m.blocksize));
  if (m.scales->dtype == "U8") {  // double quantisation
    m.nested_absmax =
        &companion(files, w, prefix + "weight.nested_absmax", "the absmax codes' absmax");
    m.nested_quant_map =
        &companion(files, w, prefix + "weight.nested_quant_map", "the absmax codes' table");
    require_shape(*m.nested_quant_map, {256}, "256 codes");
    require_dtype(*m.nested_quant_map, {"F32"}, "float32 codes");
    require_dtype(*m.nested_absmax, {"F32"}, "float32 absmax");
    m.nested_blocksize = field("nested_blocksize").is_number_integer()
                             ? field("nested_blocksize").get<int64_t>()
                             : 0;
    // matmul_4bit raises NotImplementedError for nested blocks of another size.
    if (m.nested_blocksize != 256)
      throw bad_tensor(state, "has nested_blocksize " + field("nested_blocksize").dump(),
                       "256 (the only one bitsandbytes' matmul_4bit runs)");
    require_shape(*m.nested_absmax, {ceil_div(blocks, m.nested_blocksize)},
                  "one per block of " + std::to_string(m.nested_blocksize) + " absmax codes");
    const Json& off = field("nested_offset");
    if (!off.is_number()) throw bad_tensor(state, "has nested_offset " + off.dump(), "a number");
    m.nested_offset = off.get<float>();
  } else {
    require_dtype(*m.scales, {"F32"}, "float32 absmax, or uint8 codes when double quantised");
  }
}

// bitsandbytes' gemm_4bit on the CPU (backends/default/ops.py): the absmax first
// dequantize_blockwise'd from its codes plus the offset, then the CPU kernel's dequantize_4bit.
std::vector<float> bnb4_values(const Module& m) {
  const std::vector<float> absmax =
      m.nested_absmax ? quant::bnb_nested_absmax(
                            quant::ints_of(*m.scales), float_values(*m.nested_quant_map),
                            float_values(*m.nested_absmax), m.nested_blocksize, m.nested_offset)
                      : float_values(*m.scales);
  return quant::bnb4_dequantise(reinterpret_cast<const uint8_t*>(m.q->data), m.rows * m.cols,
                                m.code_table, absmax, m.blocksize, m.out_dtype);
}

// Linear8bitLt's serialisation: weight int8 [out, in], weight.SCB float32 [out] (each row's
// absmax) and weight_format 0 (row-major, the only layout bitsandbytes still writes).
void add_bnb8(const WeightFiles& files, const TensorView& w, const std::string& prefix, Module& m) {
  m.kind = Module::Kind::kBnb8;
  m.q = &w;
  if (w.shape.size() != 2)
    throw bad_tensor(w, "has shape " + shape_text(w.shape), "an int8 weight [out, in]");
  m.rows = w.shape[0];
  m.cols = w.shape[1];
  m.scales = &companion(files, w, prefix + "SCB", "the rows' int8 scales (SCB)");
  require_dtype(*m.scales, {"F32"}, "float32 row scales");
  require_shape(*m.scales, {m.rows}, "one scale per output row of " + w.name);
  if (const TensorView* f = files.find(prefix + "weight_format")) {
    const std::vector<int64_t> v = quant::ints_of(*f);
    if (v.size() != 1 || v[0] != 0)
      throw bad_tensor(*f, "is not 0", "0 (row-major; the tiled formats are no longer read)");
  }
}

std::vector<float> bnb8_values(const Module& m) {
  return quant::bnb_int8_dequantise(reinterpret_cast<const int8_t*>(m.q->data), m.rows, m.cols,
                                    float_values(*m.scales));
}

// The q values of a module, row-major [rows, cols], before zero points and scales.
std::vector<float> unpacked(const Module& m) {
  std::vector<float> q(static_cast<size_t>(m.rows * m.cols));
  switch (m.kind) {
    case Module::Kind::kGptq: {
      // Each output column's words run down qweight's rows: gather them into one stream.
      const std::vector<uint32_t> w = quant::words_of(*m.q);
      const int64_t words = m.q->shape[0];
      std::vector<uint32_t> col(static_cast<size_t>(words + 1), 0);
      for (int64_t r = 0; r < m.rows; ++r) {
        for (int64_t k = 0; k < words; ++k) col[k] = w[k * m.rows + r];
        for (int64_t c = 0; c < m.cols; ++c)
          q[r * m.cols + c] = static_cast<float>(quant::bit_field(col.data(), c, m.bits));
      }
      break;
    }
    case Module::Kind::kAwq: {
      // AutoAWQ packs the columns 0..7 of a word in the order 0, 2, 4, 6, 1, 3, 5, 7: column j
      // sits in nibble kReverse[j] (awq/utils/packing_utils.py's AWQ_REVERSE_ORDER).
      static constexpr int kReverse[8] = {0, 4, 1, 5, 2, 6, 3, 7};
      const std::vector<uint32_t> w = quant::words_of(*m.q);
      const int64_t per_row = m.rows / 8;
      for (int64_t i = 0; i < m.cols; ++i)
        for (int64_t o = 0; o < m.rows; ++o)
          q[o * m.cols + i] =
              static_cast<float>((w[i * per_row + o / 8] >> (4 * kReverse[o % 8])) & 0xFu);
      break;
    }
    case Module::Kind::kPacked: {
      const std::vector<uint32_t> w = quant::words_of(*m.q);
      const int64_t per_row = m.q->shape[1];
      std::vector<uint32_t> row(static_cast<size_t>(per_row + 1), 0);
      for (int64_t r = 0; r < m.rows; ++r) {
        std::copy(w.begin() + r * per_row, w.begin() + (r + 1) * per_row, row.begin());
        for (int64_t c = 0; c < m.cols; ++c)
          q[r * m.cols + c] = static_cast<float>(
              static_cast<int64_t>(quant::bit_field(row.data(), c, m.bits)) - m.offset);
      }
      break;
    }
    case Module::Kind::kBnb4:
    case Module::Kind::kBnb8:
      break;  // bnb4_values, bnb8_values
    case Module::Kind::kScaled:
      if (m.q->dtype.starts_with("F8")) {
        q = quant::fp8_values(*m.q);
      } else {
        const std::vector<int64_t> v = quant::ints_of(*m.q);
        for (size_t i = 0; i < v.size(); ++i) q[i] = static_cast<float>(v[i]);
      }
      break;
  }
  return q;
}

// The zero points on the scales' grid, [grid_rows, grid_cols] (empty for none).
std::vector<float> zero_points(const Module& m, int64_t grid_rows, int64_t grid_cols) {
  if (!m.zeros) return {};
  std::vector<float> z(static_cast<size_t>(grid_rows * grid_cols));
  if (m.kind == Module::Kind::kGptq || m.kind == Module::Kind::kAwq) {
    // Stored [groups, out] packed across the output columns; the grid is [out, groups].
    static constexpr int kAwqReverse[8] = {0, 4, 1, 5, 2, 6, 3, 7};
    const std::vector<uint32_t> w = quant::words_of(*m.zeros);
    const int64_t per_group = m.zeros->shape[1];
    for (int64_t g = 0; g < grid_cols; ++g)
      for (int64_t o = 0; o < grid_rows; ++o) {
        const uint32_t* row = w.data() + g * per_group;
        uint32_t v;
        if (m.kind == Module::Kind::kAwq) {
          v = (row[o / 8] >> (4 * kAwqReverse[o % 8])) & 0xFu;
        } else {
          std::vector<uint32_t> padded(row, row + per_group);
          padded.push_back(0);
          v = quant::bit_field(padded.data(), o, m.bits);
        }
        z[o * grid_cols + g] = static_cast<float>(v) + (m.zero_plus_one ? 1.0f : 0.0f);
      }
    return z;
  }
  if (m.zeros_packed) {
    // pack_to_int32(zero_point, packed_dim=0): each grid column's values run down the rows.
    const std::vector<uint32_t> w = quant::words_of(*m.zeros);
    const int64_t words = m.zeros->shape[0];
    std::vector<uint32_t> col(static_cast<size_t>(words + 1), 0);
    for (int64_t g = 0; g < grid_cols; ++g) {
      for (int64_t k = 0; k < words; ++k) col[k] = w[k * grid_cols + g];
      for (int64_t r = 0; r < grid_rows; ++r)
        z[r * grid_cols + g] = static_cast<float>(
            static_cast<int64_t>(quant::bit_field(col.data(), r, m.bits)) - m.offset);
    }
    return z;
  }
  if (editable_dtype(m.zeros->dtype)) return float_values(*m.zeros);
  if (m.zeros->dtype.starts_with("F8")) return quant::fp8_values(*m.zeros);
  const std::vector<int64_t> v = quant::ints_of(*m.zeros);
  for (size_t i = 0; i < v.size(); ++i) z[i] = static_cast<float>(v[i]);
  return z;
}

// The methods transformers knows (its AUTO_QUANTIZATION_CONFIG_MAPPING) but lm-eval does not run
// natively: hf_transformers_path.cpp sends those to transformers, so only the unknown reach here.
const char* const kNative[] = {"gptq", "awq", "fp8", "compressed-tensors", "bitsandbytes"};

}  // namespace

namespace {

TensorView owned_view(const std::string& name, const Module& m, std::vector<float> values) {
  auto owned = std::make_shared<std::vector<float>>(std::move(values));
  TensorView v;
  v.name = name;
  v.dtype = "F32";
  v.shape = {m.rows, m.cols};
  v.data = reinterpret_cast<const std::byte*>(owned->data());
  v.nbytes = owned->size() * sizeof(float);
  v.file = m.q->file;
  v.owner = std::move(owned);
  return v;
}

}  // namespace

QuantizedWeights::QuantizedWeights() = default;
QuantizedWeights::~QuantizedWeights() = default;

std::unique_ptr<QuantizedWeights> QuantizedWeights::open(const fs::path& dir,
                                                         const WeightFiles& files,
                                                         const std::string& dtype) {
  const fs::path cfg_path = dir / "config.json";
  if (!fs::exists(cfg_path)) return nullptr;
  const Json cfg = load_json_file(cfg_path, "config.json");
  if (!cfg.is_object() || !cfg.contains("quantization_config") ||
      cfg["quantization_config"].is_null())
    return nullptr;
  const Json& qj = cfg["quantization_config"];
  const QuantConfig c(cfg_path, qj);
  if (!qj.is_object()) throw c.bad("", "quantization_config is " + qj.dump(), "an object");
  const std::string method = c.text("quant_method", "");
  if (method == "mxfp4") return nullptr;  // the GPT-OSS experts' own format (arch/gpt_oss.cpp)
  if (std::find(std::begin(kNative), std::end(kNative), method) == std::end(kNative))
    throw c.bad("quant_method",
                "quant_method '" + method + "' is not one lm-eval or transformers reads",
                "gptq, awq, fp8, compressed-tensors, bitsandbytes, or another method transformers "
                "knows");
  auto out = std::unique_ptr<QuantizedWeights>(new QuantizedWeights());
  out->method_ = method;
  // Fp8Dequantize._dequantize_one: (q · s) in float32, then .to() the parameter's dtype, which is
  // dtype= or, with auto, config.json's.
  std::string model_dtype = dtype;
  if (model_dtype.empty() || model_dtype == "auto")
    for (const char* key : {"dtype", "torch_dtype"})
      if (cfg.contains(key) && cfg[key].is_string()) {
        model_dtype = cfg[key].get<std::string>();
        break;
      }
  if (model_dtype == "bfloat16") out->model_round_ = "BF16";
  if (model_dtype == "float16" || model_dtype == "half") out->model_round_ = "F16";
  CtWeights ct;
  std::string ct_format;
  if (method == "compressed-tensors") {
    ct = ct_weights(c);
    ct_format = c.text("format", "");
    if (ct_format != "pack-quantized" && ct_format != "naive-quantized" &&
        ct_format != "int-quantized" && ct_format != "float-quantized")
      throw c.bad("format", "format is '" + ct_format + "'",
                  "pack-quantized, naive-quantized, int-quantized or float-quantized");
  }
  auto add = [&](const std::string& prefix, const TensorView& q, auto&& fill) {
    auto m = std::make_unique<Module>();
    fill(*m);
    for (const TensorView* t : {m->q, m->scales, m->zeros, m->g_idx})
      if (t) out->hidden_.insert(t->name);
    out->modules_[prefix + "weight"] = std::move(m);
    (void)q;
  };
  for (const std::string& name : files.names()) {
    const TensorView& t = *files.find(name);
    auto ends = [&](const char* suffix) { return name.ends_with(suffix); };
    auto prefix_of = [&](const char* suffix) {
      return name.substr(0, name.size() - std::string(suffix).size());
    };
    if ((method == "gptq" || method == "awq") && ends("qweight")) {
      const std::string p = prefix_of("qweight");
      add(p, t, [&](Module& m) {
        if (method == "gptq")
          add_gptq(c, files, t, p, m);
        else
          add_awq(c, files, t, p, m);
      });
    } else if (method == "fp8" && ends(".weight") && t.dtype.starts_with("F8")) {
      const std::string p = prefix_of("weight");
      add(p, t, [&](Module& m) { add_fp8(c, files, t, p, m); });
    } else if (method == "compressed-tensors" && ends(".weight_packed")) {
      if (ct_format != "pack-quantized")
        throw bad_tensor(t, "is packed but the format is " + ct_format, "format pack-quantized");
      const std::string p = prefix_of("weight_packed");
      add(p, t, [&](Module& m) { add_compressed(c, ct, files, t, p, true, m); });
    } else if (method == "compressed-tensors" && ends(".weight") && !editable_dtype(t.dtype)) {
      const std::string p = prefix_of("weight");
      add(p, t, [&](Module& m) { add_compressed(c, ct, files, t, p, false, m); });
    }
  }
  // Activation scales (static FP8 schemes) and compressed-tensors' shapes are not weights.
  for (const std::string& name : files.names())
    if (name.ends_with(".weight_shape") || name.ends_with(".input_scale") ||
        name.ends_with(".activation_scale") || name.ends_with(".input_zero_point"))
      out->hidden_.insert(name);
  if (method == "bitsandbytes") {
    const bool four = c.flag("load_in_4bit", false), eight = c.flag("load_in_8bit", false);
    if (four == eight)
      throw c.bad("load_in_4bit",
                  four ? "load_in_4bit and load_in_8bit are both true"
                       : "neither load_in_4bit nor load_in_8bit is true",
                  "one of them true: a 4-bit or an 8-bit bitsandbytes checkpoint");
    for (const std::string& name : files.names()) {
      const TensorView& t = *files.find(name);
      if (!name.ends_with(".weight")) continue;
      const std::string p = name.substr(0, name.size() - 6);
      if (eight) {
        if (t.dtype != "I8") continue;
        add(p, t, [&](Module& m) { add_bnb8(files, t, p, m); });
        if (files.find(p + "weight_format")) out->hidden_.insert(p + "weight_format");
        continue;
      }
      const TensorView* state = files.find(name + ".quant_state.bitsandbytes__nf4");
      if (!state) state = files.find(name + ".quant_state.bitsandbytes__fp4");
      if (t.dtype != "U8" && !state) continue;
      if (!state)
        throw UserError("quantised tensor '" + name + "' has no '" + name +
                            ".quant_state.bitsandbytes__nf4' (or __fp4) beside it",
                        {t.file, 0, 0, name + ".quant_state.bitsandbytes__nf4"},
                        "bitsandbytes' packed quant_state");
      add(p, t, [&](Module& m) { add_bnb4(c, files, t, p, *state, m); });
      const Module& m = *out->modules_[name];
      for (const TensorView* x : {state, m.quant_map, m.nested_absmax, m.nested_quant_map})
        if (x) out->hidden_.insert(x->name);
    }
  }
  if (out->modules_.empty())
    throw UserError("config.json's quantization_config names " + method +
                        " but no weights of the checkpoint are quantised that way",
                    {cfg_path.string(), 0, 0, "$.quantization_config.quant_method"},
                    method == "gptq" || method == "awq" ? "<module>.qweight tensors"
                                                        : "quantised <module>.weight tensors");
  return out;
}

TensorView QuantizedWeights::dequantised(const std::string& name) const {
  auto it = modules_.find(name);
  if (it == modules_.end()) return {};
  const Module& m = *it->second;
  if (m.kind == Module::Kind::kBnb4) return owned_view(name, m, bnb4_values(m));
  if (m.kind == Module::Kind::kBnb8) return owned_view(name, m, bnb8_values(m));
  quant::ScaleGrid grid;
  const bool transposed_scales = m.kind == Module::Kind::kGptq || m.kind == Module::Kind::kAwq;
  const std::vector<float> s = float_values(*m.scales);
  if (transposed_scales) {
    // GPTQ's and AWQ's scales are [groups, out]: the grid is [out, groups].
    grid.grid_rows = m.rows;
    grid.grid_cols = m.scales->shape[0];
    grid.scales.resize(s.size());
    for (int64_t g = 0; g < grid.grid_cols; ++g)
      for (int64_t o = 0; o < m.rows; ++o) grid.scales[o * grid.grid_cols + g] = s[g * m.rows + o];
    grid.block_rows = 1;
  } else {
    grid.scales = s;
    grid.grid_rows = ceil_div(m.rows, m.block_rows);
    grid.grid_cols = ceil_div(m.cols, m.block_cols);
    grid.block_rows = m.block_rows;
  }
  grid.block_cols = m.block_cols;
  grid.zeros = zero_points(m, grid.grid_rows, grid.grid_cols);
  if (m.g_idx) grid.g_idx = quant::ints_of(*m.g_idx);
  for (int64_t g : grid.g_idx)
    if (g < 0 || g >= grid.grid_cols)
      throw bad_tensor(*m.g_idx, "holds group " + std::to_string(g),
                       "group indices below " + std::to_string(grid.grid_cols));
  // The packages compute in their scales' dtype (GPTQ, AWQ, compressed-tensors); transformers'
  // FP8 dequantisation multiplies in float32 and rounds the product to the model's dtype.
  const bool fp8 = method_ == "fp8";
  grid.dtype = fp8 ? "F32" : m.scales->dtype;
  std::vector<float> values = quant::dequantise(unpacked(m), m.rows, m.cols, grid);
  if (fp8)
    for (float& x : values) x = quant::round_to_dtype(x, model_round_);
  return owned_view(name, m, std::move(values));
}

std::vector<std::string> QuantizedWeights::names(const std::vector<std::string>& stored) const {
  std::vector<std::string> out;
  for (const auto& n : stored)
    if (!hidden_.count(n) && !modules_.count(n)) out.push_back(n);
  for (const auto& [n, m] : modules_) out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lmeval::hf
