// --shard I/N: which part of a run's requests this process answers.
#pragma once

#include <string>

namespace lmeval {

struct ShardSpec {
  int index = 0;  // 1..count
  int count = 0;
};

// "I/N" with 1 <= I <= N; UserError (field --shard) otherwise.
ShardSpec parse_shard_spec(const std::string& text);

}  // namespace lmeval
