// IFEval (leaderboard_ifeval / ifeval) scoring: Google's instruction checkers as the reference runs
// them (lm_eval/tasks/ifeval/instructions*.py and leaderboard/ifeval/utils.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/core/py_random.hpp"

namespace lmeval::ifeval {

// The reference's utils.process_results(doc, results) for one document: returns, in this key
// order, prompt_level_strict_acc (bool), inst_level_strict_acc (array of bool),
// prompt_level_loose_acc (bool), inst_level_loose_acc (array of bool).
// doc needs "instruction_id_list", "kwargs" (one object per instruction; falsy values are
// dropped as the reference does), "prompt", and optionally "key" (used in error messages).
// Unknown instruction ids and malformed kwargs throw lmeval::UserError naming the doc key and
// the instruction.
// Where the reference draws a missing argument from Python's global `random` (e.g. the letter of
// keywords:letter_frequency when the dataset gives "#"), the draw comes from `rng`; the overload
// without `rng` uses a process-wide generator (see seed_global_random).
Json process_results(const Json& doc, const std::string& response);
Json process_results(const Json& doc, const std::string& response, PyRandom& rng);

// The reference's utils.agg_inst_level_acc over the per-doc arrays (flatten, mean).
// Throws UserError when an item is not an array of booleans or when there are no items at all.
double agg_inst_level_acc(const std::vector<Json>& items);

// Every instruction id of the reference's INSTRUCTION_DICT, in its order.
std::vector<std::string> supported_instruction_ids();

// Reseeds the process-wide generator used by process_results(doc, response): the reference's
// global `random` is seeded by the evaluator with random.seed(random_seed) (default 0), and the
// checkers draw from it in document order. Initially seeded with 0.
void seed_global_random(int64_t seed);

// --- Text helpers the checkers use (exposed for tests) ---

// instructions_util.count_sentences: number of sentences by nltk's Punkt tokenizer with the
// English punkt_tab parameters (nltk 3.9+: tokenizers/punkt/english.pickle -> punkt_tab).
size_t count_sentences(std::string_view text);
// nltk.sent_tokenize(text) (English Punkt, realigned boundaries).
std::vector<std::string> sent_tokenize(std::string_view text);
// nltk.word_tokenize(text): Punkt sentences, then NLTKWordTokenizer on each.
std::vector<std::string> word_tokenize(std::string_view text);
// instructions_util.count_words: number of \w+ tokens (nltk RegexpTokenizer, `regex` classes).
size_t count_words(std::string_view text);
// langdetect.detect(text) (langdetect 1.0.9 algorithm and profiles) with the detector's random
// generator seeded with `seed` (DetectorFactory.seed); nullopt where langdetect raises
// LangDetectException ("No features in text"). Returns "unknown" when no language passes 0.1.
std::optional<std::string> detect_language(std::string_view text, int64_t seed = 0);
// langdetect.detect_langs: (language, probability) pairs above 0.1, most probable first.
std::vector<std::pair<std::string, double>> detect_language_probabilities(std::string_view text,
                                                                          int64_t seed = 0);
// Python str.isupper() / str.islower().
bool py_isupper(std::string_view s);
bool py_islower(std::string_view s);

}  // namespace lmeval::ifeval
