// The sandbox that model-written programs run in (docs/security.md): Linux namespaces where the
// kernel allows them, else a process of its own under seccomp and rlimits, and the level found
// said once in the log.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace lmeval::code_eval {

// Highest first; each keeps everything of the levels below it.
enum class SandboxLevel {
  // Own session, empty environment, rlimits, seccomp (no sockets but AF_UNIX, no signals to
  // lm-eval, no ptrace/mount/namespaces), Landlock where the kernel has it (writes only in its
  // working folder); as root also a uid of its own, every process of which is killed at the end.
  // As a user, a subreaper between lm-eval and the program kills what leaves the session.
  process = 1,
  // As root without user namespaces: pid, network, mount, IPC and UTS namespaces, a read-only
  // root with only a private /tmp writable, a uid of its own.
  namespaces_as_root = 2,
  // A user namespace around the same namespaces: what level 2 gives, for any user.
  user_namespaces = 3,
};

// What one level guarantees, one line for the log and the docs.
std::string describe(SandboxLevel level);

// Whether the kernel has Landlock, which confines level 1's writes to its working folder.
bool landlock_available();

struct SandboxedProgram {
  std::filesystem::path exe;                     // the same path inside the sandbox
  std::vector<std::string> args;                 // argv[1..]; "{input}" stands for the input folder
  std::vector<std::filesystem::path> read_only;  // host folders visible read-only (same path)
  std::filesystem::path input;                   // host folder, read-only at "{input}"
  double wall_s = 3.0;                           // killed, with everything it started, after this
  std::uint64_t memory_bytes = std::uint64_t{4} << 30;  // RLIMIT_AS
};

struct SandboxRun {
  std::string output;  // what the program wrote to fd 3 before `stop` said enough (64 KiB at most)
  SandboxLevel level = SandboxLevel::process;
};

// Runs the program with `secret` readable once on fd 4 (then end of file) and fd 3 the pipe
// whose bytes come back; stdin, stdout and stderr are /dev/null. Returns when `enough(output)`
// says so, fd 3 is closed by all, or wall_s passed; then the whole sandbox is killed and reaped.
// Throws RuntimeError when no level can start it.
SandboxRun run_sandboxed(const SandboxedProgram& program, const std::string& secret,
                         bool (*enough)(const std::string& output, const std::string& secret));

// The highest level this machine gave so far (the next run tries it first); tests cap it to
// exercise the lower levels. cap_sandbox_level(user_namespaces) lifts the cap.
SandboxLevel sandbox_level();
void cap_sandbox_level(SandboxLevel highest);

}  // namespace lmeval::code_eval
