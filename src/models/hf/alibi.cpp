// ALiBi slopes (alibi.hpp).
#include "models/hf/alibi.hpp"

#include <algorithm>
#include <cmath>

namespace lmeval::hf {

// torch computes each slope in float32 from a float32 base; the powers here are taken in double
// and rounded once (torch's float pow may differ in the last bit for irrational bases).
std::vector<float> alibi_slopes_bloom(int64_t heads) {
  const int64_t closest = int64_t{1} << static_cast<int>(std::floor(std::log2(heads)));
  auto base_of = [](int64_t n) {
    return static_cast<float>(std::pow(2.0, -std::pow(2.0, -(std::log2(n) - 3.0))));
  };
  std::vector<float> out;
  const float base = base_of(closest);
  for (int64_t i = 1; i <= closest; ++i)
    out.push_back(static_cast<float>(std::pow(static_cast<double>(base), static_cast<double>(i))));
  if (closest != heads) {
    const float extra = base_of(2 * closest);
    const int64_t remaining = std::min(closest, heads - closest);
    for (int64_t i = 1; i < 1 + 2 * remaining; i += 2)
      out.push_back(
          static_cast<float>(std::pow(static_cast<double>(extra), static_cast<double>(i))));
  }
  return out;
}

std::vector<float> alibi_slopes_mpt(int64_t heads, double bias_max) {
  const int64_t p2 = int64_t{1} << static_cast<int>(std::ceil(std::log2(heads)));
  const auto step = static_cast<float>(bias_max / static_cast<double>(p2));
  std::vector<float> all;
  for (int64_t i = 1; i <= p2; ++i) {
    const float exponent = static_cast<float>(i) * step;
    all.push_back(1.0f / static_cast<float>(std::pow(2.0, static_cast<double>(exponent))));
  }
  if (p2 == heads) return all;
  std::vector<float> out;
  for (size_t i = 1; i < all.size(); i += 2) out.push_back(all[i]);
  for (size_t i = 0; i < all.size(); i += 2) out.push_back(all[i]);
  out.resize(static_cast<size_t>(heads));
  return out;
}

}  // namespace lmeval::hf
