#include "models/hf/debug_dump.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <utility>
#include <vector>

#include "lmeval/core/error.hpp"

namespace lmeval::hf::debug {

namespace {

void write_file(struct State& s);

struct State {
  std::string dir;
  int layer = -1;
  int norms = 0;
  int file = 0;
  std::vector<std::pair<std::string, at::Tensor>> records;
  std::set<std::string> names;
  // The last forward call's records (its logits come after the forward returns).
  ~State() {
    try {
      if (!records.empty()) write_file(*this);
    } catch (...) {  // a debugging dump never fails the run at exit
    }
  }
};

State& state() {
  static State s = [] {
    State st;
    if (const char* d = std::getenv("LMEVAL_HF_DUMP")) st.dir = d;
    return st;
  }();
  return s;
}

}  // namespace

bool dump_enabled() { return !state().dir.empty(); }

void dump_to(const std::string& dir) {
  State& s = state();
  if (!s.dir.empty() && !s.records.empty()) write_file(s);
  s.records.clear();
  s.names.clear();
  s.dir = dir;
  s.file = 0;
}

void dump_layer(int layer) {
  if (!dump_enabled()) return;
  state().layer = layer;
  state().norms = 0;
}

void dump(const std::string& name, const at::Tensor& t) {
  if (!dump_enabled() || !t.defined()) return;
  State& s = state();
  const std::string full = s.layer >= 0 ? "L" + std::to_string(s.layer) + "." + name : name;
  if (!s.names.insert(full).second) return;
  const auto type = t.scalar_type() == at::kLong ? at::kLong : at::kFloat;
  s.records.emplace_back(full, t.detach().to(at::kCPU).to(type).contiguous().clone());
}

void dump_norm(const at::Tensor& in, const at::Tensor& out) {
  if (!dump_enabled()) return;
  const std::string k = "norm" + std::to_string(state().norms++);
  dump(k + "_in", in);
  dump(k, out);
}

void dump_begin(const at::Tensor& ids) {
  if (!dump_enabled()) return;
  State& s = state();
  if (!s.records.empty()) write_file(s);
  s.layer = -1;
  dump("ids", ids);
}

namespace {

void write_file(State& s) {
  // safetensors: an 8-byte little-endian header length, the JSON header, then the data.
  std::string header = "{";
  uint64_t offset = 0;
  for (const auto& [name, t] : s.records) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * t.element_size();
    std::string shape;
    for (int64_t d : t.sizes()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"" +
              (t.scalar_type() == at::kLong ? "I64" : "F32") + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  char fn[32];
  std::snprintf(fn, sizeof fn, "/forward_%04d.safetensors", s.file++);
  const std::string path = s.dir + fn;
  std::ofstream out(path, std::ios::binary);
  if (!out) throw RuntimeError("LMEVAL_HF_DUMP: cannot write " + path);
  const uint64_t n = header.size();
  unsigned char len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  out.write(reinterpret_cast<const char*>(len), 8);
  out << header;
  for (const auto& rec : s.records)
    out.write(static_cast<const char*>(rec.second.data_ptr()),
              static_cast<std::streamsize>(rec.second.numel() * rec.second.element_size()));
  s.records.clear();
  s.names.clear();
}

}  // namespace

}  // namespace lmeval::hf::debug
