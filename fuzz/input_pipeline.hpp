// The fuzzed path of a task's user inputs: a task YAML, a Jinja template and JSON rows, through
// the loaders, the template engine and the JSON printers. Shared by the libFuzzer target
// (input_pipeline_fuzz.cpp) and the corpus replay test (tests/fuzz), so CI replays exactly
// what is fuzzed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lmeval::fuzz {

// One input: up to three parts separated by a line "%%": YAML text, template text, JSONL rows.
// Every template-looking string of the YAML and the template part are parsed and rendered with
// each row; rows and the YAML value are printed as the samples/results writers print them.
// Only UserError (bad input, exit 2) may leave the pipeline: any other exception is rethrown
// to the caller, and a crash is a crash.
void run_input_pipeline(const uint8_t* data, size_t size);

}  // namespace lmeval::fuzz
