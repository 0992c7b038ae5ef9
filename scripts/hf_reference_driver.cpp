// Runs the hf backend's LM on a JSON request list (for scripts/compare_hf_reference.py):
// stdin {"model_args": {...}, "loglikelihood": [[ctx, cont], ...], "rolling": [text, ...],
// "generate": [[ctx, gen_kwargs], ...]}; stdout the same keys with results.
#include <iostream>
#include <iterator>

#include "lmeval/core/error.hpp"
#include "lmeval/models/hf/hf_model.hpp"

using namespace lmeval;

int main() {
  try {
    std::string in((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    Json req = Json::parse(in);
    // The backend HFLM would pick (decoder-only, or seq2seq from config.json / backend=).
    std::unique_ptr<LM> lm = make_hf_model(req["model_args"], {});
    Json out = Json::object();
    std::vector<LoglikelihoodRequest> ll;
    for (const auto& r : req.value("loglikelihood", Json::array()))
      ll.push_back({r[0].get<std::string>(), r[1].get<std::string>()});
    out["loglikelihood"] = Json::array();
    for (const auto& r : lm->loglikelihood(ll))
      out["loglikelihood"].push_back({r.loglikelihood, r.is_greedy});
    std::vector<std::string> texts;
    for (const auto& t : req.value("rolling", Json::array())) texts.push_back(t.get<std::string>());
    out["rolling"] = lm->loglikelihood_rolling(texts);
    std::vector<GenerationRequest> gen;
    for (const auto& r : req.value("generate", Json::array()))
      gen.push_back({r[0].get<std::string>(), r[1]});
    out["generate"] = lm->generate_until(gen);
    std::cout << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
