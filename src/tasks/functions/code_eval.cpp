// Model-written programs run as evaluate's code_eval metric runs them (code_eval.py and
// execute.py of huggingface/evaluate's metrics/code_eval).
#include "lmeval/tasks/functions/code_eval.hpp"

#include <sys/random.h>
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
#include <optional>
#include <sstream>
#include <thread>

#include "lmeval/core/error.hpp"
#include "lmeval/core/python_env.hpp"
#include "lmeval/tasks/functions/code_sandbox.hpp"

namespace lmeval::code_eval {

namespace fs = std::filesystem;

namespace {

// The python3 side: reads the verdict's secret from fd 4 (before any model code runs, which then
// cannot read it from there), reads the program, applies code_eval's reliability_guard (the same
// functions set to None, so a program calling them fails as it does there), swallows the
// standard streams (reading stdin raises OSError), runs the program with exec in fresh globals
// under an ITIMER_REAL alarm, and writes "<secret> <code_eval's result string>" to fd 3. The
// parent counts only a line carrying the secret: a program that writes "passed" to fd 3 and
// exits has not passed.
constexpr const char* kDriver = R"PY(import os, sys


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


def main():
    secret = b""
    while True:
        chunk = os.read(4, 64)
        if not chunk:
            break
        secret += chunk
    os.close(4)
    text = outcome(sys.argv[1], float(sys.argv[2]))
    line = secret + b" " + text[:4000].replace("\n", " ").encode("utf-8", "replace") + b"\n"
    os.write(3, line)
    os._exit(0)


main()
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

// The interpreter as the sandbox runs it: sys.executable (a pyenv shim or a venv link resolved
// as Python itself resolves it) and the folders it needs to see, read-only.
struct Runtime {
  fs::path exe;
  std::vector<fs::path> read_only;
};

const Runtime& runtime() {
  static const Runtime rt = [] {
    const PythonEnv& env = interpreter();
    const auto out = run_python(env.python,
                                "import os, sys\n"
                                "for p in (sys.executable, sys.prefix, sys.base_prefix,\n"
                                "          sys.exec_prefix, sys.base_exec_prefix,\n"
                                "          os.path.dirname(os.path.realpath(sys.executable))):\n"
                                "    print(p)\n",
                                30000);
    if (!out)
      throw UserError("running the task's programs needs a Python interpreter: " + env.described +
                          " did not run",
                      {}, "a working python3");
    Runtime r;
    std::istringstream lines(*out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      if (r.exe.empty()) {
        r.exe = line;
        r.read_only.push_back(fs::path(line).parent_path());
      } else {
        r.read_only.emplace_back(line);
      }
    }
    if (r.exe.empty() || !r.exe.is_absolute())
      throw UserError("running the task's programs needs a Python interpreter: " + env.described +
                          " gave no sys.executable",
                      {}, "a working python3");
    return r;
  }();
  return rt;
}

std::string make_secret() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw RuntimeError("code execution: getrandom failed");
    got += static_cast<size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// The driver's line: "<secret> <result>\n" at the start of a line.
std::optional<std::string> find_verdict(const std::string& output, const std::string& secret) {
  size_t at = 0;
  while (at < output.size()) {
    const size_t eol = output.find('\n', at);
    if (eol == std::string::npos) break;
    if (output.compare(at, secret.size() + 1, secret + " ") == 0)
      return output.substr(at + secret.size() + 1, eol - at - secret.size() - 1);
    at = eol + 1;
  }
  return std::nullopt;
}

bool has_verdict(const std::string& output, const std::string& secret) {
  return find_verdict(output, secret).has_value();
}

}  // namespace

void set_unsafe_code_confirmed(bool on) { confirmed = on; }
bool unsafe_code_confirmed() { return confirmed; }

void require_confirmation(const std::string& who) {
  if (confirmed) return;
  throw UserError(who + " runs the model's generated code as Python programs",
                  {"", 0, 0, "--confirm_run_unsafe_code"},
                  "--confirm_run_unsafe_code, to allow it (each program runs in a sandbox: "
                  "docs/security.md says what it guarantees on which systems)");
}

Outcome run_program(const std::string& program, const Limits& limits) {
  require_confirmation("code execution");
  const Runtime& rt = runtime();
  ScratchDir dir;
  const fs::path input = dir.path / "in", source = input / "program.py";
  fs::create_directory(input);
  {
    std::ofstream out(source, std::ios::binary);
    out << program;
    if (!out) throw RuntimeError("code execution: cannot write " + source.string());
  }
  // Readable by the sandbox's uid (one of its own when lm-eval runs as root).
  fs::permissions(dir.path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(input, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(source, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                              fs::perms::others_read);

  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.17g", limits.timeout_s);
  SandboxedProgram sp;
  sp.exe = rt.exe;
  sp.args = {"-c", kDriver, "{input}/program.py", seconds};
  sp.read_only = rt.read_only;
  sp.input = input;
  // code_eval kills its process when join(timeout + 1) returns with it alive.
  sp.wall_s = limits.timeout_s + 1.0;
  sp.memory_bytes = limits.memory_bytes;
  const std::string secret = make_secret();
  const SandboxRun run = run_sandboxed(sp, secret, &has_verdict);
  Outcome o;
  // No verdict from the driver: code_eval's "timed out", whatever ended the process (its result
  // list stays empty); lines without the secret are the program's, not the driver's.
  o.result = "timed out";
  if (const auto verdict = find_verdict(run.output, secret)) o.result = *verdict;
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
