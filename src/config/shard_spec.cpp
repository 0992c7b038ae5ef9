// --shard I/N parsing (config/shard_spec.hpp).
#include "lmeval/config/shard_spec.hpp"

#include "lmeval/core/error.hpp"

namespace lmeval {

ShardSpec parse_shard_spec(const std::string& text) {
  auto bad = [&] {
    return UserError("--shard '" + text + "' is not I/N", {"", 0, 0, "--shard"},
                     "I/N with 1 <= I <= N, e.g. 1/4 ... 4/4");
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) throw bad();
  std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  if (i.find_first_not_of("0123456789") != std::string::npos ||
      n.find_first_not_of("0123456789") != std::string::npos || i.size() > 6 || n.size() > 6)
    throw bad();
  ShardSpec s{std::stoi(i), std::stoi(n)};
  if (s.count < 1 || s.index < 1 || s.index > s.count) throw bad();
  return s;
}

}  // namespace lmeval
