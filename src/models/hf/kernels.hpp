// Batch-invariant float32 CPU kernels of the hf backend.
//
// Why: OpenBLAS's sgemm rounds a row's results differently with the matrix size and the row's
// place in it (its micro-kernels treat some columns of a block differently), so a request's
// score moved with its batch neighbours by up to ~5e-5. Here every output element is computed
// by one fixed sequence of operations that depends only on the element's own inputs and the
// reduction length: a dot product is eight fused multiply-add chains (lane l takes the indices
// congruent to l mod 8, in increasing order) summed as ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
// Zero-padding the reduction (masked attention probabilities beyond a query's last key) adds
// exact zeros, so a score does not depend on batch size, padding or prefix sharing. The
// attention's products (matmul_nn_acc) are instead one fused multiply-add chain per element
// over the reduction index in increasing order (the outer-product form that runs at full
// vector width on short reductions such as a head's 64 dimensions); zeros leave such a chain
// exactly as it was too. The AVX-512 forms (using_avx512), the AVX2 path and the portable path
// produce the same bits (tests/models/hf/kernels_test.cpp).
#pragma once

#include <cstdint>

namespace lmeval::hf::kernels {

// C[i][j] = dot(A[i], W[j]) (+ bias[j]) for i < m, j < n over k elements; rows of A, W and C
// start lda, ldw, ldc floats apart. W is in nn.Linear layout [out][in]. Uses the ATen thread
// pool over the columns when the work is large enough.
void matmul_nt(const float* a, int64_t lda, const float* w, int64_t ldw, const float* bias,
               float* c, int64_t ldc, int64_t m, int64_t n, int64_t k);

// The dot product matmul_nt computes for one element.
float dot(const float* a, const float* b, int64_t k);

// Sum of x[0..n) with the same lane structure as dot.
float sum(const float* x, int64_t n);

// C[i][j] += sum over p < k of A[i][p] * B[p][j] for i < m, j < n; B is row-major [k][n]
// (rows ldb floats apart). Each element is one fused multiply-add chain over p in increasing
// order, starting from C's value: a zero A[i][p] leaves the element exactly as it was (finite
// B), and splitting k into consecutive calls gives the same bits as one call. The attention's
// products (scores = Q K^T with K transposed, then P V) use it; runs on the calling thread.
void matmul_nn_acc(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                   int64_t m, int64_t n, int64_t k);

// x[i] = exp(x[i] - shift) for i < n, each element by the same float32 polynomial (relative
// error ~2e-7; 0 below exp(-87.3)), whatever its place in x.
void exp_shifted(float* x, int64_t n, float shift);

// exp_shifted, returning the results' sum (as sum adds them).
float exp_shifted_sum(float* x, int64_t n, float shift);

// Largest of x[0..n) (n > 0).
float max(const float* x, int64_t n);

// x = softmax(x) over x[0..n) (n > 0), in place: exp_shifted by the largest element, then each
// element times the reciprocal of their sum.
void softmax(float* x, int64_t n);

// softmax with the largest element already known (`largest`, e.g. from the pass that wrote x):
// the same bits.
void softmax_with_max(float* x, int64_t n, float largest);

// Whether the processor has AVX2 and FMA (whatever set_avx2_for_testing says): kernels with no
// portable path (decode_attention) run only then.
bool cpu_has_avx2_fma();

// True when the AVX2+FMA path is in use (else the portable path).
bool using_avx2();

// Tests: switch the AVX2 path off (or back on where supported) to compare both paths' bits.
void set_avx2_for_testing(bool on);
// True where kernels with an AVX-512 form (AVX-512 F and DQ: matmul_nn_acc, exp_shifted_sum,
// decode_attention's scores of 8-dimension heads) use it: the same bits as their AVX2 form, fewer
// instructions.
bool using_avx512();
// Tests: switch the AVX-512 forms off (or back on where supported) to compare their bits.
void set_avx512_for_testing(bool on);

}  // namespace lmeval::hf::kernels
