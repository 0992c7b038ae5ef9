// Batch-invariant float32 CPU kernels of the hf backend.
//
// Why: OpenBLAS's sgemm rounds a row's results differently with the matrix size and the row's
// place in it (its micro-kernels treat some columns of a block differently), so a request's
// score moved with its batch neighbours by up to ~5e-5. Here every output element is computed
// by one fixed sequence of operations that depends only on the element's own inputs and the
// reduction length: a dot product is eight fused multiply-add chains (lane l takes the indices
// congruent to l mod 8, in increasing order) summed as ((l0+l4)+(l2+l6))+((l1+l5)+(l3+l7)).
// Zero-padding the reduction (masked attention probabilities beyond a query's last key) adds
// exact zeros, so a score does not depend on batch size, padding or prefix sharing. The AVX2
// path and the portable path produce the same bits.
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

// True when the AVX2+FMA path is in use (else the portable path).
bool using_avx2();

}  // namespace lmeval::hf::kernels
