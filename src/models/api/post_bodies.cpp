// post_bodies (post_bodies.hpp).
#include "models/api/post_bodies.hpp"

#include "lmeval/core/error.hpp"
#include "models/api/openai_payload.hpp"

namespace lmeval::api {

void post_bodies(HttpClient& client, const std::string& url, const std::vector<std::string>& bodies,
                 const std::string& name, const char* phase,
                 const std::function<void(size_t, const Json&)>& accept,
                 const std::function<void(size_t)>& done) {
  size_t n = 0;
  auto judge = [&](size_t i, const HttpResponse& r) -> Verdict {
    if (auto v = judge_transport(r)) return *v;
    try {
      accept(i, parse_body(r.body));
    } catch (const MalformedResponse& e) {
      return Verdict::retry(e.what());
    } catch (const RuntimeError& e) {
      return Verdict::fail(e.what());
    }
    if (done) done(++n);
    return Verdict::done();
  };
  auto failures = client.post_all(url, bodies, judge);
  if (!failures.empty())
    throw RuntimeError(name + ": " + phase + " request " +
                       std::to_string(failures.front().index + 1) + " to " + url +
                       " failed after " + std::to_string(failures.front().attempts) +
                       " attempt(s): " + failures.front().message);
}

}  // namespace lmeval::api
