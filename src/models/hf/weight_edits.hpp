// Changes made to a checkpoint's tensors as they are loaded: a PEFT adapter's replaced tensors and
// LoRA products (peft=), another model's tensors added (delta=). Computed in float32, below the
// architectures: the transformer sees an edited tensor as any other. No torch here.
#pragma once

#include <string>
#include <vector>

#include "models/hf/checkpoint.hpp"

namespace lmeval::hf {

struct TensorEdit {
  enum class Kind {
    kReplace,    // the tensor becomes `a` (a PEFT adapter's modules_to_save, trained biases)
    kAdd,        // += scale · a (delta=; a LoRA bias: scale · lora_B.bias)
    kLowRank,    // += scale · b·a, with a = lora_A [r, in] and b = lora_B [out, r]
    kScale,      // ×= a along `axis`: IA3's vector, one factor per row (0) or per column (1)
    kHadamard,   // += scale · (a·b) ⊙ (c·d): LoHa's hada_w1_a/b and hada_w2_a/b
    kKronecker,  // += scale · kron(a or a·b, c or c·d): LoKr's lokr_w1(_a/_b), lokr_w2(_a/_b)
  };
  Kind kind = Kind::kAdd;
  const TensorView* a = nullptr;
  const TensorView* b = nullptr;
  const TensorView* c = nullptr;  // kHadamard, kKronecker
  const TensorView* d = nullptr;
  double scale = 1.0;
  // kLowRank: the product is stored transposed, [in, out] (GPT-2's Conv1D weights; embeddings,
  // whose lora_embedding_A is [r, vocab] and lora_embedding_B [dim, r]).
  bool transposed = false;
  // kLowRank with DoRA: then each output row (each column when transposed) is rescaled to
  // magnitude / its L2 norm, the norm of W + scale·b·a, as peft's DoraLinearLayer.get_weight_norm.
  const TensorView* magnitude = nullptr;
  // kScale: 0 scales rows (a 1-D tensor's elements), 1 columns.
  int axis = 0;
  // kAdd: "F16" / "BF16" rounds both operands and the sum to that dtype, as torch's in-place add
  // of tensors of that dtype does (HFLM adds delta weights to a model loaded in it).
  std::string round_to;
};

// True for the dtypes edits read (F32, F16, BF16, F64).
bool editable_dtype(const std::string& dtype);

// The elements of a view of an editable dtype as float32 (RuntimeError for another dtype).
std::vector<float> float_values(const TensorView& t);

// The tensor's values after its edits, in order, as float32 row-major. Shapes are checked by the
// code that makes the edits; a mismatch here is a RuntimeError.
std::vector<float> apply_edits(const TensorView& base, const std::vector<TensorEdit>& edits);

// Rounding a float32 value to float16 / bfloat16 and back (round to nearest even, as torch).
float round_to_half(float v);
float round_to_bfloat16(float v);

}  // namespace lmeval::hf
