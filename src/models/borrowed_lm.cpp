// A model lent to a run (see borrowed_lm.hpp).
#include "lmeval/models/borrowed_lm.hpp"

namespace lmeval {

template <class F>
auto BorrowedLM::lent(F&& call) {
  inner_.set_progress(progress_);
  inner_.set_answer_sink(sink_);
  struct Restore {
    LM& lm;
    ~Restore() {
      lm.set_progress(nullptr);
      lm.set_answer_sink({});
    }
  } restore{inner_};
  return call();
}

std::vector<LoglikelihoodResult> BorrowedLM::loglikelihood(
    const std::vector<LoglikelihoodRequest>& requests) {
  return lent([&] { return inner_.loglikelihood(requests); });
}

std::vector<double> BorrowedLM::loglikelihood_rolling(const std::vector<std::string>& texts) {
  return lent([&] { return inner_.loglikelihood_rolling(texts); });
}

std::vector<std::string> BorrowedLM::generate_until(
    const std::vector<GenerationRequest>& requests) {
  return lent([&] { return inner_.generate_until(requests); });
}

}  // namespace lmeval
