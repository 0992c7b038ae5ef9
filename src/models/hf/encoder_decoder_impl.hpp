// EncoderDecoder::Impl: the weights of an encoder-decoder model as the shared encoder and
// decoder blocks run them, and the loader the architecture files (arch/t5.cpp) fill them with.
// Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "models/hf/checkpoint.hpp"
#include "models/hf/encoder_decoder.hpp"

namespace lmeval::hf {

namespace encdec {

using at::Tensor;

struct Attention {
  Tensor q, k, v, o;  // [heads * d_kv, d_model] each, o [d_model, heads * d_kv]; no biases
};

// A block of either stack: pre-norm self-attention, (decoder) pre-norm cross-attention over the
// encoder's output, pre-norm feed-forward; each added to the residual stream.
struct Block {
  Tensor self_norm;
  Attention self_attn;
  Tensor cross_norm;  // decoder only
  Attention cross_attn;
  Tensor ff_norm;
  Tensor wi, wi_gate, wo;  // wi_gate (wi_0) only when gated: wo(act(wi_0 x) * wi_1 x)
};

struct Stack {
  Tensor relative_bias;  // [buckets, heads]: the first block's, shared by every block of the stack
  std::vector<Block> blocks;
  Tensor final_norm;
};

}  // namespace encdec

struct EncoderDecoder::Impl {
  EncoderDecoderConfig cfg;
  at::Device device{at::kCPU};
  at::ScalarType dtype = at::kFloat;
  at::ScalarType softmax_dtype = at::kFloat;
  int64_t n_params = 0;
  at::Tensor shared, lm_head;  // lm_head is shared when the checkpoint has none of its own
  encdec::Stack encoder, decoder;

  at::TensorOptions fopt() const { return at::TensorOptions().dtype(dtype).device(device); }
  at::TensorOptions lopt() const { return at::TensorOptions().dtype(at::kLong).device(device); }
};

// What an architecture file takes its weights with: the first of `names` the checkpoint has,
// of that shape, in the model's dtype on its device.
class EncoderDecoderWeights {
 public:
  EncoderDecoderWeights(EncoderDecoder::Impl& model, const WeightArchive& weights)
      : m(model), cfg(model.cfg), w_(weights) {}
  EncoderDecoder::Impl& m;
  const EncoderDecoderConfig& cfg;
  at::Tensor get(const std::vector<std::string>& names, const std::vector<int64_t>& shape,
                 bool required = true);

 private:
  const WeightArchive& w_;
};

}  // namespace lmeval::hf
