// LD_PRELOAD probe for tests/cli/lazy_torch_test.cpp and lazy_python_test.cpp: when the process
// exits, appends the lines of its own /proc/self/maps that name libtorch, c10 or libpython (and
// lm-eval's Python plugin) to $LMEVAL_MAPS_PROBE_OUT, then a marker line
// (so a test can tell "nothing mapped" from "the probe never ran").
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__attribute__((destructor)) void dump_torch_mappings() {
  const char* out_path = std::getenv("LMEVAL_MAPS_PROBE_OUT");
  if (!out_path || !*out_path) return;
  FILE* maps = std::fopen("/proc/self/maps", "r");
  FILE* out = std::fopen(out_path, "a");
  if (!maps || !out) {
    if (maps) std::fclose(maps);
    if (out) std::fclose(out);
    return;
  }
  char line[8192];
  while (std::fgets(line, sizeof line, maps))
    if (std::strstr(line, "libtorch") || std::strstr(line, "libc10") ||
        std::strstr(line, "libpython") || std::strstr(line, "liblmeval_python"))
      std::fputs(line, out);
  std::fputs("maps-probe-ran\n", out);
  std::fclose(maps);
  std::fclose(out);
}

}  // namespace
