#include "models/hf/few_rows_linear.hpp"

#include <vector>

#include "models/hf/cpu_float32.hpp"
#include "models/hf/kernels.hpp"

namespace lmeval::hf {

at::Tensor few_rows_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  if (!cpu_float32(x) || !cpu_float32(w) || w.dim() != 2 || !w.is_contiguous() || x.dim() < 1 ||
      x.size(-1) != w.size(1) || x.requires_grad() || w.requires_grad())
    return {};
  if (b.defined() &&
      (!cpu_float32(b) || b.dim() != 1 || b.size(0) != w.size(0) || !b.is_contiguous()))
    return {};
  const int64_t k = w.size(1), n = w.size(0);
  const int64_t rows = k > 0 ? x.numel() / k : 0;
  if (rows == 0 || rows > kFewRows) return {};
  const at::Tensor a = x.reshape({rows, k}).contiguous();
  std::vector<int64_t> shape = x.sizes().vec();
  shape.back() = n;
  at::Tensor y = at::empty(shape, x.options());
  kernels::matmul_nt(a.data_ptr<float>(), k, w.data_ptr<float>(), k,
                     b.defined() ? b.data_ptr<float>() : nullptr, y.data_ptr<float>(), n, rows, n,
                     k);
  return y;
}

}  // namespace lmeval::hf
