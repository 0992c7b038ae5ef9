// Stage 3, dispatch: the requests of a run sent to the model, once per distinct request across
// few-shot seeds; every Instance receives its responses.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "lmeval/models/lm.hpp"
#include "lmeval/prompt/instance.hpp"
#include "requests.hpp"

namespace lmeval {

// The instances built with one few-shot seed (a plain run has one pass).
struct RequestPass {
  int64_t fewshot_seed = 0;
  std::vector<Instance*> instances;
};

// One model call per request type, types in order of first appearance, each request repeated
// `repeats` times consecutively; fills every instance's `resps`. Across passes, a request with the
// same type, arguments and repeats as one of an earlier pass reuses its responses: the n-th
// occurrence in a pass pairs with the n-th in earlier passes, so duplicates within one pass are
// still sent as often as a plain run sends them, and the first pass is sent exactly as a plain run
// would send it. `record` (LMEVAL_RECORD_REQUESTS) receives each request sent, in the goldens'
// format, with its seed when there is more than one pass. Returns the `performance` entry.
Json dispatch_requests(LM& lm, const std::vector<RequestPass>& passes, std::ostream* record);

// The run's dispatch: every pass's instances, recorded to LMEVAL_RECORD_REQUESTS=<file> when set
// (every request as the model receives it, in the goldens' format, ../shared/goldens/requests).
Json dispatch(LM& lm, std::vector<SeedPass>& passes);

}  // namespace lmeval
