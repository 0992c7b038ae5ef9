// Process groups of child servers lm-eval started (vLLM, SGLang): killed when lm-eval ends at
// once (a second stop signal, the stop watchdog, a crash) so that no server outlives the run.
#pragma once

#include <sys/types.h>

namespace lmeval {

// Records `pgid` (at most 64 at once; more are not recorded). Thread-safe.
void register_child_group(pid_t pgid);
void unregister_child_group(pid_t pgid);

// Sends `sig` to every recorded group. Async-signal-safe (loads and kill(2) only).
void kill_child_groups(int sig);

}  // namespace lmeval
