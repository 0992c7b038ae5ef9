// Model-written programs run as evaluate's code_eval metric runs them (code_eval.py and
// execute.py of huggingface/evaluate's metrics/code_eval).
#include "lmeval/tasks/functions/code_eval.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_env.hpp"

extern char** environ;

namespace lmeval::code_eval {

namespace fs = std::filesystem;

namespace {

// The python3 side: reads the program, applies code_eval's reliability_guard (the same
// functions set to None, so a program calling them fails as it does there), swallows the
// standard streams (reading stdin raises OSError), runs the program with exec in fresh globals
// under an ITIMER_REAL alarm, and writes code_eval's result string to fd 3.
constexpr const char* kDriver = R"PY(import os, sys
result_file = os.fdopen(3, "w", encoding="utf-8", errors="replace")


def outcome(path, seconds):
    import builtins, contextlib, faulthandler, io, shutil, signal, subprocess

    with open(path, encoding="utf-8") as f:
        source = f.read()

    class TimeoutException(Exception):
        pass

    class NoRead(io.StringIO):
        def read(self, *args, **kwargs):
            raise OSError

        def readline(self, *args, **kwargs):
            raise OSError

        def readlines(self, *args, **kwargs):
            raise OSError

        def readable(self, *args, **kwargs):
            return False

    faulthandler.disable()
    builtins.exit = None
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
                 "fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace",
                 "unlink", "fchmod", "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod",
                 "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = None
    shutil.move = None
    shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None

    def on_alarm(signum, frame):
        raise TimeoutException("Timed out!")

    stream = NoRead()
    try:
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            saved_stdin, sys.stdin = sys.stdin, stream
            try:
                signal.setitimer(signal.ITIMER_REAL, seconds)
                signal.signal(signal.SIGALRM, on_alarm)
                try:
                    exec(source, {})
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            finally:
                sys.stdin = saved_stdin
        return "passed"
    except TimeoutException:
        return "timed out"
    except BaseException as e:
        return f"failed: {e}"


text = outcome(sys.argv[1], float(sys.argv[2]))
result_file.write(text.replace("\n", " ") + "\n")
result_file.flush()
os._exit(0)
)PY";

// A private directory for one program, removed with everything in it.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "lmeval-code-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
      throw RuntimeError("code execution: cannot create a directory under " +
                         fs::temp_directory_path().string());
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

const PythonEnv& interpreter() {
  static const PythonEnv env = active_python_env();
  if (env.python.empty())
    throw UserError("running the task's programs needs a Python interpreter: " + env.described, {},
                    "python3 on PATH, or $VIRTUAL_ENV naming a virtual environment");
  return env;
}

std::atomic<bool> confirmed{false};

}  // namespace

void set_unsafe_code_confirmed(bool on) { confirmed = on; }
bool unsafe_code_confirmed() { return confirmed; }

void require_confirmation(const std::string& who) {
  if (confirmed) return;
  throw UserError(who + " runs the model's generated code as Python programs",
                  {"", 0, 0, "--confirm_run_unsafe_code"},
                  "--confirm_run_unsafe_code, to allow it (each program runs in a python3 "
                  "process of its own with time and memory limits, which is no sandbox)");
}

Outcome run_program(const std::string& program, const Limits& limits) {
  require_confirmation("code execution");
  const PythonEnv& env = interpreter();
  ScratchDir dir;
  const fs::path source = dir.path / "program.py", work = dir.path / "work";
  {
    std::ofstream out(source, std::ios::binary);
    out << program;
    if (!out) throw RuntimeError("code execution: cannot write " + source.string());
  }
  fs::create_directory(work);

  // Everything the child needs, made before fork: between fork and exec it only makes
  // async-signal-safe calls.
  const std::string exe = env.python.string(), src = source.string(), dir_s = work.string();
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.17g", limits.timeout_s);
  std::vector<const char*> argv = {exe.c_str(), "-c", kDriver, src.c_str(), seconds, nullptr};
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::string_view(*e).rfind("OMP_NUM_THREADS=", 0) != 0) env_strings.emplace_back(*e);
  env_strings.emplace_back("OMP_NUM_THREADS=1");
  std::vector<const char*> envp;
  for (const auto& s : env_strings) envp.push_back(s.c_str());
  envp.push_back(nullptr);
  // RLIMIT_CPU a second past the wall-clock kill: a safety net for a group that outlives it.
  const auto cpu = static_cast<rlim_t>(std::ceil(limits.timeout_s)) + 2;
  const rlimit as{static_cast<rlim_t>(limits.memory_bytes),
                  static_cast<rlim_t>(limits.memory_bytes)};
  const rlimit cpu_limit{cpu, cpu + 1}, no_core{0, 0};

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw RuntimeError("code execution: pipe failed");
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    if (null >= 0) ::close(null);
    throw RuntimeError("code execution: fork failed");
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    // fd 3 carries the result (dup2 onto itself would keep O_CLOEXEC).
    if (fds[1] == 3)
      ::fcntl(3, F_SETFD, 0);
    else
      ::dup2(fds[1], 3);
    ::setrlimit(RLIMIT_AS, &as);
    ::setrlimit(RLIMIT_CPU, &cpu_limit);
    ::setrlimit(RLIMIT_CORE, &no_core);
    if (::chdir(dir_s.c_str()) != 0) ::_exit(126);
    ::execve(exe.c_str(), const_cast<char* const*>(argv.data()),
             const_cast<char* const*>(envp.data()));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so that killpg below cannot race the child's own call
  ::close(fds[1]);
  if (null >= 0) ::close(null);

  std::string out;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(limits.timeout_s + 1.0);
  char buf[4096];
  while (out.find('\n') == std::string::npos && out.size() < (1u << 16)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  // The program's whole process group, whether it finished or not (code_eval kills its process
  // when join(timeout + 1) returns with it alive).
  ::killpg(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  Outcome o;
  const size_t eol = out.find('\n');
  // No result: code_eval's "timed out", whatever ended the process (its result list stays empty).
  o.result = eol == std::string::npos ? "timed out" : out.substr(0, eol);
  o.passed = o.result == "passed";
  return o;
}

double estimate_pass_at_k(std::int64_t n, std::int64_t c, std::int64_t k) {
  if (n - c < k) return 1.0;
  // 1 - prod(1 - k / arange(n - c + 1, n + 1)), multiplied in numpy's order (left to right).
  double prod = 1.0;
  for (std::int64_t i = n - c + 1; i <= n; ++i)
    prod *= 1.0 - static_cast<double>(k) / static_cast<double>(i);
  return 1.0 - prod;
}

Json compute(const std::vector<std::string>& candidates, const std::string& test,
             const std::vector<std::int64_t>& ks, const Limits& limits) {
  std::vector<char> passed(candidates.size(), 0);
  if (!candidates.empty()) {
    require_confirmation("code execution");
    interpreter();
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    auto work = [&] {
      for (size_t i = next++; i < candidates.size() && !failed; i = next++) {
        try {
          passed[i] = run_program(candidates[i] + "\n" + test, limits).passed ? 1 : 0;
        } catch (...) {
          if (!failed.exchange(true)) error = std::current_exception();
        }
      }
    };
    const size_t n_workers = std::min<size_t>(4, candidates.size());  // code_eval's num_workers
    for (size_t w = 0; w < n_workers; ++w) workers.emplace_back(work);
    for (auto& t : workers) t.join();
    if (error) std::rethrow_exception(error);
  }
  const auto n = static_cast<std::int64_t>(candidates.size());
  const auto c = static_cast<std::int64_t>(std::count(passed.begin(), passed.end(), 1));
  Json out = Json::object();
  for (std::int64_t k : ks) {
    if (candidates.empty()) {
      out["pass@" + std::to_string(k)] = std::numeric_limits<double>::quiet_NaN();
    } else if (n >= k) {  // code_eval: `for k in ks if (total >= k).all()`
      out["pass@" + std::to_string(k)] = estimate_pass_at_k(n, c, k);
    }
  }
  return out;
}

}  // namespace lmeval::code_eval
