// The sandbox of model-written programs. Everything the child does between clone/fork and exec
// is a plain system call on memory prepared before it (lm-eval has threads: no malloc, no locks),
// and a failure there is reported to the parent as (stage, errno) over a close-on-exec pipe, so
// that the parent can fall back to a lower level and say why.
#include "lmeval/tasks/functions/code_sandbox.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <set>

#include "lmeval/core/error.hpp"
#include "lmeval/core/log.hpp"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT (1 << 0)
#define SECBIT_NOROOT_LOCKED (1 << 1)
#define SECBIT_NO_SETUID_FIXUP (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED (1 << 5)
#endif

namespace lmeval::code_eval {

namespace fs = std::filesystem;

namespace {

constexpr int kResultFd = 3, kSecretFd = 4, kSyncFd = 5, kErrorFd = 6;
// The program's uid inside a user namespace made by root (mapped to fresh_id() outside).
constexpr uid_t kInsideId = 1000;

// As root, each sandbox runs under an id of its own (no account has it): sandboxes running side
// by side cannot signal each other's programs or share one RLIMIT_NPROC count.
uid_t fresh_id() {
  static std::atomic<unsigned> counter{0};
  return static_cast<uid_t>(1000000000u + (static_cast<unsigned>(::getpid()) % 100000u) * 1000u +
                            counter++ % 1000u);
}
constexpr size_t kMaxOutput = 1u << 16;

// Stages of the child's setup, named in the parent's messages.
enum Stage : int {
  kFds,
  kWaitMaps,
  kIds,
  kPrivate,
  kRootTmpfs,
  kMkdir,
  kTmpfs,
  kBind,
  kRemount,
  kSymlink,
  kDevice,
  kPivot,
  kDetach,
  kReadOnlyRoot,
  kFork,
  kDrop,
  kLimits,
  kNoNewPrivs,
  kLandlock,
  kSeccomp,
  kChdir,
  kExec,
};
constexpr const char* kStageNames[] = {"setting up file descriptors",
                                       "waiting for the id maps",
                                       "taking the mapped ids",
                                       "making mounts private",
                                       "mounting the new root",
                                       "creating a mount point",
                                       "mounting a tmpfs",
                                       "bind-mounting a folder",
                                       "making a bind mount read-only",
                                       "creating a symlink",
                                       "binding a device",
                                       "pivot_root",
                                       "detaching the old root",
                                       "making the root read-only",
                                       "forking the program",
                                       "dropping privileges",
                                       "setting rlimits",
                                       "no_new_privs",
                                       "restricting the file system (Landlock)",
                                       "installing the seccomp filter",
                                       "entering the working folder",
                                       "exec"};

struct MountOp {
  enum Kind { Mkdir, Tmpfs, Bind, Symlink, Device, Proc } kind;
  std::string a, b,
      data;  // Bind/Device: source, target; Tmpfs: target, -, options; Symlink: target, link
  unsigned long flags = 0;  // Bind: the source's locked flags, kept on the read-only remount
};

// Everything the child reads, built before it exists.
struct Plan {
  SandboxLevel level;
  bool root = false;
  uid_t id = 0;  // as root: the sandbox's uid and gid outside
  int result_w = -1, secret_r = -1, sync_r = -1, error_w = -1;
  std::vector<MountOp> mounts;
  std::string new_root, put_old, workdir;
  std::vector<char*> argv, envp;
  std::string exe;
  rlimit as{}, cpu{}, nproc{}, nofile{}, fsize{}, core{};
  sock_fprog filter{};
  bool have_filter = false;
  int landlock_abi = 0;  // level 1: > 0 when the kernel has Landlock
  bool reaper = false;   // level 1 as a user: a subreaper between lm-eval and the program
};

// Where the seccomp filter names the reaper's pid (and, negated, its group): patched by the
// reaper, which knows its pid only once it runs. Above any pid_max.
constexpr std::uint32_t kReaperSlot = 0x3ffffffeu;

[[noreturn]] void fail(Stage stage) {
  const int msg[2] = {stage, errno};
  [[maybe_unused]] ssize_t n = ::write(kErrorFd, msg, sizeof msg);
  ::_exit(125);
}

void must(bool ok, Stage stage) {
  if (!ok) fail(stage);
}

// Child: the four pipes onto 3..6, /dev/null onto 0..2, every other descriptor closed (other
// threads' pipes must not live on in a sandbox).
void setup_fds(const Plan& p) {
  const int src[4] = {p.result_w, p.secret_r, p.sync_r, p.error_w};
  int tmp[4];
  for (int i = 0; i < 4; ++i) {
    tmp[i] = src[i] < 0 ? -1 : ::fcntl(src[i], F_DUPFD, 16);
    if (src[i] >= 0 && tmp[i] < 0) ::_exit(125);
  }
  for (int i = 0; i < 4; ++i)
    if (tmp[i] >= 0 && ::dup2(tmp[i], 3 + i) < 0) ::_exit(125);
  const int null = ::open("/dev/null", O_RDWR);
  if (null < 0) ::_exit(125);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
  // close_range (Linux 5.9), else one by one.
  if (::syscall(SYS_close_range, 7u, ~0u, 0u) != 0)
    for (int fd = 7; fd < 65536; ++fd) ::close(fd);
  ::fcntl(kErrorFd, F_SETFD, FD_CLOEXEC);
  ::fcntl(kSyncFd, F_SETFD, FD_CLOEXEC);
}

void do_mounts(const Plan& p) {
  must(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, kPrivate);
  must(::mount("tmpfs", p.new_root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
               "size=4m,nr_inodes=4096,mode=0755") == 0,
       kRootTmpfs);
  for (const MountOp& m : p.mounts) {
    switch (m.kind) {
      case MountOp::Mkdir:
        must(::mkdir(m.a.c_str(), 0755) == 0 || errno == EEXIST, kMkdir);
        break;
      case MountOp::Tmpfs:
        must(::mount("tmpfs", m.a.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, m.data.c_str()) == 0,
             kTmpfs);
        break;
      case MountOp::Bind:
        must(::mount(m.a.c_str(), m.b.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0, kBind);
        must(::mount(nullptr, m.b.c_str(), nullptr,
                     MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | m.flags,
                     nullptr) == 0,
             kRemount);
        break;
      case MountOp::Symlink:
        must(::symlink(m.a.c_str(), m.b.c_str()) == 0 || errno == EEXIST, kSymlink);
        break;
      case MountOp::Device: {
        const int fd = ::open(m.b.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        must(fd >= 0, kDevice);
        ::close(fd);
        must(::mount(m.a.c_str(), m.b.c_str(), nullptr, MS_BIND, nullptr) == 0, kDevice);
        break;
      }
      case MountOp::Proc:
        // Not every kernel lets a namespace mount its proc (a masked /proc outside): then
        // there is none, which Python does not need.
        ::mount("proc", m.a.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
        break;
    }
  }
  must(::syscall(SYS_pivot_root, p.new_root.c_str(), p.put_old.c_str()) == 0, kPivot);
  must(::chdir("/") == 0, kPivot);
  must(::umount2("/.old", MNT_DETACH) == 0, kDetach);
  ::rmdir("/.old");
  must(::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
               nullptr) == 0,
       kReadOnlyRoot);
}

// --- Landlock (level 1: no mount namespace makes the rest of the system read-only) ------------
// The kernel's own ABI, spelled out here: the system's linux/landlock.h may predate ABI 6.

struct LandlockRuleset {
  std::uint64_t handled_access_fs = 0, handled_access_net = 0, scoped = 0;
};
struct __attribute__((packed)) LandlockPathBeneath {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
};
constexpr std::uint64_t kLlWriteFile = 1u << 1, kLlTruncate = 1u << 14;
// Every right that changes the file system, by the ABI that brought it (1: write, remove, make;
// 2: refer; 3: truncate).
constexpr std::uint64_t landlock_write_rights(int abi) {
  std::uint64_t r = kLlWriteFile;
  for (int bit = 4; bit <= 12; ++bit) r |= std::uint64_t{1} << bit;
  if (abi >= 2) r |= std::uint64_t{1} << 13;
  if (abi >= 3) r |= kLlTruncate;
  return r;
}

int landlock_abi() {
  static const int abi = [] {
    const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, 1u /* VERSION */);
    return v > 0 ? static_cast<int>(v) : 0;
  }();
  return abi;
}

// Child: writes only beneath the working folder (and to /dev/null); from ABI 4 no TCP bind or
// connect, from ABI 6 no signal to a process outside the sandbox and no abstract unix socket
// outside it. Reading stays as the uid allows.
void restrict_file_system(const Plan& p) {
  const int abi = p.landlock_abi;
  LandlockRuleset attr;
  attr.handled_access_fs = landlock_write_rights(abi);
  size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = 3;  // BIND_TCP | CONNECT_TCP, no rule allows either
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = 3;  // ABSTRACT_UNIX_SOCKET | SIGNAL
    size = sizeof attr;
  }
  const int rs = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0u));
  must(rs >= 0, kLandlock);
  const struct {
    const char* path;
    std::uint64_t rights;
  } allowed[] = {{p.workdir.c_str(), attr.handled_access_fs},
                 {"/dev/null", kLlWriteFile | (abi >= 3 ? kLlTruncate : 0)}};
  for (const auto& a : allowed) {
    const int fd = ::open(a.path, O_PATH | O_CLOEXEC);
    must(fd >= 0, kLandlock);
    const LandlockPathBeneath rule{a.rights, fd};
    must(::syscall(SYS_landlock_add_rule, rs, 1 /* PATH_BENEATH */, &rule, 0u) == 0, kLandlock);
    ::close(fd);
  }
  must(::syscall(SYS_landlock_restrict_self, rs, 0u) == 0, kLandlock);
  ::close(rs);
}

// Child, last steps: no privileges left, the limits, the filter, then the interpreter.
[[noreturn]] void drop_and_exec(const Plan& p) {
  const bool inside_root = p.level == SandboxLevel::user_namespaces && !p.root;
  if (inside_root) {
    // Root inside the namespace (the only mapped id): no capability may survive exec.
    must(::prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                        SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED) ==
             0,
         kDrop);
  }
  if (p.level != SandboxLevel::process || p.root) {
    for (int cap = 0; cap <= 63; ++cap) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  }
  if (p.root) {
    // Raw system calls: glibc's would signal threads that exist only in the parent. Leaving
    // uid 0 clears every capability.
    const uid_t id = p.level == SandboxLevel::user_namespaces ? kInsideId : p.id;
    must(::syscall(SYS_setgroups, 0, nullptr) == 0, kDrop);
    must(::syscall(SYS_setresgid, id, id, id) == 0, kDrop);
    must(::syscall(SYS_setresuid, id, id, id) == 0, kDrop);
  }
  if (inside_root) {
    __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    must(::syscall(SYS_capset, &hdr, data) == 0, kDrop);
  }
  must(::setrlimit(RLIMIT_AS, &p.as) == 0 && ::setrlimit(RLIMIT_CPU, &p.cpu) == 0 &&
           ::setrlimit(RLIMIT_NPROC, &p.nproc) == 0 && ::setrlimit(RLIMIT_NOFILE, &p.nofile) == 0 &&
           ::setrlimit(RLIMIT_FSIZE, &p.fsize) == 0 && ::setrlimit(RLIMIT_CORE, &p.core) == 0,
       kLimits);
  must(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, kNoNewPrivs);
  if (p.level == SandboxLevel::process && p.landlock_abi > 0) restrict_file_system(p);
  if (p.have_filter)
    must(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p.filter, 0, 0) == 0, kSeccomp);
  must(::chdir(p.workdir.c_str()) == 0, kChdir);
  ::close(kSyncFd);
  ::execve(p.exe.c_str(), p.argv.data(), p.envp.data());
  fail(kExec);
}

// The namespaced child is pid 1 of its namespace: it sets up the mounts, starts the program as
// pid 2 and reaps whatever is reparented to it until the program ends. Killing it (the parent
// does, at the end) makes the kernel kill everything else in the namespace.
[[noreturn]] void namespace_init(const Plan& p) {
  setup_fds(p);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (p.level == SandboxLevel::user_namespaces) {
    char byte;
    must(::read(kSyncFd, &byte, 1) == 1, kWaitMaps);
    // As a user, the one mapped id is this user's own, root inside: take it (the mounts below
    // create files). As root, root stays root inside, for the mounts, and the program becomes
    // kInsideId below.
    if (!p.root)
      must(::syscall(SYS_setresgid, 0, 0, 0) == 0 && ::syscall(SYS_setresuid, 0, 0, 0) == 0, kIds);
  }
  // Its memory is a copy of lm-eval's: not readable through /proc by the program.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ::setsid();
  do_mounts(p);
  const pid_t child =
      static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  must(child >= 0, kFork);
  if (child == 0) drop_and_exec(p);
  ::close(kResultFd);
  ::close(kSecretFd);
  ::close(kSyncFd);
  ::close(kErrorFd);
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(-1, &status, 0);
    if (r == child) ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    if (r < 0 && errno == ECHILD) ::_exit(0);
  }
}

// Level 1 as a user: no uid of its own whose processes could all be killed, so this process,
// the session's leader, is the program's parent and a child subreaper: whatever leaves the
// session (double fork + setsid) is reparented to it. When lm-eval closes the sync socket it
// kills its children, reaps them, and again, until none is left (each round reaps one; killed
// processes' children come back to it). The program cannot signal it (seccomp; Landlock's scope).
[[noreturn]] void reap_everything() {
  const long self = ::syscall(SYS_getpid);
  char path[64] = "/proc/self/task/";
  {
    char digits[24];
    int n = 0;
    for (long v = self; v > 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
    size_t at = std::strlen(path);
    while (n > 0) path[at++] = digits[--n];
    std::memcpy(path + at, "/children", 10);
  }
  for (int round = 0; round < 100000; ++round) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char buf[8192];
      const ssize_t got = ::read(fd, buf, sizeof buf - 1);
      ::close(fd);
      long pid = 0;
      for (ssize_t i = 0; i < std::max<ssize_t>(got, 0); ++i) {
        if (buf[i] >= '0' && buf[i] <= '9') {
          pid = pid * 10 + (buf[i] - '0');
        } else {
          if (pid > 0) ::kill(static_cast<pid_t>(pid), SIGKILL);
          pid = 0;
        }
      }
    }
    int status = 0;
    const pid_t r = ::waitpid(-1, &status, 0);
    if (r < 0 && errno == ECHILD) ::_exit(0);
  }
  ::_exit(0);
}

[[noreturn]] void process_child(const Plan& p) {
  setup_fds(p);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  ::setsid();
  if (!p.reaper) drop_and_exec(p);
  must(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, kFork);
  const auto self = static_cast<std::uint32_t>(::syscall(SYS_getpid));
  for (unsigned short i = 0; i < p.filter.len; ++i) {
    if (p.filter.filter[i].k == kReaperSlot) p.filter.filter[i].k = self;
    if (p.filter.filter[i].k == static_cast<std::uint32_t>(-kReaperSlot))
      p.filter.filter[i].k = static_cast<std::uint32_t>(-static_cast<std::int64_t>(self));
  }
  const pid_t child =
      static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  must(child >= 0, kFork);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    drop_and_exec(p);
  }
  // The program's descriptors are its own: end of file reaches lm-eval when it closes them.
  ::close(kResultFd);
  ::close(kSecretFd);
  ::close(kErrorFd);
  for (;;) {
    pollfd pf{kSyncFd, POLLIN, 0};
    const int r = ::poll(&pf, 1, 100);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    if (r > 0) break;  // closed by lm-eval (or a byte): the end
    if (r < 0 && errno != EINTR) break;
  }
  reap_everything();
}

// --- the seccomp filter -------------------------------------------------------------------

#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr std::uint32_t kArch = 0;
#endif

constexpr std::uint32_t kAllow = SECCOMP_RET_ALLOW;
constexpr std::uint32_t errno_ret(int e) { return SECCOMP_RET_ERRNO | (e & SECCOMP_RET_DATA); }
constexpr std::uint32_t kArg0 = offsetof(seccomp_data, args);  // its low half (little endian)

struct Filter {
  std::vector<sock_filter> code;
  void stmt(std::uint16_t c, std::uint32_t k) { code.push_back(BPF_STMT(c, k)); }
  void jump(std::uint16_t c, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    code.push_back(BPF_JUMP(c, k, jt, jf));
  }
  void deny(long nr, int e = EPERM) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1);
    stmt(BPF_RET | BPF_K, errno_ret(e));
  }
  // When the syscall is `nr`: its first argument decides (in `values` or matching `mask`: the
  // error; else allowed). Leaves A clobbered only on the paths that return.
  void first_arg(long nr, const std::vector<std::uint32_t>& values, std::uint32_t mask,
                 bool deny_matching, int e) {
    const size_t body = 1 + values.size() + (mask ? 1 : 0) + 2;
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0,
         static_cast<std::uint8_t>(body));
    stmt(BPF_LD | BPF_W | BPF_ABS, kArg0);
    size_t left = values.size() + (mask ? 1 : 0);
    for (std::uint32_t v : values) {
      --left;
      jump(BPF_JMP | BPF_JEQ | BPF_K, v, static_cast<std::uint8_t>(left + 1), 0);
    }
    if (mask) jump(BPF_JMP | BPF_JSET | BPF_K, mask, 1, 0);
    // Not matched, then matched.
    stmt(BPF_RET | BPF_K, deny_matching ? kAllow : errno_ret(e));
    stmt(BPF_RET | BPF_K, deny_matching ? errno_ret(e) : kAllow);
  }
};

std::vector<sock_filter> build_filter(SandboxLevel level, pid_t parent, pid_t parent_group) {
  Filter f;
  if (kArch == 0) return {};
  f.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  f.jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0);
  f.stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f.stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
#if defined(__x86_64__)
  f.jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);  // the x32 ABI: none of it
  f.stmt(BPF_RET | BPF_K, errno_ret(EPERM));
#endif
  for (long nr : {
#ifdef __NR_ptrace
           (long)__NR_ptrace,
#endif
           (long)__NR_process_vm_readv,
           (long)__NR_process_vm_writev,
           (long)__NR_mount,
           (long)__NR_umount2,
           (long)__NR_pivot_root,
           (long)__NR_chroot,
           (long)__NR_unshare,
           (long)__NR_setns,
           (long)__NR_keyctl,
           (long)__NR_add_key,
           (long)__NR_request_key,
           (long)__NR_bpf,
           (long)__NR_perf_event_open,
           (long)__NR_userfaultfd,
           (long)__NR_kexec_load,
           (long)__NR_init_module,
           (long)__NR_finit_module,
           (long)__NR_delete_module,
           (long)__NR_reboot,
           (long)__NR_swapon,
           (long)__NR_swapoff,
           (long)__NR_acct,
           (long)__NR_settimeofday,
           (long)__NR_clock_settime,
           (long)__NR_adjtimex,
           (long)__NR_open_by_handle_at,
           (long)__NR_name_to_handle_at,
           (long)__NR_io_uring_setup,
           (long)__NR_io_uring_enter,
           (long)__NR_io_uring_register,
           (long)__NR_fanotify_init,
           (long)__NR_quotactl,
           (long)__NR_syslog,
           (long)__NR_open_tree,
           (long)__NR_move_mount,
           (long)__NR_fsopen,
           (long)__NR_fsconfig,
           (long)__NR_fsmount,
           (long)__NR_fspick,
           (long)__NR_pidfd_getfd,
#ifdef __NR_iopl
           (long)__NR_iopl,
           (long)__NR_ioperm,
#endif
       })
    f.deny(nr);
  // clone3 cannot be inspected (its flags are behind a pointer): ENOSYS makes glibc use clone.
  f.deny(__NR_clone3, ENOSYS);
  // No new namespaces (they would give the program capabilities over them).
  f.first_arg(__NR_clone, {},
              CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                  CLONE_NEWUTS | CLONE_NEWCGROUP,
              true, EPERM);
  // Sockets of AF_UNIX only (multiprocessing's pipes); no network at any level.
  f.first_arg(__NR_socket, {AF_UNIX}, 0, false, EACCES);
  f.first_arg(__NR_socketpair, {AF_UNIX}, 0, false, EACCES);
  if (level == SandboxLevel::process) {
    // Without a pid namespace lm-eval is visible: no signal may reach it or its group.
    // And none may reach the reaper (kReaperSlot, patched to its pid), its group or the own
    // group (0), which is the reaper's until the program leaves it.
    const std::vector<std::uint32_t> them = {
        static_cast<std::uint32_t>(parent),       static_cast<std::uint32_t>(-parent_group),
        static_cast<std::uint32_t>(-1),           kReaperSlot,
        static_cast<std::uint32_t>(-kReaperSlot), 0u};
    f.first_arg(__NR_kill, them, 0, true, EPERM);
    for (long nr : {(long)__NR_tgkill, (long)__NR_rt_sigqueueinfo, (long)__NR_rt_tgsigqueueinfo,
                    (long)__NR_pidfd_open})
      f.first_arg(nr, {static_cast<std::uint32_t>(parent), kReaperSlot}, 0, true, EPERM);
    f.first_arg(__NR_tkill, {static_cast<std::uint32_t>(parent), kReaperSlot}, 0, true, EPERM);
  }
  f.stmt(BPF_RET | BPF_K, kAllow);
  return f.code;
}

// --- levels -------------------------------------------------------------------------------

std::atomic<int> g_best{static_cast<int>(SandboxLevel::user_namespaces)};
std::atomic<int> g_cap{static_cast<int>(SandboxLevel::user_namespaces)};
std::mutex g_log_mutex;
std::set<int> g_logged;

void note_level(SandboxLevel level, const std::string& why_not_higher) {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  if (!g_logged.insert(static_cast<int>(level)).second) return;
  std::string msg = "code execution sandbox: " + describe(level);
  if (!why_not_higher.empty()) msg += " (a higher level failed: " + why_not_higher + ")";
  if (level == SandboxLevel::user_namespaces)
    log::info(msg);
  else
    log::warn(msg);
}

std::string replace_input(const std::string& arg, const std::string& input) {
  std::string out = arg;
  const size_t at = out.find("{input}");
  if (at != std::string::npos) out.replace(at, 7, input);
  return out;
}

unsigned long locked_flags(const fs::path& path) {
  struct statvfs s {};
  if (::statvfs(path.c_str(), &s) != 0) return 0;
  unsigned long f = 0;
  if (s.f_flag & ST_NOEXEC) f |= MS_NOEXEC;
  if (s.f_flag & ST_NOATIME) f |= MS_NOATIME;
  if (s.f_flag & ST_NODIRATIME) f |= MS_NODIRATIME;
  if (s.f_flag & ST_RELATIME) f |= MS_RELATIME;
  return f;
}

// Mkdir ops for every component of `inside` (an absolute path) under the new root.
void mkdirs(std::vector<MountOp>& ops, const std::string& root, const fs::path& inside,
            std::set<std::string>& made) {
  fs::path at = root;
  for (const auto& part : inside.relative_path()) {
    at /= part;
    if (made.insert(at.string()).second) ops.push_back({MountOp::Mkdir, at.string(), "", ""});
  }
}

std::vector<MountOp> plan_mounts(const SandboxedProgram& prog, const std::string& root) {
  std::vector<MountOp> ops;
  std::set<std::string> made;
  auto dir = [&](const std::string& inside) { mkdirs(ops, root, inside, made); };
  dir("/tmp");
  ops.push_back({MountOp::Tmpfs, root + "/tmp", "", "size=64m,nr_inodes=4096,mode=1777"});
  dir("/dev/shm");
  ops.push_back({MountOp::Tmpfs, root + "/dev/shm", "", "size=16m,nr_inodes=256,mode=1777"});
  for (const char* dev : {"null", "zero", "full", "random", "urandom"})
    if (fs::exists(std::string("/dev/") + dev))
      ops.push_back({MountOp::Device, std::string("/dev/") + dev, root + "/dev/" + dev, ""});
  ops.push_back({MountOp::Symlink, "/proc/self/fd", root + "/dev/fd", ""});
  dir("/proc");
  ops.push_back({MountOp::Proc, root + "/proc", "", ""});
  // The system's programs and libraries, then the interpreter's folders outside them.
  std::vector<fs::path> wanted = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc"};
  for (const auto& p : prog.read_only) wanted.push_back(p);
  std::vector<fs::path> bound;
  for (const fs::path& p : wanted) {
    std::error_code ec;
    const auto st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st)) continue;
    if (fs::is_symlink(st) && p.parent_path() == "/") {
      // /bin -> usr/bin on a merged /usr: the same link inside.
      ops.push_back({MountOp::Symlink, fs::read_symlink(p, ec).string(), root + p.string(), ""});
      continue;
    }
    const fs::path real = fs::weakly_canonical(p, ec);
    if (ec || real == "/" || !fs::is_directory(real)) continue;
    bool covered = false;
    for (const auto& b : bound) {
      const auto rel = real.lexically_relative(b);
      if (!rel.empty() && *rel.begin() != "..") covered = true;
    }
    if (covered) continue;
    bound.push_back(real);
    dir(real.string());
    ops.push_back({MountOp::Bind, real.string(), root + real.string(), "", locked_flags(real)});
  }
  dir("/run/lmeval");
  ops.push_back(
      {MountOp::Bind, prog.input.string(), root + "/run/lmeval", "", locked_flags(prog.input)});
  dir("/.old");
  return ops;
}

// Level 1 as root: every process of the sandbox's own uid, wherever it went (a double fork and
// setsid leave the session), is killed by a child that takes that uid: kill(-1) reaches exactly
// the processes it may signal, and the kernel lets none fork past a pending SIGKILL.
void kill_uid(uid_t id) {
  const pid_t pid =
      static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
  if (pid == 0) {
    if (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setresgid, id, id, id) != 0 ||
        ::syscall(SYS_setresuid, id, id, id) != 0)
      ::_exit(1);
    for (int i = 0; i < 1000 && ::kill(-1, SIGKILL) == 0; ++i) {
    }
    ::_exit(0);
  }
  if (pid < 0) return;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

struct Attempt {
  bool started = false;
  std::string why;  // when not started
  SandboxRun run;
};

int make_pipe(int fds[2]) { return ::pipe2(fds, O_CLOEXEC); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool write_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

Attempt attempt(SandboxLevel level, const SandboxedProgram& prog, const std::string& secret,
                bool (*enough)(const std::string&, const std::string&)) {
  Attempt out;
  out.run.level = level;
  const bool root = ::geteuid() == 0;
  const bool namespaced = level != SandboxLevel::process;
  Plan p;
  p.level = level;
  p.root = root;
  p.id = root ? fresh_id() : 0;
  p.landlock_abi = namespaced ? 0 : landlock_abi();
  p.reaper = !namespaced && !root;
  const std::string input_inside = namespaced ? "/run/lmeval" : prog.input.string();
  fs::path scratch;  // level 1's working folder (namespaces have their private /tmp)
  if (namespaced) {
    p.new_root = (prog.input.parent_path() / "root").string();
    p.put_old = p.new_root + "/.old";
    std::error_code ec;
    fs::create_directories(p.new_root, ec);
    p.mounts = plan_mounts(prog, p.new_root);
    p.workdir = "/tmp";
  } else {
    scratch = prog.input.parent_path() / "work";
    std::error_code ec;
    fs::create_directories(scratch, ec);
    if (root && ::chown(scratch.c_str(), p.id, p.id) != 0) {
      out.why =
          "cannot hand " + scratch.string() + " to the sandbox's uid: " + std::strerror(errno);
      return out;
    }
    p.workdir = scratch.string();
  }
  p.exe = prog.exe.string();
  std::vector<std::string> argv_s = {p.exe};
  for (const auto& a : prog.args) argv_s.push_back(replace_input(a, input_inside));
  const std::string tmp = namespaced ? "/tmp" : scratch.string();
  std::vector<std::string> env_s = {"PATH=/usr/local/bin:/usr/bin:/bin",
                                    "HOME=" + tmp,
                                    "TMPDIR=" + tmp,
                                    "LANG=C.UTF-8",
                                    "OMP_NUM_THREADS=1",
                                    "PYTHONDONTWRITEBYTECODE=1"};
  for (auto& s : argv_s) p.argv.push_back(s.data());
  p.argv.push_back(nullptr);
  for (auto& s : env_s) p.envp.push_back(s.data());
  p.envp.push_back(nullptr);
  // RLIMIT_CPU a second past the wall-clock kill: a safety net.
  const auto cpu = static_cast<rlim_t>(std::ceil(prog.wall_s)) + 2;
  p.as = {static_cast<rlim_t>(prog.memory_bytes), static_cast<rlim_t>(prog.memory_bytes)};
  p.cpu = {cpu, cpu + 1};
  p.nproc = {256, 256};
  p.nofile = {256, 256};
  p.fsize = {64u << 20, 64u << 20};
  p.core = {0, 0};
  const auto code = build_filter(level, ::getpid(), ::getpgrp());
  if (!code.empty()) {
    p.filter.len = static_cast<unsigned short>(code.size());
    p.filter.filter = const_cast<sock_filter*>(code.data());
    p.have_filter = true;
  }

  int result[2] = {-1, -1}, error[2] = {-1, -1}, secret_sp[2] = {-1, -1}, sync_sp[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd : {&result[0], &result[1], &error[0], &error[1], &secret_sp[0], &secret_sp[1],
                    &sync_sp[0], &sync_sp[1]})
      close_fd(*fd);
  };
  // Sockets, not pipes, where the parent writes: MSG_NOSIGNAL, no SIGPIPE if the child is gone.
  if (make_pipe(result) != 0 || make_pipe(error) != 0 ||
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, secret_sp) != 0 ||
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_sp) != 0) {
    close_all();
    throw RuntimeError(std::string("code execution: cannot create pipes: ") + std::strerror(errno));
  }
  p.result_w = result[1];
  p.secret_r = secret_sp[1];
  p.sync_r = sync_sp[1];
  p.error_w = error[1];

  pid_t pid;
  if (namespaced) {
    unsigned long flags =
        CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
    if (level == SandboxLevel::user_namespaces) flags |= CLONE_NEWUSER;
    // The raw system call: glibc's clone wants a new stack; this one forks (copies this one).
    pid = static_cast<pid_t>(::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr));
    if (pid == 0) namespace_init(p);
  } else {
    pid = static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
    if (pid == 0) process_child(p);
  }
  if (pid < 0) {
    out.why = std::string(namespaced ? "clone" : "fork") + ": " + std::strerror(errno);
    close_all();
    return out;
  }
  close_fd(result[1]);
  close_fd(error[1]);
  close_fd(secret_sp[1]);
  close_fd(sync_sp[1]);
  auto kill_and_reap = [&] {
    if (p.reaper) {
      // The reaper kills what the program started, then exits; 2 s at most.
      close_fd(sync_sp[0]);
      for (int i = 0; i < 200; ++i) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR)) return;
        ::usleep(10000);
      }
    }
    if (!namespaced) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!namespaced && root) kill_uid(p.id);
  };
  if (level == SandboxLevel::user_namespaces) {
    const std::string pre = "/proc/" + std::to_string(pid) + "/";
    // As root: root inside for the mounts, kInsideId (this sandbox's own id outside) for the
    // program. As a user: the user's one id, root inside.
    const std::string own = std::to_string(p.id);
    const std::string uid_map = root ? "0 0 1\n" + std::to_string(kInsideId) + " " + own + " 1\n"
                                     : "0 " + std::to_string(::geteuid()) + " 1\n";
    const std::string gid_map = root ? "0 0 1\n" + std::to_string(kInsideId) + " " + own + " 1\n"
                                     : "0 " + std::to_string(::getegid()) + " 1\n";
    const bool ok = (root || write_file(pre + "setgroups", "deny")) &&
                    write_file(pre + "uid_map", uid_map) && write_file(pre + "gid_map", gid_map);
    if (!ok) {
      out.why = std::string("writing the user namespace's id maps: ") + std::strerror(errno);
      kill_and_reap();
      close_all();
      return out;
    }
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::send(sync_sp[0], &byte, 1, MSG_NOSIGNAL);
  }
  if (!p.reaper) close_fd(sync_sp[0]);
  [[maybe_unused]] ssize_t sent = ::send(secret_sp[0], secret.data(), secret.size(), MSG_NOSIGNAL);
  close_fd(secret_sp[0]);

  const auto start = std::chrono::steady_clock::now();
  auto ms_left = [&](double seconds) {
    const auto deadline = start + std::chrono::duration<double>(seconds);
    return static_cast<int>(std::max<long long>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                 std::chrono::steady_clock::now())
               .count()));
  };
  // The setup's verdict: end of file once the program is exec'd, (stage, errno) if it failed.
  int msg[2] = {-1, 0};
  size_t got = 0;
  for (;;) {
    pollfd pf{error[0], POLLIN, 0};
    const int r = ::poll(&pf, 1, ms_left(10.0));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      msg[0] = kExec;
      msg[1] = ETIMEDOUT;
      got = sizeof msg;
      break;
    }
    const ssize_t n = ::read(error[0], reinterpret_cast<char*>(msg) + got, sizeof msg - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (got == sizeof msg) break;
  }
  if (got != 0) {
    const int stage = msg[0];
    out.why = std::string(stage >= 0 && stage <= kExec ? kStageNames[stage] : "setup") + ": " +
              std::strerror(msg[1]);
    if (stage == kExec && msg[1] == EACCES && !namespaced && root)
      out.why +=
          " (without namespaces the program runs under a uid of its own, which must be "
          "able to read and run " +
          p.exe + " and its folders)";
    kill_and_reap();
    close_all();
    return out;
  }
  out.started = true;
  char buf[4096];
  const double wall = prog.wall_s;
  while (out.run.output.size() < kMaxOutput && !enough(out.run.output, secret)) {
    const int left = ms_left(wall);
    if (left <= 0) break;
    pollfd pf{result[0], POLLIN, 0};
    const int r = ::poll(&pf, 1, left);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    const ssize_t n = ::read(result[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.run.output.append(buf, static_cast<size_t>(n));
  }
  kill_and_reap();
  close_all();
  return out;
}

}  // namespace

std::string describe(SandboxLevel level) {
  switch (level) {
    case SandboxLevel::user_namespaces:
      return "user, pid, network, mount, IPC and UTS namespaces: the program sees only its own "
             "processes (all killed with it), has no network, an empty environment, a read-only "
             "system and a private 64 MiB /tmp, no capabilities, seccomp, rlimits";
    case SandboxLevel::namespaces_as_root:
      return "pid, network, mount, IPC and UTS namespaces as root, the program under a uid of its "
             "own: it "
             "sees only its own processes (all killed with it), has no network, an empty "
             "environment, a read-only system and a private 64 MiB /tmp, seccomp, rlimits";
    case SandboxLevel::process: {
      const bool root = ::geteuid() == 0;
      std::string d = "no namespaces: its own session, ";
      d += root ? "a uid of its own (every process of it killed at the end; it reads only what "
                  "anyone may)"
                : "the user's own uid (a subreaper kills what leaves the session; it reads the "
                  "user's files)";
      d += ", an empty environment, seccomp (no network sockets, no signals to lm-eval), rlimits, ";
      d += landlock_abi() > 0 ? "Landlock (writes only in its working folder)"
                              : (root ? "no Landlock (it writes wherever anyone may)"
                                      : "no Landlock (it writes wherever the user can)");
      return d;
    }
  }
  return "";
}

bool landlock_available() { return landlock_abi() > 0; }

SandboxLevel sandbox_level() {
  int level = std::min(g_best.load(), g_cap.load());
  // Level 2 is root's: below level 3 a user gets level 1.
  if (level == static_cast<int>(SandboxLevel::namespaces_as_root) && ::geteuid() != 0) level = 1;
  return static_cast<SandboxLevel>(level);
}

void cap_sandbox_level(SandboxLevel highest) { g_cap = static_cast<int>(highest); }

SandboxRun run_sandboxed(const SandboxedProgram& program, const std::string& secret,
                         bool (*enough)(const std::string&, const std::string&)) {
  std::string why;
  for (int level = static_cast<int>(sandbox_level()); level >= 1; --level) {
    const auto l = static_cast<SandboxLevel>(level);
    if (l == SandboxLevel::namespaces_as_root && ::geteuid() != 0) continue;
    Attempt a = attempt(l, program, secret, enough);
    if (a.started) {
      note_level(l, why);
      return a.run;
    }
    why += (why.empty() ? "" : "; ") + std::string("level ") + std::to_string(level) + ": " + a.why;
    // The next program starts below the level that failed (machines do not change mid-run);
    // level 1 failing says nothing of the levels above it.
    if (level == 1) break;
    int expected = g_best.load();
    while (expected > level - 1 && !g_best.compare_exchange_weak(expected, level - 1)) {
    }
  }
  throw RuntimeError("code execution: no sandbox could start the program (" + why + ")");
}

}  // namespace lmeval::code_eval
