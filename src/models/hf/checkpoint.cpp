// Memory-mapped safetensors archives and the JSON files of a model folder (no torch here).
#include "models/hf/checkpoint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "lmeval/core/error.hpp"
#include "lmeval/core/input_checks.hpp"

namespace lmeval::hf {

namespace fs = std::filesystem;

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> sizes = {
      {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},  {"U8", 1},      {"BOOL", 1},
      {"U16", 2}, {"U32", 4}, {"U64", 8}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

Json read_json_file(const fs::path& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UserError(what + " is a folder", {path.string(), 0, 0, ""}, "a JSON file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open " + what, {path.string(), 0, 0, ""}, "a readable file");
  std::stringstream ss;
  ss << in.rdbuf();
  require_json_nesting(ss.str(), path.string());
  try {
    return Json::parse(ss.str());
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, ss.str(), path.string());
  } catch (const Json::parse_error& e) {
    throw UserError(std::string("invalid JSON in ") + what + ": " + e.what(),
                    {path.string(), 0, 0, ""}, "a JSON object");
  }
}

SafetensorsFile::SafetensorsFile(const fs::path& path) : path_(path) {
  const std::string file = path.string();
  auto bad = [&](const std::string& msg, const std::string& field = "") {
    return UserError("corrupt safetensors file: " + msg, {file, 0, 0, field},
                     "a file written by safetensors (8-byte header length, JSON header, data)");
  };
  int fd = ::open(file.c_str(), O_RDONLY);
  if (fd < 0) throw UserError("cannot open weights file", {file, 0, 0, ""}, "a readable file");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw UserError("cannot stat weights file", {file, 0, 0, ""}, "a readable file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw UserError(std::string("weights file ") +
                        (S_ISDIR(st.st_mode) ? "is a folder" : "is not a regular file"),
                    {file, 0, 0, ""}, "a safetensors file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw bad("file is " + std::to_string(size_) + " bytes, shorter than its 8-byte header length");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw RuntimeError("cannot memory-map " + file);
  }
  const auto* base = static_cast<const std::byte*>(map_);
  uint64_t header_len = 0;
  std::memcpy(&header_len, base, 8);  // little-endian on every platform we build for
  if (header_len > size_ - 8) {
    throw bad("header length " + std::to_string(header_len) + " goes beyond the end of the file (" +
              std::to_string(size_) + " bytes)");
  }
  Json header;
  const std::string header_text(reinterpret_cast<const char*>(base + 8), header_len);
  if (json_nesting_exceeds(header_text))
    throw bad("header nests lists/objects more than " + std::to_string(kMaxNestingDepth) +
              " levels deep");
  try {
    header = Json::parse(header_text);
  } catch (const Json::out_of_range& e) {
    throw_json_number_overflow(e, "", path_.string(), 0, "safetensors header");
  } catch (const Json::parse_error& e) {
    throw bad(std::string("header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) throw bad("header is not a JSON object");
  const std::byte* data = base + 8 + header_len;
  const size_t data_size = size_ - 8 - header_len;
  // (begin, end, name) of every tensor: the safetensors library wants them laid end to end.
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> spans;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string field = "$." + name;
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") ||
        !entry.contains("data_offsets"))
      throw bad("tensor entry lacks dtype/shape/data_offsets", field);
    TensorView t;
    t.name = name;
    t.file = file;
    if (!entry["dtype"].is_string()) throw bad("dtype is not a string", field);
    t.dtype = entry["dtype"].get<std::string>();
    const size_t esize = safetensors_dtype_size(t.dtype);
    if (esize == 0) throw bad("unknown dtype '" + t.dtype + "'", field);
    const auto& shape = entry["shape"];
    if (!shape.is_array()) throw bad("shape is not a list", field);
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : shape) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) throw bad("bad shape", field);
      t.shape.push_back(d.get<int64_t>());
      overflow = __builtin_mul_overflow(numel, static_cast<uint64_t>(d.get<int64_t>()), &numel) ||
                 overflow;
    }
    uint64_t nbytes = 0;
    if (overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(esize), &nbytes))
      throw bad("shape " + shape.dump() + " overflows 64 bits when its size is computed", field);
    const auto& off = entry["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() ||
        !off[1].is_number_unsigned())
      throw bad("data_offsets is not a pair of non-negative integers", field);
    const uint64_t b = off[0].get<uint64_t>(), e = off[1].get<uint64_t>();
    if (b > e || e > data_size)
      throw bad("data_offsets [" + std::to_string(b) + ", " + std::to_string(e) +
                    "] lie outside the data section (" + std::to_string(data_size) +
                    " bytes; the file may be truncated)",
                field);
    if (e - b != nbytes)
      throw bad("data_offsets span " + std::to_string(e - b) + " bytes but shape and dtype need " +
                    std::to_string(nbytes),
                field);
    t.data = data + b;
    t.nbytes = e - b;
    spans.emplace_back(b, e, name);
    tensors_.emplace(name, std::move(t));
  }
  // The safetensors library (Metadata::validate) refuses a file whose tensors overlap, leave a
  // gap, or do not reach the end of the data section: so does this reader.
  std::sort(spans.begin(), spans.end());
  uint64_t covered = 0;
  for (const auto& [b, e, name] : spans) {
    if (b != covered)
      throw bad("data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] " +
                    (b < covered ? "overlap the previous tensor's bytes"
                                 : "leave a gap after the previous tensor's bytes") +
                    ", which end at " + std::to_string(covered),
                "$." + name);
    covered = e;
  }
  if (covered != data_size)
    throw bad("bytes " + std::to_string(covered) + " to " + std::to_string(data_size) +
              " of the data section are not covered by any tensor");
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

void SafetensorsFile::release(const TensorView& t) const {
  if (!map_ || t.nbytes == 0) return;
  // Only whole pages inside the tensor can be dropped.
  const long page = ::sysconf(_SC_PAGESIZE);
  auto begin = reinterpret_cast<uintptr_t>(t.data);
  auto end = begin + t.nbytes;
  uintptr_t b = (begin + page - 1) / page * page;
  uintptr_t e = end / page * page;
  if (e > b) ::madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

std::unique_ptr<WeightArchive> WeightArchive::open(const fs::path& dir) {
  auto archive = std::unique_ptr<WeightArchive>(new WeightArchive());
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  std::vector<fs::path> files;
  if (fs::exists(index)) {
    Json j = read_json_file(index, "the safetensors index");
    if (!j.contains("weight_map") || !j["weight_map"].is_object())
      throw UserError("the safetensors index has no weight_map",
                      {index.string(), 0, 0, "$.weight_map"},
                      "an object mapping tensor names to shard files");
    std::set<std::string> seen;
    for (const auto& [name, shard] : j["weight_map"].items()) {
      if (!shard.is_string())
        throw UserError("shard name is not a string",
                        {index.string(), 0, 0, "$.weight_map." + name}, "a file name");
      // transformers joins the name to the folder as given, so an absolute name or one with ".."
      // would read weights from anywhere: only files inside the model folder are accepted.
      const fs::path rel(shard.get<std::string>());
      bool inside = !rel.empty() && rel.is_relative() && rel.has_filename();
      for (const auto& part : rel) inside = inside && part != "..";
      if (!inside)
        throw UserError(
            "shard name '" + shard.get<std::string>() + "' is not a file inside " + dir.string(),
            {index.string(), 0, 0, "$.weight_map." + name},
            "the name of a shard file in the model folder");
      if (seen.insert(shard.get<std::string>()).second)
        files.push_back(dir / shard.get<std::string>());
    }
    for (const auto& f : files)
      if (!fs::exists(f))
        throw UserError("weights shard " + f.filename().string() + " named in the index is missing",
                        {index.string(), 0, 0, "$.weight_map"}, "every shard file present");
  } else if (fs::exists(single)) {
    files.push_back(single);
  } else {
    for (const char* legacy : {"pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt"}) {
      if (fs::exists(dir / legacy))
        throw UserError(
            std::string("the model folder has only PyTorch pickle weights (") + legacy +
                "); lm-eval reads safetensors only, because unpickling can run arbitrary code",
            {(dir / legacy).string(), 0, 0, ""},
            "model.safetensors; convert once with Python: `from transformers import "
            "AutoModelForCausalLM; AutoModelForCausalLM.from_pretrained(DIR).save_pretrained(DIR, "
            "safe_serialization=True)`");
    }
    throw UserError("no model weights found in " + dir.string(), {dir.string(), 0, 0, ""},
                    "model.safetensors or model.safetensors.index.json with its shards");
  }
  for (const auto& f : files) {
    archive->files_.push_back(std::make_unique<SafetensorsFile>(f));
    const SafetensorsFile* sf = archive->files_.back().get();
    for (const auto& [name, view] : sf->tensors()) archive->index_[name] = {sf, &view};
  }
  return archive;
}

const TensorView* WeightArchive::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : it->second.second;
}

std::vector<std::string> WeightArchive::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : index_) out.push_back(k);
  return out;
}

void WeightArchive::release(const TensorView& t) const {
  auto it = index_.find(t.name);
  if (it != index_.end()) it->second.first->release(t);
}

std::vector<int64_t> load_generation_eos(const fs::path& dir) {
  const fs::path p = dir / "generation_config.json";
  std::vector<int64_t> out;
  if (!fs::exists(p)) return out;
  Json j = read_json_file(p, "generation_config.json");
  if (!j.is_object() || !j.contains("eos_token_id")) return out;
  const Json& e = j["eos_token_id"];
  if (e.is_number_integer()) out.push_back(e.get<int64_t>());
  if (e.is_array())
    for (const auto& v : e)
      if (v.is_number_integer()) out.push_back(v.get<int64_t>());
  return out;
}

}  // namespace lmeval::hf
