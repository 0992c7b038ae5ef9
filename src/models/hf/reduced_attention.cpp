// scaled_dot_product_attention in float16/bfloat16 on the CPU, as torch 2.15's CPU flash
// attention (FlashAttentionKernel.cpp, cpu_flash_attention) rounds it: which transformers runs
// for every family that supports SDPA (HFLM passes no attn_implementation). Every order below
// was measured against torch 2.15 (pip wheel, MKL 2024.2) on an AMD EPYC CPU with
// ATEN_CPU_CAPABILITY=avx2: scripts/probe_half_sdpa_order.py, its Python model of this file,
// gives torch's bits on every output of prompts of 9 to 800 rows and decoding steps over 7 to
// 1,000 keys, head sizes 8 to 256, in both dtypes, and with 16-float vectors against torch's
// AVX-512 build (docs/fidelity.md, "torch's flash attention, block by block").
//
// The kernel splits a call's queries into blocks of 32, 64 or 256 rows (by the call's length)
// and its keys into blocks of 512. Per pair of blocks it multiplies q·k and p·v with MKL's
// half-input gemm, whose summation order depends on the block's shape: a block of at most 3
// query rows or at most 11 keys takes MKL's small kernel (4-float lanes; for p·v, the first
// outputs before a 16-byte boundary of the output buffer in another order), a larger one its
// packed kernel (products added one after another, contractions over 192 split in halves or in
// blocks of 192). The scores are scaled (fused with a float mask: ALiBi), exponentiated by
// Vectorized<float>::fexp_u20 (a cubic approximation of 2^x) over whole 8-float vectors and by
// ::exp in double over the rest, and summed in the kernel's three vector accumulators; the
// exponentials are rounded to the model dtype before they multiply v; blocks after the first
// rescale the running sum with a fused multiply-add. The output is the float32 sum times the
// reciprocal of the row's sum, rounded once.
#include "models/hf/reduced_attention.hpp"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/Parallel.h>

#include "models/hf/transformer_impl.hpp"

namespace lmeval::hf {

namespace {

constexpr int64_t kKeyBlock = 512;  // cpu_flash_attention's kv_split_size
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Vectorized<float>::size() of the kernels torch dispatches to on this CPU: 16 floats where it
// picks its AVX512 build (avx512f/bw/vl/dq), else 8 (AVX2, DEFAULT, and NEON's pair of
// registers). ATEN_CPU_CAPABILITY picks a build as torch's compute_cpu_capability does: "avx2"
// or "default" the 8-float ones, "avx512" the 16-float one where the CPU has it; read on every
// call, so that a process which sets it before scoring is followed.
int64_t vector_width() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool avx512 =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  if (const char* env = std::getenv("ATEN_CPU_CAPABILITY")) {
    const std::string_view e(env);
    if (e == "avx2" || e == "default") return 8;
  }
  return avx512 ? 16 : 8;
#else
  return 8;
#endif
}

// Vectorized<float>::fexp_u20 (vec512_float.h / vec256_float.h), one lane: 2^(x·log2 e) with
// the fraction's 2^f - f approximated by a cubic and the result assembled in the exponent bits.
float fexp_u20(float x) {
  const float log2e = std::bit_cast<float>(0x3fb8aa3bU);
  const float ln_flt_min = std::bit_cast<float>(0xc2aeac50U);
  const float ln_flt_max = std::bit_cast<float>(0x42b17218U);
  if (std::isnan(x)) return std::bit_cast<float>(0x80000000U);  // cvtt of NaN: INT_MIN
  if (x < ln_flt_min) return 0.0f;                              // -inf (masked keys) too
  if (x > ln_flt_max) return std::numeric_limits<float>::infinity();
  float src = x * log2e;
  const float frac = src - std::floor(src);
  float res = std::fma(frac, -0.079204240219773236f, -0.22433836478672356f);
  res = std::fma(frac, res, 0.30354260500649682f);
  res = std::fma(frac, res, 0.00010703434948458272f);
  src = src - res;
  const float t = std::fma(8388608.0f, src, 8388608.0f * 127.0f);
  return std::bit_cast<float>(static_cast<int32_t>(t));
}

// MKL's packed gemm splits a contraction longer than 192: two halves (the odd one out added
// last) up to 384, blocks of 192 beyond. Each block is summed from zero and added to the output.
std::vector<int64_t> contraction_blocks(int64_t n) {
  const int64_t count = (n + 191) / 192;
  if (count <= 1) return {n};
  if (count == 2) {
    const int64_t h = n / 2;
    return n % 2 ? std::vector<int64_t>{h, h, 1} : std::vector<int64_t>{h, h};
  }
  std::vector<int64_t> out;
  for (int64_t r = n; r > 0; r -= 192) out.push_back(std::min<int64_t>(192, r));
  return out;
}

// A block of this shape (rows of the output by columns) takes MKL's small kernel.
bool small_gemm(int64_t m, int64_t n) { return m <= 11 || n <= 3; }

// The scores of one query row q [D] against keys [i0, i1) of the block starting at key n0 (keys
// transposed: kT [D, S]), in one of MKL's orders for q·k (TN, m = keys, n = query rows).
enum class QkOrder { kPacked, kLanes4, kTwoLanes4 };
void block_scores(const float* q, const float* kT, int64_t S, int64_t D, int64_t n0, int64_t i0,
                  int64_t i1, QkOrder order, float* out) {
  thread_local std::vector<float> scratch;
  const int64_t n = i1 - i0;
  if (n <= 0) return;
  const float* kb = kT + n0 + i0;
  auto x = [&](int64_t l, int64_t i) { return q[l] * kb[l * S + i]; };
  if (order == QkOrder::kPacked) {
    scratch.assign(static_cast<size_t>(n), 0.0f);
    float* part = scratch.data();
    int64_t off = 0;
    bool first = true;
    for (const int64_t len : contraction_blocks(D)) {
      std::fill(part, part + n, 0.0f);
      for (int64_t l = off; l < off + len; ++l)
        for (int64_t i = 0; i < n; ++i) part[i] += x(l, i);
      for (int64_t i = 0; i < n; ++i) out[i] = first ? part[i] : out[i] + part[i];
      first = false;
      off += len;
    }
    return;
  }
  // Four lanes (product l into lane l % 4), added (l0 + l2) + (l1 + l3), the rest after; the
  // two-register form keeps products l % 8 < 4 and l % 8 >= 4 apart and adds them lane by lane.
  const bool two = order == QkOrder::kTwoLanes4;
  const int64_t step = two ? 8 : 4, whole = D - D % step;
  scratch.assign(static_cast<size_t>(8 * n), 0.0f);
  float* L = scratch.data();  // [8][n]: lanes 0-3, then the second register's
  for (int64_t l = 0; l < whole; ++l) {
    float* lane = L + ((l % step) % 8) * n;
    for (int64_t i = 0; i < n; ++i) lane[i] += x(l, i);
  }
  for (int64_t i = 0; i < n; ++i) {
    float v[4];
    for (int c = 0; c < 4; ++c) v[c] = two ? L[c * n + i] + L[(c + 4) * n + i] : L[c * n + i];
    float acc = (v[0] + v[2]) + (v[1] + v[3]);
    for (int64_t l = whole; l < D; ++l) acc += x(l, i);
    out[i] = acc;
  }
}

// dst [D] (+)= p [n] times v rows [n, D] (stride D) in one of MKL's orders for p·v (NN,
// m = D, n = query rows); `beta`: dst holds the sum so far, which the kernel starts from.
enum class PvOrder { kPacked, kSmall, kGroups4 };
void block_values(const float* p, const float* v, int64_t n, int64_t D, PvOrder order, bool beta,
                  int64_t peel, float* dst) {
  thread_local std::vector<float> scratch;
  if (!beta) std::fill(dst, dst + D, 0.0f);
  if (order == PvOrder::kPacked) {
    scratch.assign(static_cast<size_t>(D), 0.0f);
    float* part = scratch.data();
    int64_t off = 0;
    bool first = !beta;
    for (const int64_t len : contraction_blocks(n)) {
      std::fill(part, part + D, 0.0f);
      for (int64_t i = off; i < off + len; ++i)
        for (int64_t d = 0; d < D; ++d) part[d] += p[i] * v[i * D + d];
      for (int64_t d = 0; d < D; ++d) dst[d] = first ? part[d] : dst[d] + part[d];
      first = false;
      off += len;
    }
    return;
  }
  if (order == PvOrder::kGroups4) {
    // bfloat16, one row: ((x0 + x2) + (x1 + x3)) per 4 keys, then the last n mod 4 keys from
    // the last one back.
    const int64_t whole = n - n % 4;
    for (int64_t i = 0; i < whole; i += 4)
      for (int64_t d = 0; d < D; ++d)
        dst[d] += (p[i] * v[i * D + d] + p[i + 2] * v[(i + 2) * D + d]) +
                  (p[i + 1] * v[(i + 1) * D + d] + p[i + 3] * v[(i + 3) * D + d]);
    for (int64_t i = n - 1; i >= whole; --i)
      for (int64_t d = 0; d < D; ++d) dst[d] += p[i] * v[i * D + d];
    return;
  }
  // The small kernel: one product after another, except the outputs before the buffer's next
  // 16-byte boundary, which per 8 keys add the first 4 one by one and the other 4 summed on their
  // own, and the last n mod 8 one by one.
  scratch.assign(dst, dst + std::min(peel, D));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 0; d < D; ++d) dst[d] += p[i] * v[i * D + d];
  const int64_t whole = n - n % 8;
  for (int64_t d = 0; d < std::min(peel, D); ++d) {
    float acc = scratch[static_cast<size_t>(d)];
    for (int64_t g = 0; g < whole; g += 8) {
      for (int64_t i = g; i < g + 4; ++i) acc += p[i] * v[i * D + d];
      float t = 0.0f;
      for (int64_t i = g + 4; i < g + 8; ++i) t += p[i] * v[i * D + d];
      acc += t;
    }
    for (int64_t i = whole; i < n; ++i) acc += p[i] * v[i * D + d];
    dst[d] = acc;
  }
}

// The exponentials of one block row (x = score - max) and their sum, as the kernel's
// _exp_reduce_sum_fusion_kernel adds them: whole 2w-key groups into two w-lane accumulators
// (first and second half), a remaining whole vector into a third, ((third + first) + second),
// the lanes by halving, then the keys past the last whole vector (exp in double) one by one.
float exp_row(const float* x, int64_t n, float* p) {
  const int64_t w = vector_width(), nv = n - n % w, n2 = n - n % (2 * w);
  float a[16] = {}, b[16] = {}, c[16] = {};
  for (int64_t j = 0; j < nv; ++j) p[j] = fexp_u20(x[j]);
  for (int64_t j = nv; j < n; ++j) p[j] = static_cast<float>(std::exp(static_cast<double>(x[j])));
  for (int64_t t = 0; t < n2; t += 2 * w)
    for (int64_t l = 0; l < w; ++l) {
      a[l] += p[t + l];
      b[l] += p[t + w + l];
    }
  for (int64_t t = n2; t < nv; t += w)
    for (int64_t l = 0; l < w; ++l) c[l] += p[t + l];
  float lane[16];
  for (int64_t l = 0; l < w; ++l) lane[l] = (c[l] + a[l]) + b[l];
  for (int64_t h = w / 2; h >= 1; h /= 2)
    for (int64_t l = 0; l < h; ++l) lane[l] += lane[l + h];
  float sum = lane[0];
  for (int64_t j = nv; j < n; ++j) sum += p[j];
  return sum;
}

float round_to(float x, bool bf16) {
  return bf16 ? static_cast<float>(c10::BFloat16(x)) : static_cast<float>(c10::Half(x));
}

int64_t physical_cores() {
  std::set<std::pair<std::string, std::string>> cores;
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos)
      continue;
    std::ifstream pkg(e.path() / "topology" / "physical_package_id"),
        core(e.path() / "topology" / "core_id");
    std::string a, b;
    if (pkg >> a && core >> b) cores.insert({a, b});
  }
  if (!cores.empty()) return static_cast<int64_t>(cores.size());
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

}  // namespace

// a [..., R, K] times b [..., K, C] (the same leading dimensions), float32, as torch.matmul of
// float32 tensors on the CPU sums it: SDPA's math path (MLA below: values narrower than the
// queries rule out the flash kernel). Measured against torch.matmul (docs/fidelity.md): bmm
// multiplies a matrix under 400 multiply-adds in its own loop (one product after another, each
// rounded); a larger one in MKL's sgemm, whose packed kernel (at least 12 columns and 4 rows)
// adds the products with fused multiply-adds one after another, a contraction over 192 split as
// for the half inputs, and whose small kernel takes q·k (`qk`: b is keys transposed) of 2 or more
// rows in the half inputs' 4-lane orders with separate roundings, and one query's q·k in MKL's
// gemv (below). Not reproduced, taken as the loop: a small p·v of 2 or 3 rows; one row's p·v is
// the loop's order.
Tensor math_matmul(const Tensor& a, const Tensor& b, bool qk, int64_t ref_rows, int64_t ref_cols,
                   int64_t ref_k, bool bmm) {
  const Tensor ac = a.to(at::kFloat).contiguous(), bc = b.to(at::kFloat).contiguous();
  const int64_t R = ac.size(-2), K = ac.size(-1), C = bc.size(-1);
  TORCH_CHECK(
      bc.size(-2) == K && ac.sizes().slice(0, ac.dim() - 2) == bc.sizes().slice(0, bc.dim() - 2),
      "math_matmul: shapes ", ac.sizes(), " and ", bc.sizes());
  std::vector<int64_t> shape = ac.sizes().vec();
  shape.back() = C;
  Tensor out = at::zeros(shape, ac.options());
  if (K == 0 || C == 0 || R == 0) return out;
  const float* ap = ac.data_ptr<float>();
  const float* bp = bc.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const int64_t rows = ac.numel() / K;
  // The reference's shape, which picks the kernel (at least the call's own).
  const int64_t Rr = std::max(R, ref_rows), Cr = std::max(C, ref_cols), Kr = std::max(K, ref_k);
  const bool blas = !bmm || Rr * Cr * Kr >= 400;
  const bool packed = blas && !small_gemm(Cr, Rr);
  const bool lanes = blas && !packed && qk && Rr >= 2;
  const bool gemv = blas && qk && Rr == 1;
  const std::vector<int64_t> parts = packed ? contraction_blocks(Kr) : std::vector<int64_t>{Kr};
  at::parallel_for(0, rows, std::max<int64_t>(1, 32768 / (K * C)), [&](int64_t begin, int64_t end) {
    std::vector<float> part(static_cast<size_t>(C));
    for (int64_t r = begin; r < end; ++r) {
      const float* ar = ap + r * K;
      const float* bm = bp + (r / R) * K * C;
      float* orow = op + r * C;
      if (gemv) {
        // MKL's gemv: a row's first 4 products summed into lane 0, then key rows in whole groups
        // of 4 in 4 lanes, the others 8 products a step, the even ones of them in two registers,
        // and the products past the last whole step one by one; each product rounded.
        const int64_t groups = Cr - Cr % 4, head = std::min<int64_t>(4, K);
        for (int64_t c = 0; c < C; ++c) {
          auto x = [&](int64_t k) { return ar[k] * bm[k * C + c]; };
          float a4[4] = {}, b4[4] = {};
          for (int64_t k = 0; k < head; ++k) a4[0] += x(k);
          const bool tail = c >= groups, two = tail && (c - groups) % 2 == 0;
          const int64_t step = tail ? 8 : 4, whole = head + (K - head) / step * step;
          for (int64_t k = head; k < whole; ++k) {
            const int64_t i = (k - head) % step;
            if (two && i >= 4)
              b4[i - 4] += x(k);
            else
              a4[i % 4] += x(k);
          }
          float v[4];
          for (int i = 0; i < 4; ++i) v[i] = two ? a4[i] + b4[i] : a4[i];
          float acc = (v[0] + v[2]) + (v[1] + v[3]);
          for (int64_t k = whole; k < K; ++k) acc += x(k);
          orow[c] = acc;
        }
        continue;
      }
      if (lanes) {
        // Column c is key c: keys in whole groups of 4 sum in 4 lanes, the rest in two
        // registers (block_scores' orders, with each product rounded).
        const int64_t split = Cr - Cr % 4;
        for (int64_t c = 0; c < C; ++c) {
          const bool two = c >= split;
          const int64_t step = two ? 8 : 4, whole = K - K % step;
          float lane[8] = {};
          for (int64_t k = 0; k < whole; ++k) lane[k % step] += ar[k] * bm[k * C + c];
          float v[4];
          for (int i = 0; i < 4; ++i) v[i] = two ? lane[i] + lane[i + 4] : lane[i];
          float acc = (v[0] + v[2]) + (v[1] + v[3]);
          for (int64_t k = whole; k < K; ++k) acc += ar[k] * bm[k * C + c];
          orow[c] = acc;
        }
        continue;
      }
      int64_t off = 0;
      for (size_t blk = 0; blk < parts.size(); ++blk) {
        std::fill(part.begin(), part.end(), 0.0f);
        for (int64_t k = off; k < std::min(K, off + parts[blk]); ++k) {  // past K: zeros
          const float x = ar[k];
          const float* br = bm + k * C;
          if (packed)
            for (int64_t c = 0; c < C; ++c) part[c] = std::fma(x, br[c], part[c]);
          else
            for (int64_t c = 0; c < C; ++c) part[c] += x * br[c];
        }
        for (int64_t c = 0; c < C; ++c) orow[c] = blk == 0 ? part[c] : orow[c] + part[c];
        off += parts[blk];
      }
    }
  });
  return out;
}

namespace mkl_half {

void qk(const float* q, const float* kT, int64_t ld, int64_t k, int64_t m, int64_t n, int64_t i0,
        int64_t i1, bool bf16, float* out) {
  if (!small_gemm(m, n)) return block_scores(q, kT, ld, k, 0, i0, i1, QkOrder::kPacked, out);
  if (bf16 && (n == 1 || m == 1))
    return block_scores(q, kT, ld, k, 0, i0, i1, QkOrder::kLanes4, out);
  // Key rows in whole groups of 4 take one register of lanes, the rest two.
  const int64_t split = std::clamp<int64_t>(m - m % 4, i0, i1);
  block_scores(q, kT, ld, k, 0, i0, split, QkOrder::kLanes4, out);
  block_scores(q, kT, ld, k, 0, split, i1, QkOrder::kTwoLanes4, out + (split - i0));
}

void pv(const float* p, const float* v, int64_t keys, int64_t m, int64_t n, bool bf16, bool beta,
        int64_t offset, float* dst) {
  const PvOrder order = !small_gemm(m, n) ? PvOrder::kPacked
                        : bf16 && n == 1  ? PvOrder::kGroups4
                                          : PvOrder::kSmall;
  block_values(p, v, keys, m, order, beta, (4 - offset % 4) % 4, dst);
}

}  // namespace mkl_half

int64_t reference_threads() {
  auto positive = [](const char* name) -> int64_t {
    const char* v = std::getenv(name);
    if (!v) return 0;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    return end != v && n > 0 ? n : 0;
  };
  if (const int64_t n = positive("LMEVAL_REFERENCE_THREADS")) return n;
  static const int64_t cores = physical_cores();
  if (const int64_t n = positive("OMP_NUM_THREADS"))
    return std::min<int64_t>(n, std::max<int64_t>(1, std::thread::hardware_concurrency()));
  return cores;
}

at::Tensor flash_attention_reduced(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& allow, const at::Tensor& bias, double scale,
                                   const std::vector<FlashRow>& rows,
                                   const std::vector<int64_t>& call_keys, int64_t threads,
                                   at::Tensor* lse) {
  const auto dt = q.scalar_type();
  TORCH_CHECK(dt == at::kHalf || dt == at::kBFloat16, "flash_attention_reduced: dtype ", dt);
  const bool bf16 = dt == at::kBFloat16;
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), D = q.size(3), S = k.size(2);
  TORCH_CHECK(k.size(3) == D && v.size(3) == D && v.size(2) == S && k.size(0) == B &&
                  v.size(0) == B && k.size(1) == H && v.size(1) == H,
              "flash_attention_reduced: shapes ", q.sizes(), k.sizes(), v.sizes());
  TORCH_CHECK(rows.empty() || static_cast<int64_t>(rows.size()) == B,
              "flash_attention_reduced: ", rows.size(), " row layouts for ", B, " rows");
  const Tensor qf = q.to(at::kFloat).contiguous();
  const Tensor kT = k.to(at::kFloat).transpose(-1, -2).contiguous();  // [B, H, D, S]
  TORCH_CHECK(call_keys.empty() || static_cast<int64_t>(call_keys.size()) == B,
              "flash_attention_reduced: ", call_keys.size(), " call lengths for ", B, " rows");
  // Values padded with zero rows up to the longest call (its keys past S are masked).
  int64_t s_pad = S;
  for (const int64_t n : call_keys) s_pad = std::max(s_pad, n);
  Tensor vf = v.to(at::kFloat).contiguous();
  if (s_pad > S) {
    Tensor padded = at::zeros({B, H, s_pad, D}, vf.options());
    padded.narrow(2, 0, S).copy_(vf);
    vf = padded;
  }
  // [B, H, T, S] views with broadcast strides.
  const Tensor al =
      allow.defined() ? allow.to(at::kBool).contiguous().expand({B, H, T, S}) : Tensor();
  const Tensor bi =
      bias.defined() ? bias.to(dt).to(at::kFloat).contiguous().expand({B, H, T, S}) : Tensor();
  Tensor out = at::empty({B, H, T, D}, qf.options());
  Tensor lse_all = at::empty({B, H, T}, qf.options());
  float* lp = lse_all.data_ptr<float>();
  const float* qp = qf.data_ptr<float>();
  const float* kp = kT.data_ptr<float>();
  const float* vp = vf.data_ptr<float>();
  float* op = out.data_ptr<float>();
  const float scale_f = static_cast<float>(scale);
  threads = std::max<int64_t>(1, threads);

  // The mask's and bias's rows through their (broadcast) strides, without a tensor per row.
  const bool* al_base = al.defined() ? al.data_ptr<bool>() : nullptr;
  const float* bi_base = bi.defined() ? bi.data_ptr<float>() : nullptr;
  auto row_offset = [](const Tensor& t4, int64_t b, int64_t h, int64_t t) {
    return b * t4.stride(0) + h * t4.stride(1) + t * t4.stride(2);
  };
  at::parallel_for(0, B * H * T, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> x, p, dst(static_cast<size_t>(D)), scores;
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (H * T), h = (row / T) % H, t = row % T;
      const bool* alp = al.defined() ? al_base + row_offset(al, b, h, t) : nullptr;
      const int64_t al_stride = al.defined() ? al.stride(3) : 0;
      auto is_allowed = [&](int64_t key) { return key < S && (!alp || alp[key * al_stride]); };
      const float* bias_row = bi.defined() ? bi_base + row_offset(bi, b, h, t) : nullptr;
      const int64_t bias_stride = bi.defined() ? bi.stride(3) : 0;
      // The reference's call: its rows, this query's row in it, its keys, its batch.
      const FlashRow mode = rows.empty() ? FlashRow::kPrefill : rows[static_cast<size_t>(b)];
      const int64_t call = call_keys.empty() ? 0 : call_keys[static_cast<size_t>(b)];
      int64_t keys = std::max(S, call), call_rows = keys, r = S - T + t, call_batch = B, b_ref = b;
      if (mode != FlashRow::kPrefill) {
        keys = 0;
        for (int64_t key = S - 1; key >= 0; --key)
          if (is_allowed(key)) {
            keys = key + 1;
            break;
          }
        call_rows = mode == FlashRow::kDecode ? 1 : keys;
        r = call_rows - 1;
        call_batch = 1;
        b_ref = 0;
      }
      float* o = op + row * D;
      if (keys == 0 || r < 0) {
        std::fill(o, o + D, 0.0f);
        lp[row] = std::numeric_limits<float>::infinity();
        continue;
      }
      const int64_t q_split = std::min<int64_t>(call_rows >= 768   ? 256
                                                : call_rows >= 192 ? 64
                                                                   : 32,
                                                call_rows);
      const int64_t kv_split = std::min(kKeyBlock, keys);
      const int64_t q_slices = (call_rows + q_split - 1) / q_split;
      const int64_t qb = r / q_split, m0 = qb * q_split;
      const int64_t qn = std::min(q_split, call_rows - m0), j = r - m0;
      // The thread that runs this block in torch's at::parallel_for (contiguous chunks of the
      // batch x heads x query blocks) and where its dst buffer row lies, in floats.
      const int64_t tasks = call_batch * H * q_slices;
      const int64_t nt = std::min(threads, tasks), chunk = (tasks + nt - 1) / nt;
      const int64_t thread = ((b_ref * H + h) * q_slices + qb) / chunk;
      const int64_t per_thread = q_split * kv_split + 2 * q_split + q_split * D;
      const int64_t dst_offset = thread * per_thread + q_split * kv_split + 2 * q_split + j * D;

      const float* qr = qp + row * D;
      const float* kTb = kp + (b * H + h) * D * S;
      const float* vb = vp + (b * H + h) * s_pad * D;
      float run_max = kNegInf, run_sum = 0.0f;
      bool started = false;
      for (int64_t n0 = 0; n0 < keys; n0 += kv_split) {
        const int64_t kvn = std::min(kv_split, keys - n0);
        x.assign(static_cast<size_t>(kvn), kNegInf);
        p.assign(static_cast<size_t>(kvn), 0.0f);
        // q·k for the allowed keys (a masked score is -inf whatever its product).
        int64_t lo = kvn, hi = -1;
        for (int64_t i = 0; i < kvn; ++i)
          if (is_allowed(n0 + i)) {
            lo = std::min(lo, i);
            hi = i;
          }
        if (hi < 0 && !started) {
          // No key yet: torch's probabilities are zeros and its dst the zero product.
          std::fill(dst.begin(), dst.end(), 0.0f);
          started = true;
          continue;
        }
        if (hi >= 0) {
          std::vector<float>& sc = scores;
          sc.assign(static_cast<size_t>(kvn), 0.0f);
          mkl_half::qk(qr, kTb + n0, S, D, kvn, qn, lo, hi + 1, bf16, sc.data() + lo);
          for (int64_t i = lo; i <= hi; ++i) {
            if (!is_allowed(n0 + i)) continue;
            // A float mask (ALiBi) is added in the scaling's fused multiply-add.
            x[static_cast<size_t>(i)] = bias_row ? std::fma(sc[static_cast<size_t>(i)], scale_f,
                                                            bias_row[(n0 + i) * bias_stride])
                                                 : sc[static_cast<size_t>(i)] * scale_f;
          }
        }
        float block_max = kNegInf;
        for (int64_t i = 0; i < kvn; ++i)
          block_max = std::max(block_max, x[static_cast<size_t>(i)]);
        const float new_max = std::max(run_max, block_max);
        if (new_max != kNegInf) {
          for (int64_t i = 0; i < kvn; ++i) x[static_cast<size_t>(i)] -= new_max;
          const float block_sum = exp_row(x.data(), kvn, p.data());
          const float rescale = std::exp(run_max - new_max);
          run_sum = std::fma(rescale, run_sum, block_sum);
          run_max = new_max;
          if (n0 > 0 && started)
            for (int64_t d = 0; d < D; ++d) dst[static_cast<size_t>(d)] *= rescale;
          for (int64_t i = 0; i < kvn; ++i)
            p[static_cast<size_t>(i)] = round_to(p[static_cast<size_t>(i)], bf16);
        }
        mkl_half::pv(p.data(), vb + n0 * D, kvn, D, qn, bf16, started, dst_offset, dst.data());
        started = true;
      }
      const float sum = run_sum == 0.0f ? 1.0f : run_sum;
      lp[row] = (run_max == kNegInf ? 0.0f : run_max) + std::log(sum);
      const float reciprocal = 1.0f / sum;
      for (int64_t d = 0; d < D; ++d)
        o[d] = round_to(dst[static_cast<size_t>(d)] * reciprocal, bf16);
    }
  });
  if (lse) *lse = lse_all;
  return out.to(dt);
}

Tensor Transformer::Impl::sdpa_cpu(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const Tensor& mask, bool causal_only, const Tensor& bias,
                                   const std::vector<FlashRow>& rows,
                                   const std::vector<int64_t>& call_keys) const {
  const auto dt = q.scalar_type();
  const float neg_inf = -std::numeric_limits<float>::infinity();
  Tensor allow = mask;
  if (causal_only || !allow.defined()) {
    const int64_t T = q.size(2), S = k.size(2);
    Tensor qi = at::arange(S - T, S, lopt()).unsqueeze(1), ki = at::arange(0, S, lopt());
    allow = ki.unsqueeze(0).le(qi);
  }
  if (v.size(-1) != q.size(-1)) {
    // Values narrower than queries (DeepSeek's MLA) rule out torch's CPU flash kernel, so
    // scaled_dot_product_attention takes its math path: q, k and v upcast to float32, the
    // scale's square root applied to q and k each, one softmax over the whole row.
    const double r = std::sqrt(cfg.attn_scale);
    // rows (R), keys (S) of the reference's call: its matrices' shapes pick MKL's kernels.
    auto math = [&](const Tensor& qb, const Tensor& kb, const Tensor& vb, const Tensor& ab,
                    const Tensor& biasb, int64_t R, int64_t S) {
      Tensor sf = math_matmul(qb.to(at::kFloat) * r, (kb.to(at::kFloat) * r).transpose(-1, -2),
                              true, R, S, 0);
      if (biasb.defined()) sf = sf + biasb.to(dt).to(at::kFloat);
      sf = sf.masked_fill(ab.logical_not(), neg_inf);
      // A row with no key allowed gets zeros, as torch's _safe_softmax gives it.
      const Tensor p = at::softmax(sf, -1).nan_to_num(0.0);
      return math_matmul(p, vb.to(at::kFloat), false, R, 0, S).to(dt);
    };
    // A prefill's rows are the last of the reference's call over all the keys.
    if (rows.empty() && call_keys.empty()) return math(q, k, v, allow, bias, k.size(2), 0);
    // Each batch row as the reference computes it alone (FlashRow, call_keys): a decoding step
    // over its own keys, a prompt's last token as its prefill's last row.
    const int64_t B = q.size(0), S = k.size(2);
    const Tensor al = allow.expand({B, q.size(1), q.size(2), S});
    std::vector<Tensor> outs;
    for (int64_t b = 0; b < B; ++b) {
      const FlashRow mode = rows.empty() ? FlashRow::kPrefill : rows[static_cast<size_t>(b)];
      const int64_t call = call_keys.empty() ? 0 : call_keys[static_cast<size_t>(b)];
      Tensor ab = al.narrow(0, b, 1);
      int64_t keys = S;
      if (mode != FlashRow::kPrefill) {
        const Tensor any = ab.reshape({-1, S}).any(0).nonzero();
        keys = any.numel() ? any.max().item<int64_t>() + 1 : 1;
      }
      const int64_t R = mode == FlashRow::kDecode ? 1 : std::max(keys, call);
      Tensor biasb = bias.defined()
                         ? bias.narrow(0, bias.size(0) == 1 ? 0 : b, 1).narrow(-1, 0, keys)
                         : Tensor();
      outs.push_back(math(q.narrow(0, b, 1), k.narrow(0, b, 1).narrow(2, 0, keys),
                          v.narrow(0, b, 1).narrow(2, 0, keys), ab.narrow(-1, 0, keys), biasb, R,
                          std::max(keys, call)));
    }
    return at::cat(outs, 0);
  }
  return flash_attention_reduced(q, k, v, allow, bias, cfg.attn_scale, rows, call_keys,
                                 reference_threads());
}

}  // namespace lmeval::hf
