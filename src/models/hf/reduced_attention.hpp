// scaled_dot_product_attention in float16/bfloat16 on the CPU as torch 2.15 computes it
// (FlashAttentionKernel.cpp's cpu_flash_attention over MKL's cblas_gemm_f16f16f32 /
// cblas_gemm_bf16bf16f32), bit for bit: reduced_attention.cpp. Internal to src/models/hf.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace lmeval::hf {

// Which call of torch's kernel a batch row's queries belong to. Its sums depend on the call's
// shape (its blocks of queries and keys pick MKL's kernels), not only on the row's own keys.
enum class FlashRow {
  // The queries are the last rows of a prefill over all the call's keys (a forward pass of
  // the whole sequence, as the reference scores a request).
  kPrefill,
  // A decoding step: one query over the row's keys up to its last allowed one.
  kDecode,
  // One query that transformers' generate computes as the last row of the prompt's prefill
  // (lm-eval feeds a prompt's last token with the decoding steps).
  kPromptEnd,
};

// q [B, H, T, D], k and v [B, H, S, D] (float16 or bfloat16, the heads already repeated);
// allow: bool, broadcastable to [B, H, T, S] (undefined: every key); bias: ALiBi in the model
// dtype, broadcastable to [B, H, 1, S] (undefined: none), added to an allowed score as torch adds
// a float mask. rows: per batch row (empty: all kPrefill). call_keys: per batch row, the length
// of a kPrefill row's call in the reference where it exceeds S (empty or 0: S): a prompt's
// prefill without its last token, which the reference's prefill holds (keys past S count as
// masked ones). threads: torch's intra-op threads in the reference, which place its per-thread
// buffers. Returns [B, H, T, D] in q's dtype; with `lse`, also each row's logsumexp [B, H, T]
// (float32, as the kernel's second output).
at::Tensor flash_attention_reduced(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allow, const at::Tensor& bias, double scale,
                                   const std::vector<FlashRow>& rows,
                                   const std::vector<int64_t>& call_keys, int64_t threads,
                                   at::Tensor* lse = nullptr);

// The two products of torch's flash kernel as MKL's half-input gemm sums them (the products of
// float16/bfloat16 values are exact in float32, so only the order of the additions matters).
namespace mkl_half {

// q·k: one query row q [k] of a block of n query rows against keys [i0, i1) of a block of m
// keys, kT the block's keys transposed (k rows of stride ld, key 0 first); out [i1 - i0].
void qk(const float* q, const float* kT, int64_t ld, int64_t k, int64_t m, int64_t n, int64_t i0,
        int64_t i1, bool bf16, float* out);

// p·v: one query row of a block of n rows, dst [m] = (beta ? dst : 0) + p [keys] times v
// [keys, m]; offset: where dst lies in floats from a 64-byte boundary (the small kernel's
// outputs before a 16-byte boundary sum in another order).
void pv(const float* p, const float* v, int64_t keys, int64_t m, int64_t n, bool bf16, bool beta,
        int64_t offset, float* dst);

}  // namespace mkl_half

// torch.matmul of float32 a [..., R, K] by b [..., K, C] on the CPU, as SDPA's math path runs
// it (MLA); `qk`: b is the keys transposed (the small kernel's order differs by layout). ref_*:
// the reference's R, C and K where they exceed the call's (its kernel follows its shape; the
// contraction's products past K are zeros). bmm: batched operands, whose products under 400
// multiply-adds bmm sums in its own loop; false: a 2-D product (F.linear), which is always MKL's.
at::Tensor math_matmul(const at::Tensor& a, const at::Tensor& b, bool qk, int64_t ref_rows = 0,
                       int64_t ref_cols = 0, int64_t ref_k = 0, bool bmm = true);

// torch's default intra-op thread count in the reference's process: LMEVAL_REFERENCE_THREADS,
// else OMP_NUM_THREADS (at most the CPUs), else the physical cores.
int64_t reference_threads();

}  // namespace lmeval::hf
