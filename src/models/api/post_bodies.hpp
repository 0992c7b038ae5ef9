// One POST per body to one URL, each answer parsed as JSON and handed to the caller, for the
// backends that send one prompt per request (gguf, textsynth).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"
#include "lmeval/models/api/http_client.hpp"

namespace lmeval::api {

// Posts every body; `accept(i, answer)` reads answer i (a MalformedResponse retries the request,
// a RuntimeError fails it); `done(n)` after each accepted one. Throws RuntimeError naming the
// backend (`name`), `phase`, the URL and the first failure.
void post_bodies(HttpClient& client, const std::string& url, const std::vector<std::string>& bodies,
                 const std::string& name, const char* phase,
                 const std::function<void(size_t, const Json&)>& accept,
                 const std::function<void(size_t)>& done = {});

}  // namespace lmeval::api
