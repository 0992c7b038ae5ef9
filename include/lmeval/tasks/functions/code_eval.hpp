// Running model-written programs as the `evaluate` package's code_eval metric does (the metric
// the reference's humaneval and mbpp helpers load): each program in a sandboxed python3 process
// of its own, never in lm-eval's process, and pass@k from the counts of passing programs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::code_eval {

// code_eval's check_correctness for one program: "passed", "failed: <exception>" or "timed out"
// (also what it reports when the process died without a result).
struct Outcome {
  bool passed = false;
  std::string result;
};

struct Limits {
  double timeout_s = 3.0;  // code_eval's default `timeout`, per program
  // RLIMIT_AS of the process (code_eval sets none: its child shares the harness's memory).
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;
};

// Runs `program` with the interpreter of `$VIRTUAL_ENV`, else `python3` on PATH (the one that
// runs Python task code), in the sandbox of code_sandbox.hpp, with code_eval's guard
// (destructive os/shutil/subprocess functions disabled), stdin/stdout/stderr swallowed and an
// alarm after limits.timeout_s; the sandbox is killed timeout_s + 1 seconds after the start, as
// code_eval's join(timeout + 1) does. Only the driver's line carrying the run's secret counts as
// a verdict. Throws UserError unless the run confirmed unsafe code (--confirm_run_unsafe_code),
// or when there is no python3; RuntimeError when no sandbox can start it.
Outcome run_program(const std::string& program, const Limits& limits = {});

// estimate_pass_at_k of one problem: 1 - C(n - c, k) / C(n, k), as code_eval computes it.
double estimate_pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k);

// CodeEval._compute for one problem: every candidate + "\n" + test run (four at a time, its
// num_workers), then {"pass@k": estimate} for each k of `ks` with k <= the candidate count; with
// no candidates each value is NaN (numpy's mean of nothing).
Json compute(const std::vector<std::string>& candidates, const std::string& test,
             const std::vector<std::int64_t>& ks, const Limits& limits = {});

// Whether the run allows model code to run (--confirm_run_unsafe_code): set by the evaluator
// when it loads the tasks, false until then.
void set_unsafe_code_confirmed(bool confirmed);
bool unsafe_code_confirmed();
// Throws UserError (exit 2) naming --confirm_run_unsafe_code unless the run confirmed it; `who`
// names the function that would run model code.
void require_confirmation(const std::string& who);

}  // namespace lmeval::code_eval
