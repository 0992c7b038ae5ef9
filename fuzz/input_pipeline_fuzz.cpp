// libFuzzer target: task YAML + Jinja template + JSON rows (fuzz/input_pipeline.hpp); only
// UserError may come out. Seeds: fuzz/corpus/input_pipeline.
#include <cstdint>

#include "input_pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lmeval::fuzz::run_input_pipeline(data, size);
  return 0;
}
