// CPython's Mersenne Twister and the random module's sampling algorithms.
#include "lmeval/core/py_random.hpp"

#include <algorithm>
#include <iterator>
#include <unordered_set>

namespace lmeval {

PyRandom::PyRandom(int64_t seed) {
  // random_seed(): the key is abs(seed) split into 32-bit words; 0 gives the key [0].
  uint64_t v = seed < 0 ? static_cast<uint64_t>(-(seed + 1)) + 1 : static_cast<uint64_t>(seed);
  std::vector<uint32_t> key;
  if (v == 0) key.push_back(0);
  while (v) {
    key.push_back(static_cast<uint32_t>(v & 0xffffffffu));
    v >>= 32;
  }
  init_by_array(key);
}

void PyRandom::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (mti_ = 1; mti_ < 624; ++mti_)
    mt_[mti_] = 1812433253u * (mt_[mti_ - 1] ^ (mt_[mti_ - 1] >> 30)) + static_cast<uint32_t>(mti_);
}

void PyRandom::init_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218u);
  size_t i = 1, j = 0;
  size_t n = key.size();
  for (size_t k = (624 > n ? 624 : n); k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
    if (j >= n) j = 0;
  }
  for (size_t k = 623; k; --k) {
    mt_[i] =
        (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;
  mti_ = 624;
}

PyRandom::State PyRandom::state() const {
  State s;
  std::copy(std::begin(mt_), std::end(mt_), s.begin());
  s[624] = static_cast<uint32_t>(mti_);
  return s;
}

void PyRandom::set_state(const State& s) {
  std::copy(s.begin(), s.begin() + 624, std::begin(mt_));
  mti_ = static_cast<int>(s[624]);
}

uint32_t PyRandom::genrand_uint32() {
  static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
  uint32_t y;
  if (mti_ >= 624) {
    int kk;
    for (kk = 0; kk < 624 - 397; ++kk) {
      y = (mt_[kk] & 0x80000000u) | (mt_[kk + 1] & 0x7fffffffu);
      mt_[kk] = mt_[kk + 397] ^ (y >> 1) ^ mag01[y & 1];
    }
    for (; kk < 623; ++kk) {
      y = (mt_[kk] & 0x80000000u) | (mt_[kk + 1] & 0x7fffffffu);
      mt_[kk] = mt_[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
    }
    y = (mt_[623] & 0x80000000u) | (mt_[0] & 0x7fffffffu);
    mt_[623] = mt_[396] ^ (y >> 1) ^ mag01[y & 1];
    mti_ = 0;
  }
  y = mt_[mti_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

uint64_t PyRandom::getrandbits(int k) {
  if (k <= 32) return genrand_uint32() >> (32 - k);
  // Words least-significant first; the last word keeps only its top bits.
  uint64_t lo = genrand_uint32();
  uint64_t hi = genrand_uint32() >> (64 - k);
  return (hi << 32) | lo;
}

uint64_t PyRandom::randbelow(uint64_t n) {
  int k = 0;
  for (uint64_t t = n; t; t >>= 1) ++k;  // n.bit_length()
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

double PyRandom::random() {
  uint32_t a = genrand_uint32() >> 5, b = genrand_uint32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

std::vector<size_t> PyRandom::sample_indices(size_t n, size_t k) {
  if (k > n) throw std::invalid_argument("Sample larger than population or is negative");
  std::vector<size_t> result(k);
  size_t setsize = 21;
  if (k > 5)
    setsize += static_cast<size_t>(std::pow(4.0, std::ceil(std::log(3.0 * k) / std::log(4.0))));
  if (n <= setsize) {
    std::vector<size_t> pool(n);
    for (size_t i = 0; i < n; ++i) pool[i] = i;
    for (size_t i = 0; i < k; ++i) {
      size_t j = static_cast<size_t>(randbelow(n - i));
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];
    }
  } else {
    std::unordered_set<size_t> selected;
    for (size_t i = 0; i < k; ++i) {
      size_t j = static_cast<size_t>(randbelow(n));
      while (selected.count(j)) j = static_cast<size_t>(randbelow(n));
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

std::vector<size_t> PyRandom::choices_indices(size_t n, size_t k) {
  std::vector<size_t> out(k);
  double nf = static_cast<double>(n);
  for (size_t i = 0; i < k; ++i) out[i] = static_cast<size_t>(std::floor(random() * nf));
  return out;
}

}  // namespace lmeval
