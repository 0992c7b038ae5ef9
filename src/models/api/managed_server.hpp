// A server lm-eval starts for a run (vLLM's or SGLang's OpenAI-compatible server): a child
// process in its own process group on a free loopback port, its output in a log file, ready when
// GET <ready_path> answers 200, stopped with its whole group at the end, on errors and on stops.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lmeval::api {

struct ServerCommand {
  std::string what;                  // "vLLM server 1 of 2", for messages
  std::vector<std::string> argv;     // argv[0] is the program (a path or a name looked up on PATH)
  std::vector<std::string> env;      // extra NAME=value entries
  std::vector<std::string> secrets;  // values masked wherever the command or its log is shown
  std::string ready_path = "/v1/models";
  double ready_timeout_s = 1800;  // loading a large model takes minutes
};

// The body of GET url when it answers 200 within two seconds.
std::optional<std::string> http_get(const std::string& url);

// A free TCP port on 127.0.0.1 (bound to port 0, then released).
int free_loopback_port();

class ManagedServer {
 public:
  // Starts the process and waits until it is ready. Throws RuntimeError naming the command and
  // showing the log's tail when it exits or is not ready within the timeout; a stop signal
  // meanwhile throws Interrupted. `port` is where the command was told to listen.
  ManagedServer(ServerCommand command, int port);
  ~ManagedServer();  // stop()
  ManagedServer(const ManagedServer&) = delete;
  ManagedServer& operator=(const ManagedServer&) = delete;

  // SIGTERM to the group, then SIGKILL after a grace period; idempotent.
  void stop();

  std::string base_url() const;  // http://127.0.0.1:PORT
  pid_t pid() const { return pid_; }
  const std::filesystem::path& log_path() const { return log_; }
  // The last `lines` lines of the server's output.
  std::string log_tail(size_t lines = 30) const;

 private:
  void wait_ready();
  std::string scrub(std::string text) const;
  ServerCommand cmd_;
  int port_;
  pid_t pid_ = -1;
  std::filesystem::path log_;
};

}  // namespace lmeval::api
