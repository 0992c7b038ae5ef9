// Float32 arithmetic of tensor edits, with torch's float16/bfloat16 conversions (c10/util/Half.h,
// c10/util/BFloat16.h: round to nearest even).
#include "models/hf/weight_edits.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

namespace {

namespace we {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float half_to_float(uint16_t h) {
  const uint32_t w = static_cast<uint32_t>(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = float_of((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = float_of((two_w >> 17) | (126u << 23)) - 0.5f;
  return float_of(sign | (two_w < (1u << 27) ? bits_of(denormalized) : bits_of(normalized)));
}

uint16_t float_to_half(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = bits_of(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1_w & 0xFF000000u;
  if (bias < 0x71000000u) bias = 0x71000000u;
  base = float_of((bias >> 1) + 0x07800000u) + base;
  const uint32_t b = bits_of(base);
  const uint32_t nonsign = ((b >> 13) & 0x00007C00u) + (b & 0x00000FFFu);
  return static_cast<uint16_t>((sign >> 16) | (shl1_w > 0xFF000000u ? 0x7E00u : nonsign));
}

uint16_t float_to_bf16(float f) {
  if (std::isnan(f)) return 0x7FC0;
  const uint32_t u = bits_of(f);
  return static_cast<uint16_t>((u + (((u >> 16) & 1u) + 0x7FFFu)) >> 16);
}

// The elements of a view as float32.
std::vector<float> to_float(const TensorView& t) {
  const size_t esize = safetensors_dtype_size(t.dtype);
  const size_t n = esize ? t.nbytes / esize : 0;
  std::vector<float> out(n);
  const std::byte* p = t.data;
  if (t.dtype == "F32") {
    if (n) std::memcpy(out.data(), p, n * 4);
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    const bool half = t.dtype == "F16";
    for (size_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = half ? half_to_float(h) : float_of(static_cast<uint32_t>(h) << 16);
    }
  } else if (t.dtype == "F64") {
    for (size_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      out[i] = static_cast<float>(d);
    }
  } else {
    throw RuntimeError("tensor '" + t.name + "' of dtype " + t.dtype + " cannot be edited");
  }
  return out;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void require(bool ok, const TensorView& base, const char* what) {
  if (!ok) throw RuntimeError("edit of tensor '" + base.name + "': " + what);
}

// w [rows, cols] += scale · (b·a) or its transpose. a: [r, k], b: [m, r]; (b·a) is [m, k].
// Either way row x of the product is Σ_j coef[x][j] · basis[j][:]: coef = b and basis = a, or,
// transposed, coef = aᵀ and basis = bᵀ. Rows are shared out over the machine's threads.
void add_low_rank(std::vector<float>& w, const TensorView& base, const TensorEdit& e) {
  const std::vector<float> a = to_float(*e.a), b = to_float(*e.b);
  require(e.a->shape.size() == 2 && e.b->shape.size() == 2 && base.shape.size() == 2, base,
          "low-rank factors and weight are not matrices");
  const int64_t r = e.a->shape[0], k = e.a->shape[1], m = e.b->shape[0];
  require(e.b->shape[1] == r, base, "lora_A and lora_B ranks differ");
  const int64_t rows = base.shape[0], cols = base.shape[1];
  if (!e.transposed)
    require(rows == m && cols == k, base, "the product's shape is not the weight's");
  else
    require(rows == k && cols == m, base, "the transposed product's shape is not the weight's");
  std::vector<float> coef(static_cast<size_t>(rows * r)), basis(static_cast<size_t>(r * cols));
  for (int64_t x = 0; x < rows; ++x)
    for (int64_t j = 0; j < r; ++j) coef[x * r + j] = e.transposed ? a[j * k + x] : b[x * r + j];
  for (int64_t j = 0; j < r; ++j)
    for (int64_t c = 0; c < cols; ++c)
      basis[j * cols + c] = e.transposed ? b[c * r + j] : a[j * k + c];
  const auto scale = static_cast<float>(e.scale);
  auto run = [&](int64_t from, int64_t to) {
    std::vector<float> acc(static_cast<size_t>(cols));
    for (int64_t x = from; x < to; ++x) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t j = 0; j < r; ++j) {
        const float cj = coef[x * r + j];
        const float* bj = basis.data() + j * cols;
        for (int64_t c = 0; c < cols; ++c) acc[c] += cj * bj[c];
      }
      float* wx = w.data() + x * cols;
      for (int64_t c = 0; c < cols; ++c) wx[c] += scale * acc[c];
    }
  };
  const int64_t work = rows * cols * r;
  const auto threads = static_cast<int64_t>(
      std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), 64u));
  if (work < (int64_t{1} << 22) || threads == 1 || rows < threads) {
    run(0, rows);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back(run, rows * t / threads, rows * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

// DoRA's merge (peft's DoraLinearVariant.merge_safe): W' = (m / ‖W'‖) · W' per output, the norm
// taken in float32 over the input dimension. peft detaches the norm from the gradient, which
// changes nothing at inference.
void rescale_to_magnitude(std::vector<float>& w, const TensorView& base, const TensorEdit& e) {
  const std::vector<float> m = to_float(*e.magnitude);
  const int64_t rows = base.shape[0], cols = base.shape[1];
  const int64_t outputs = e.transposed ? cols : rows, inputs = e.transposed ? rows : cols;
  require(static_cast<int64_t>(m.size()) == outputs, base,
          "the DoRA magnitude does not have one value per output");
  auto at = [&](int64_t o, int64_t i) -> float& {
    return e.transposed ? w[i * cols + o] : w[o * cols + i];
  };
  for (int64_t o = 0; o < outputs; ++o) {
    double sq = 0;
    for (int64_t i = 0; i < inputs; ++i) sq += static_cast<double>(at(o, i)) * at(o, i);
    const float factor = m[o] / static_cast<float>(std::sqrt(sq));
    for (int64_t i = 0; i < inputs; ++i) at(o, i) *= factor;
  }
}

void scale_along(std::vector<float>& w, const TensorView& base, const TensorEdit& e) {
  const std::vector<float> f = to_float(*e.a);
  const int64_t rows = base.shape.empty() ? 1 : base.shape[0];
  const int64_t cols = base.shape.size() == 2 ? base.shape[1] : 1;
  require(base.shape.size() == 1 || base.shape.size() == 2, base,
          "scaled tensor is not 1-D or 2-D");
  require(static_cast<int64_t>(f.size()) == (e.axis == 0 ? rows : cols), base,
          "the scaling vector does not fit the tensor");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) w[r * cols + c] *= f[e.axis == 0 ? r : c];
}

// A factor of LoHa / LoKr: x, or x·y when y is given. {rows, cols, values}.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
};
Matrix product(const TensorView& base, const TensorView* x, const TensorView* y) {
  require(x->shape.size() == 2 && (!y || y->shape.size() == 2), base, "factors are not matrices");
  Matrix m{x->shape[0], y ? y->shape[1] : x->shape[1], to_float(*x)};
  if (!y) return m;
  const int64_t inner = x->shape[1];
  require(y->shape[0] == inner, base, "the factors' inner dimensions differ");
  const std::vector<float> yv = to_float(*y);
  std::vector<float> out(static_cast<size_t>(m.rows * m.cols), 0.0f);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t k = 0; k < inner; ++k) {
      const float xik = m.v[i * inner + k];
      for (int64_t j = 0; j < m.cols; ++j) out[i * m.cols + j] += xik * yv[k * m.cols + j];
    }
  m.v = std::move(out);
  return m;
}

// peft's loha make_weight: (w1a·w1b) ⊙ (w2a·w2b) · scale, reshaped to the weight.
void add_hadamard(std::vector<float>& w, const TensorView& base, const TensorEdit& e) {
  const Matrix p = product(base, e.a, e.b), q = product(base, e.c, e.d);
  require(p.rows == q.rows && p.cols == q.cols && p.rows * p.cols == static_cast<int64_t>(w.size()),
          base, "the LoHa product's shape is not the weight's");
  const auto scale = static_cast<float>(e.scale);
  for (size_t i = 0; i < w.size(); ++i) w[i] += p.v[i] * q.v[i] * scale;
}

// peft's lokr make_kron: kron(w1, w2) · scale, reshaped to the weight.
void add_kronecker(std::vector<float>& w, const TensorView& base, const TensorEdit& e) {
  const Matrix k1 = product(base, e.a, e.b), k2 = product(base, e.c, e.d);
  require(base.shape.size() == 2 && k1.rows * k2.rows == base.shape[0] &&
              k1.cols * k2.cols == base.shape[1],
          base, "the LoKr product's shape is not the weight's");
  const int64_t cols = base.shape[1];
  const auto scale = static_cast<float>(e.scale);
  for (int64_t i1 = 0; i1 < k1.rows; ++i1)
    for (int64_t j1 = 0; j1 < k1.cols; ++j1) {
      const float f = k1.v[i1 * k1.cols + j1];
      for (int64_t i2 = 0; i2 < k2.rows; ++i2)
        for (int64_t j2 = 0; j2 < k2.cols; ++j2)
          w[(i1 * k2.rows + i2) * cols + j1 * k2.cols + j2] += f * k2.v[i2 * k2.cols + j2] * scale;
    }
}

float rounded(float v, const std::string& dtype) {
  if (dtype == "F16") return half_to_float(float_to_half(v));
  if (dtype == "BF16") return float_of(static_cast<uint32_t>(float_to_bf16(v)) << 16);
  return v;
}

}  // namespace we

}  // namespace

bool editable_dtype(const std::string& d) {
  return d == "F32" || d == "F16" || d == "BF16" || d == "F64";
}

std::vector<float> float_values(const TensorView& t) { return we::to_float(t); }

float round_to_half(float v) { return we::rounded(v, "F16"); }
float round_to_bfloat16(float v) { return we::rounded(v, "BF16"); }

std::vector<float> apply_edits(const TensorView& base, const std::vector<TensorEdit>& edits) {
  std::vector<float> w = we::to_float(base);
  we::require(static_cast<int64_t>(w.size()) == we::numel(base.shape), base,
              "its bytes do not match its shape");
  for (const TensorEdit& e : edits) {
    switch (e.kind) {
      case TensorEdit::Kind::kReplace:
        we::require(e.a->shape == base.shape, base, "the replacement has another shape");
        w = we::to_float(*e.a);
        break;
      case TensorEdit::Kind::kAdd: {
        we::require(e.a->shape == base.shape, base, "the addend has another shape");
        const std::vector<float> a = we::to_float(*e.a);
        const auto scale = static_cast<float>(e.scale);
        for (size_t i = 0; i < w.size(); ++i)
          w[i] = we::rounded(we::rounded(w[i], e.round_to) + scale * we::rounded(a[i], e.round_to),
                             e.round_to);
        break;
      }
      case TensorEdit::Kind::kLowRank:
        we::add_low_rank(w, base, e);
        if (e.magnitude) we::rescale_to_magnitude(w, base, e);
        break;
      case TensorEdit::Kind::kScale:
        we::scale_along(w, base, e);
        break;
      case TensorEdit::Kind::kHadamard:
        we::add_hadamard(w, base, e);
        break;
      case TensorEdit::Kind::kKronecker:
        we::add_kronecker(w, base, e);
        break;
    }
  }
  return w;
}

}  // namespace lmeval::hf
