// --use_cache: a response cache around any LM (the reference's CachingLM), in sqlite at
// `<path>_rank0.db` as the reference names its file.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "lmeval/models/lm.hpp"

namespace lmeval {

// What makes two models' answers interchangeable: the model name and its model_args, less
// the arguments that only change speed or access (batch sizes, threads, concurrency, retries,
// timeouts, TLS settings, credentials and headers). The reference keys
// on the request alone, so two models sharing a cache file would answer for each other.
Json cache_identity(const std::string& model, const Json& model_args);

// Wraps `inner`; answers found in the cache are not recomputed. Missing requests go to `inner`
// in chunks. Answers the backend hands to its AnswerSink are committed as they arrive (small
// transactions, at most 20 ms apart), the rest of a chunk's when the chunk returns, and whatever
// was received is committed before a stop or a failure unwinds: a graceful stop or a failed
// request loses no answer received, a SIGKILL at most the last 20 ms of them (or the chunk in
// flight, for backends that hand nothing out). Sampled generations (do_sample true) are never
// cached.
std::unique_ptr<LM> make_caching_lm(std::unique_ptr<LM> inner, const std::filesystem::path& path,
                                    const Json& identity);

}  // namespace lmeval
