// CPython's random.Random, bit for bit: MT19937 seeded by init_by_array, getrandbits,
// _randbelow, random(), sample() (both algorithms), choices() without weights, shuffle().
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace lmeval {

class PyRandom {
 public:
  // random.Random(seed) for an int seed (key = 32-bit words of |seed|, least significant first).
  explicit PyRandom(int64_t seed);

  // random.getstate()[1]: the 624 state words, then the position in them (CPython's `index`);
  // set_state is setstate's inverse.
  using State = std::array<uint32_t, 625>;
  State state() const;
  void set_state(const State& s);

  uint32_t genrand_uint32();
  // random.getrandbits(k), k in [1, 64].
  uint64_t getrandbits(int k);
  // random._randbelow(n), n >= 1.
  uint64_t randbelow(uint64_t n);
  // random.random(): 53-bit float in [0, 1).
  double random();

  // random.sample(range(n), k): the indices chosen, in order (CPython >= 3.11 algorithm).
  std::vector<size_t> sample_indices(size_t n, size_t k);
  template <class T>
  std::vector<T> sample(const std::vector<T>& population, size_t k) {
    std::vector<T> out;
    out.reserve(k);
    for (size_t i : sample_indices(population.size(), k)) out.push_back(population[i]);
    return out;
  }
  // random.choices(range(n), k=k) without weights: indices floor(random() * n).
  std::vector<size_t> choices_indices(size_t n, size_t k);
  // random.shuffle(x) (Fisher-Yates from the end with _randbelow).
  template <class T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) {
      size_t j = static_cast<size_t>(randbelow(i + 1));
      std::swap(x[i], x[j]);
    }
  }

 private:
  void init_genrand(uint32_t s);
  void init_by_array(const std::vector<uint32_t>& key);
  uint32_t mt_[624];
  int mti_ = 625;
};

}  // namespace lmeval
