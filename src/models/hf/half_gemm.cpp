#include "models/hf/half_gemm.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

namespace lmeval::hf::half_gemm {
namespace {

// vec_reduce_all's tree over one 8-float register.
float tree8(const float* v) {
  return ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
}

// Sum of a[l] * b[l * ldb], left to right.
float strided_sum1(const float* a, const float* b, int64_t ldb, int64_t k) {
  float s = 0.0f;
  for (int64_t l = 0; l < k; ++l) s += a[l] * b[l * ldb];
  return s;
}

// bmm_out_or_baddbmm_'s threshold on contraction x rows x columns for BLAS.
constexpr int64_t kBmmBlasMinWork = 400;

// Weight rows per work item: a block of W stays in cache while every row of x meets it.
constexpr int64_t kRowsPerBlock = 8;

// Rows [j0, j1) of the row-major [n, k] matrix w (float32, bfloat16 or float16) as float32: w's
// own memory for float32, else converted into buf (exact: every half value is a float). A block
// at a time, so that a product never writes and reads back a float32 copy of the whole weight.
template <typename T>
const float* widen(const T* w, int64_t j0, int64_t j1, int64_t k, std::vector<float>& buf) {
  buf.resize(static_cast<size_t>((j1 - j0) * k));
  const T* src = w + j0 * k;
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(src[i]);
  return buf.data();
}
const float* weight_rows(const at::Tensor& w, int64_t j0, int64_t j1, int64_t k,
                         std::vector<float>& buf) {
  switch (w.scalar_type()) {
    case at::kFloat:
      return w.data_ptr<float>() + j0 * k;
    case at::kBFloat16:
      return widen(w.data_ptr<c10::BFloat16>(), j0, j1, k, buf);
    case at::kHalf:
      return widen(w.data_ptr<c10::Half>(), j0, j1, k, buf);
    default:
      TORCH_CHECK(false, "half_gemm::linear: weights of type ", w.scalar_type());
  }
}

}  // namespace

float dot(const float* a, const float* b, int64_t k) {
  const int64_t k64 = k - k % 64, k16 = k - k % 16;
  float acc[64] = {};
  for (int64_t c = 0; c < k64; c += 64)
    for (int l = 0; l < 64; ++l) acc[l] += a[c + l] * b[c + l];
  for (int r = 0; r < 4; ++r)
    for (int l = 0; l < 8; ++l) acc[8 * r + l] += acc[8 * (r + 4) + l];
  for (int r = 0; r < 2; ++r)
    for (int l = 0; l < 8; ++l) acc[8 * r + l] += acc[8 * (r + 2) + l];
  for (int l = 0; l < 8; ++l) acc[l] += acc[8 + l];
  float out = tree8(acc);
  float tail[8] = {};
  for (int64_t c = k64; c < k16; c += 16) {
    for (int l = 0; l < 8; ++l) tail[l] += a[c + l] * b[c + l];
    for (int l = 0; l < 8; ++l) tail[l] += a[c + 8 + l] * b[c + 8 + l];
  }
  out += tree8(tail);
  for (int64_t c = k16; c < k; ++c) out += a[c] * b[c];
  return out;
}

float strided_sum4(const float* a, const float* b, int64_t ldb, int64_t k) {
  float s[4] = {};
  const int64_t k4 = k - k % 4;
  for (int64_t l = 0; l < k4; l += 4)
    for (int j = 0; j < 4; ++j) s[j] += a[l + j] * b[(l + j) * ldb];
  for (int64_t l = k4; l < k; ++l) s[0] += a[l] * b[l * ldb];
  return ((s[0] + s[1]) + s[2]) + s[3];
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  const int64_t k = x.size(-1), n = w.size(0);
  TORCH_CHECK(w.dim() == 2 && w.size(1) == k, "half_gemm::linear: weight ", w.sizes(),
              " does not match input ", x.sizes());
  const at::Tensor xf = x.reshape({-1, k}).to(at::kFloat).contiguous();
  const at::Tensor wc = w.contiguous();
  const at::Tensor bf = b.defined() ? b.to(at::kFloat).contiguous() : b;
  const int64_t m = xf.size(0);
  at::Tensor out = at::empty({m, n}, xf.options());
  const float* xp = xf.data_ptr<float>();
  const float* bp = bf.defined() ? bf.data_ptr<float>() : nullptr;
  float* op = out.data_ptr<float>();
  const int64_t blocks = (n + kRowsPerBlock - 1) / kRowsPerBlock;
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, m * k * 8));
  at::parallel_for(0, blocks, grain, [&](int64_t b0, int64_t b1) {
    std::vector<float> buf;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t j0 = blk * kRowsPerBlock, j1 = std::min(n, j0 + kRowsPerBlock);
      const float* wb = weight_rows(wc, j0, j1, k, buf);  // rows j0..j1-1
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = j0; j < j1; ++j) {
          float v = dot(xp + i * k, wb + (j - j0) * k, k);
          if (bp != nullptr) v += bp[j];
          op[i * n + j] = v;
        }
    }
  });
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = n;
  return out.view(shape).to(x.scalar_type());
}

at::Tensor matmul(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() >= 2 && b.dim() >= 2 && a.size(-1) == b.size(-2),
              "half_gemm::matmul: shapes ", a.sizes(), " and ", b.sizes(), " do not multiply");
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  // bmm (a batched b) multiplies small matrices with its own loop, left to right in float32
  // (bmm_out_or_baddbmm_ / baddbmm_cpu_kernel); otherwise torch picks the kernel from b's layout:
  // unit stride along k is a transposed row-major matrix.
  const bool small = b.dim() >= 3 && k * m * n < kBmmBlasMinWork;
  const bool transposed = !small && b.stride(-2) == 1 && b.size(-1) > 1;
  std::vector<int64_t> batch =
      at::infer_size(a.sizes().slice(0, a.dim() - 2), b.sizes().slice(0, b.dim() - 2));
  std::vector<int64_t> ashape = batch, bshape = batch;
  ashape.insert(ashape.end(), {m, k});
  bshape.insert(bshape.end(), {k, n});
  const at::Tensor af = a.expand(ashape).reshape({-1, m, k}).to(at::kFloat).contiguous();
  // b as [batch, n, k] for the dot, else [batch, k, n]: each reads along k.
  const at::Tensor bf =
      transposed
          ? b.expand(bshape).transpose(-1, -2).reshape({-1, n, k}).to(at::kFloat).contiguous()
          : b.expand(bshape).reshape({-1, k, n}).to(at::kFloat).contiguous();
  const int64_t nb = af.size(0);
  at::Tensor out = at::empty({nb, m, n}, af.options());
  const float* ap = af.data_ptr<float>();
  const float* bp = bf.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t grain = std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(1, m * n * k));
  at::parallel_for(0, nb, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t t = b0; t < b1; ++t) {
      const float* at_ = ap + t * m * k;
      const float* bt = bp + t * n * k;
      float* ot = op + t * m * n;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          ot[i * n + j] = small        ? strided_sum1(at_ + i * k, bt + j, n, k)
                          : transposed ? dot(at_ + i * k, bt + j * k, k)
                                       : strided_sum4(at_ + i * k, bt + j, n, k);
    }
  });
  std::vector<int64_t> shape = batch;
  shape.insert(shape.end(), {m, n});
  return out.view(shape).to(a.scalar_type());
}

}  // namespace lmeval::hf::half_gemm
