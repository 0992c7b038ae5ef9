// encode_batch: encodes many texts on a few threads, results in input order.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include "lmeval/tokenizer/tokenizer.hpp"

namespace lmeval {

std::vector<std::vector<TokenId>> encode_batch(const Tokenizer& tokenizer,
                                               std::span<const std::string> texts,
                                               bool add_special_tokens, unsigned threads) {
  std::vector<std::vector<TokenId>> out(texts.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, texts.size()));
  if (threads <= 1) {
    for (size_t i = 0; i < texts.size(); ++i)
      out[i] = tokenizer.encode(texts[i], add_special_tokens);
    return out;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= texts.size()) return;
      try {
        out[i] = tokenizer.encode(texts[i], add_special_tokens);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = texts.size();
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace lmeval
