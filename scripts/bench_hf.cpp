// Benchmark of the hf backend: multiple-choice style loglikelihood requests on a model folder;
// prints tokens/s, achieved GFLOP/s, the ratio to torch's matmul GFLOP/s and peak RSS.
// Built and run by scripts/bench_hf (not a test).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "lmeval/core/error.hpp"
#include "models/hf/hf_lm.hpp"

using namespace lmeval;
using namespace lmeval::hf;

namespace {

double current_rss_mib() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  double kib = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "VmRSS: %lf", &kib) == 1) break;
  std::fclose(f);
  return kib / 1024.0;
}

std::string load_average() {
  std::FILE* f = std::fopen("/proc/loadavg", "r");
  char buf[128] = "?\n";
  if (f) {
    if (!std::fgets(buf, sizeof buf, f)) buf[0] = 0;
    std::fclose(f);
  }
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_hf MODEL_DIR [requests=2000] [batch_size=auto] [dtype=auto] "
                 "[share=1] [ctx_min=60] [ctx_max=200] [cont_min=4] [cont_max=30]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int requests = argc > 2 ? std::stoi(argv[2]) : 2000;
  const std::string batch = argc > 3 ? argv[3] : "auto";
  const std::string dtype = argc > 4 ? argv[4] : "auto";
  const bool share = argc > 5 ? std::stoi(argv[5]) != 0 : true;
  const int ctx_min = argc > 6 ? std::stoi(argv[6]) : 60,
            ctx_max = argc > 7 ? std::stoi(argv[7]) : 200;
  const int cont_min = argc > 8 ? std::stoi(argv[8]) : 4,
            cont_max = argc > 9 ? std::stoi(argv[9]) : 30;
  const std::string loadavg = load_average();
  try {
    const double rss_before_load = current_rss_mib();
    auto t0 = std::chrono::steady_clock::now();
    Json args = {{"pretrained", dir}, {"dtype", dtype}, {"batch_size", batch}};
    HFLM lm(parse_hf_args(args, {}));
    lm.set_prefix_sharing(share);
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t params = lm.transformer().num_parameters();
    const int64_t V = lm.transformer().config().vocab_size;
    // Questions of 4 choices sharing a context, as ARC/HellaSwag/MMLU requests.
    std::mt19937_64 rng(1234);
    auto uni = [&](int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng); };
    std::vector<TokenPair> reqs;
    int64_t tokens = 0;
    while (static_cast<int>(reqs.size()) < requests) {
      std::vector<Token> ctx(static_cast<size_t>(uni(ctx_min, ctx_max)));
      ctx[0] = 1;
      for (size_t i = 1; i < ctx.size(); ++i) ctx[i] = uni(3, static_cast<int>(V) - 1);
      for (int c = 0; c < 4 && static_cast<int>(reqs.size()) < requests; ++c) {
        std::vector<Token> cont(static_cast<size_t>(uni(cont_min, cont_max)));
        for (auto& t : cont) t = uni(3, static_cast<int>(V) - 1);
        tokens += static_cast<int64_t>(ctx.size() + cont.size() - 1);
        reqs.emplace_back(ctx, cont);
      }
    }
    const double mm = lm.transformer().measure_matmul_gflops(1024, 20);
    const double rss_before_scoring = current_rss_mib();
    auto t1 = std::chrono::steady_clock::now();
    auto res = lm.loglikelihood_tokens(reqs, "loglikelihood");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    const double mm_after = lm.transformer().measure_matmul_gflops(1024, 20);
    double checksum = 0;
    for (const auto& r : res) checksum += r.loglikelihood;
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const int64_t fed = lm.fed_tokens("loglikelihood");
    const int64_t max_batch = lm.max_batch_tokens("loglikelihood");
    const double gflops = 2.0 * static_cast<double>(params) * static_cast<double>(fed) / s / 1e9;
    const double eff_gflops =
        2.0 * static_cast<double>(params) * static_cast<double>(tokens) / s / 1e9;
    const double mm_avg = 0.5 * (mm + mm_after);
    const double elt = lm.transformer().dtype_name() == "torch.float32" ? 4 : 2;
    const double weights_mib = static_cast<double>(params) * elt / (1 << 20);
    const double act_mib =
        static_cast<double>(max_batch) * lm.transformer().activation_bytes_per_token(0) / (1 << 20);
    const double peak_mib = ru.ru_maxrss / 1024.0;
    // The bound counts the model (weights + one batch + 20 %); what the process held
    // before scoring besides the weights (libraries, OpenBLAS's buffers, the requests) is added.
    const double base_mib = rss_before_scoring - weights_mib;
    const double bound_mib = base_mib + 1.2 * (weights_mib + act_mib);
    std::printf("load average at start: %s", loadavg.c_str());
    std::printf("model: %s (%lld parameters, %s, %s)\n", dir.c_str(),
                static_cast<long long>(params), lm.transformer().dtype_name().c_str(),
                lm.transformer().on_cuda() ? "cuda" : "cpu");
    std::printf("prefix sharing: %s, batch-invariant path: %s\n", share ? "on" : "off",
                lm.transformer().batch_invariant() ? "yes" : "no");
    std::printf("load: %.2f s\n", load_s);
    std::printf(
        "requests: %d, tokens requested (ctx + cont - 1 each): %lld, tokens fed: %lld, time: %.2f "
        "s\n",
        requests, static_cast<long long>(tokens), static_cast<long long>(fed), s);
    std::printf("tokens/s: %.1f fed, %.1f requested\n", static_cast<double>(fed) / s,
                static_cast<double>(tokens) / s);
    std::printf("achieved GFLOP/s (2 x params x tokens fed / time): %.1f\n", gflops);
    std::printf("effective GFLOP/s (2 x params x tokens requested / time): %.1f\n", eff_gflops);
    std::printf("torch matmul GFLOP/s (1024^3 mm, before/after): %.1f / %.1f\n", mm, mm_after);
    std::printf("ratio: %.1f%% (fed), %.1f%% (effective)\n", 100.0 * gflops / mm_avg,
                100.0 * eff_gflops / mm_avg);
    std::printf(
        "memory: peak RSS %.1f MiB; before loading %.1f MiB; before scoring %.1f MiB; weights %.1f "
        "MiB; largest batch %lld tokens "
        "x %.1f KiB = %.1f MiB of activations\n",
        peak_mib, rss_before_load, rss_before_scoring, weights_mib,
        static_cast<long long>(max_batch), lm.transformer().activation_bytes_per_token(0) / 1024.0,
        act_mib);
    std::printf(
        "memory check (peak <= (RSS before scoring - weights) + 1.2 x (weights + one batch)): "
        "%.1f <= %.1f + %.1f = %.1f MiB: %s\n",
        peak_mib, base_mib, 1.2 * (weights_mib + act_mib), bound_mib,
        peak_mib <= bound_mib ? "ok" : "EXCEEDED");
    std::printf("checksum: %.6f\n", checksum);
    std::printf("performance_stats: %s\n", lm.performance_stats().dump().c_str());
    if (peak_mib > bound_mib) return 1;
  } catch (const UserError& e) {
    std::fprintf(stderr, "error: %s (%s)\n", e.what(), e.expected().c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
