// Doc functions of the reference's gpqa family (lm_eval/tasks/gpqa/{n_shot,zeroshot,cot_*,
// generative}/utils.py), exposed for tests; the leaderboard's GPQA is in leaderboard.hpp.
#pragma once

#include "lmeval/core/json.hpp"

namespace lmeval {
class PyRandom;
}

namespace lmeval::tasks {

// gpqa/*/utils.py _process_doc: the four preprocessed answers shuffled with `rng`, added to the
// document as choice1..choice4 (and, with `with_choices_list`, as the list `choices`: the cot
// and generative variants) with the letter of the correct one as `answer` "(A)".."(D)".
Json gpqa_family_process_doc(const Json& doc, PyRandom& rng, bool with_choices_list);

// gpqa/n_shot/utils.py draws from its module's own `rng = random.Random(42)`, made once per
// process when the module is first imported; this makes it anew (a fresh import), for tests.
void gpqa_n_shot_reset_module_rng();

}  // namespace lmeval::tasks
