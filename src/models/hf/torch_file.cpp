// torch.save's two file layouts, as torch.load reads them (torch/serialization.py):
// - zip (torch >= 1.6): stored entries <archive>/data.pkl, <archive>/data/<key> (one per storage)
//   and <archive>/byteorder, where <archive> is the first entry's folder (PyTorchStreamReader);
// - legacy: five pickles back to back (magic number, protocol version, system information, the
//   object, its storage keys), then each storage as an int64 element count and its bytes.
#include "models/hf/torch_file.hpp"

#include <cstring>
#include <string_view>

#include "lmeval/core/error.hpp"

namespace lmeval::hf {

namespace {

namespace tf {

using Span = std::pair<const std::byte*, size_t>;

uint64_t le(const std::byte* p, int n) {
  uint64_t v = 0;
  for (int k = n - 1; k >= 0; --k) v = (v << 8) | static_cast<uint8_t>(p[k]);
  return v;
}

// The stored entries of a zip archive: name -> bytes. Only what torch's writer produces is
// accepted (entries stored, not compressed); zip64 records are read for files over 4 GiB.
class ZipEntries {
 public:
  ZipEntries(const std::byte* data, size_t size, const std::string& file)
      : d_(data), n_(size), file_(file) {
    if (n_ < 22) fail("the file is too short for a zip archive");
    size_t eocd = n_ - 22;
    const size_t lowest = n_ - 22 > 65535 ? n_ - 22 - 65535 : 0;
    while (le(d_ + eocd, 4) != 0x06054b50) {
      if (eocd == lowest) fail("no end of central directory record (truncated?)");
      --eocd;
    }
    uint64_t count = le(d_ + eocd + 10, 2), cd_size = le(d_ + eocd + 12, 4),
             cd_off = le(d_ + eocd + 16, 4);
    if (count == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) {
      if (eocd < 20 || le(d_ + eocd - 20, 4) != 0x07064b50) fail("no zip64 locator");
      const uint64_t z = le(d_ + eocd - 20 + 8, 8);
      if (z > n_ || n_ - z < 56 || le(d_ + z, 4) != 0x06064b50) fail("no zip64 directory record");
      count = le(d_ + z + 32, 8);
      cd_size = le(d_ + z + 40, 8);
      cd_off = le(d_ + z + 48, 8);
    }
    if (cd_off > n_ || cd_size > n_ - cd_off) fail("the central directory lies outside the file");
    size_t at = cd_off;
    const size_t cd_end = cd_off + cd_size;
    for (uint64_t e = 0; e < count; ++e) {
      if (cd_end - at < 46 || le(d_ + at, 4) != 0x02014b50) fail("a bad central directory entry");
      const uint64_t method = le(d_ + at + 10, 2);
      uint64_t comp = le(d_ + at + 20, 4), size = le(d_ + at + 24, 4);
      const size_t name_len = le(d_ + at + 28, 2), extra_len = le(d_ + at + 30, 2),
                   comment_len = le(d_ + at + 32, 2);
      uint64_t local = le(d_ + at + 42, 4);
      if (cd_end - at - 46 < name_len + extra_len + comment_len)
        fail("a central directory entry runs past the directory");
      const std::string name(reinterpret_cast<const char*>(d_ + at + 46), name_len);
      // Zip64 extended information: the 8-byte fields whose 4-byte ones are all ones, in order.
      for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
        const uint64_t id = le(d_ + x, 2), len = le(d_ + x + 2, 2);
        if (x + 4 + len > at + 46 + name_len + extra_len) fail("a bad extra field of " + name);
        if (id == 1) {
          size_t y = x + 4;
          auto field = [&](uint64_t& v) {
            if (v != 0xFFFFFFFF) return;
            if (y + 8 > x + 4 + len) fail("a short zip64 field of " + name);
            v = le(d_ + y, 8);
            y += 8;
          };
          field(size);
          field(comp);
          field(local);
        }
        x += 4 + len;
      }
      if (method != 0)
        fail("entry " + name + " is compressed (method " + std::to_string(method) +
             "); torch.save stores its entries uncompressed");
      if (comp != size) fail("entry " + name + " has different stored and original sizes");
      if (local > n_ || n_ - local < 30 || le(d_ + local, 4) != 0x04034b50)
        fail("entry " + name + " has no local header");
      const uint64_t begin = local + 30 + le(d_ + local + 26, 2) + le(d_ + local + 28, 2);
      if (begin > n_ || size > n_ - begin)
        fail("entry " + name + " runs past the end of the file (truncated?)");
      if (!entries_.emplace(name, Span{d_ + begin, size}).second)
        fail("entry " + name + " appears twice");
      if (first_.empty()) first_ = name;
      at += 46 + name_len + extra_len + comment_len;
    }
    if (entries_.empty()) fail("the archive is empty");
  }

  const Span* find(const std::string& name) const {
    auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const std::string& first() const { return first_; }

  [[noreturn]] void fail(const std::string& what) const {
    throw UserError("corrupt PyTorch zip checkpoint: " + what, {file_, 0, 0, ""},
                    "a file written by torch.save");
  }

 private:
  const std::byte* d_;
  size_t n_;
  const std::string& file_;
  std::map<std::string, Span> entries_;
  std::string first_;
};

// The magic-number pickle that opens a legacy file (torch.serialization.MAGIC_NUMBER written with
// protocol 2).
constexpr unsigned char kLegacyMagic[] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
                                          0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};

}  // namespace tf

}  // namespace

TorchFile::TorchFile(const std::filesystem::path& path) : map_(path, "weights file") {
  const std::string file = path.string();
  const std::byte* d = map_.data();
  const size_t n = map_.size();
  if (n >= 4 && std::memcmp(d, "PK\x03\x04", 4) == 0) {
    read_zip();
  } else if (n >= sizeof tf::kLegacyMagic &&
             std::memcmp(d, tf::kLegacyMagic, sizeof tf::kLegacyMagic) == 0) {
    read_legacy();
  } else if (n >= 262 && std::memcmp(d + 257, "ustar", 5) == 0) {
    throw UserError(
        "the file is in torch's tar format (torch before 0.4), which lm-eval does "
        "not read",
        {file, 0, 0, ""},
        "a file written by torch.save since torch 0.4 (re-save it with torch.save)");
  } else {
    throw UserError("not a PyTorch checkpoint: neither a zip archive nor torch's legacy format",
                    {file, 0, 0, ""}, "a file written by torch.save");
  }
}

void TorchFile::read_zip() {
  const std::string file = map_.path().string();
  tf::ZipEntries zip(map_.data(), map_.size(), file);
  const std::string prefix = zip.first().substr(0, zip.first().find('/'));
  const tf::Span* pkl = zip.find(prefix + "/data.pkl");
  if (!pkl) zip.fail("no " + prefix + "/data.pkl");
  if (const tf::Span* order = zip.find(prefix + "/byteorder")) {
    const std::string_view bo(reinterpret_cast<const char*>(order->first), order->second);
    if (bo != "little")
      throw UserError("the checkpoint was written on a " + std::string(bo) +
                          "-endian machine; lm-eval reads little-endian ones",
                      {file, 0, 0, prefix + "/byteorder"}, "little");
  }
  const PickledStateDict dict = read_state_dict_pickle(
      {reinterpret_cast<const char*>(pkl->first), pkl->second}, StorageIds::kZip, file);
  std::vector<tf::Span> storages;
  for (const auto& s : dict.storages) {
    const std::string rec = prefix + "/data/" + s.key;
    const tf::Span* span = zip.find(rec);
    if (!span) zip.fail("storage " + s.key + " has no entry " + rec);
    storages.push_back(*span);
  }
  add_tensors(dict, storages);
}

void TorchFile::read_legacy() {
  const std::string file = map_.path().string();
  const auto* base = reinterpret_cast<const char*>(map_.data());
  const size_t n = map_.size();
  size_t at = sizeof tf::kLegacyMagic, used = 0;
  auto rest = [&] { return std::string_view(base + at, n - at); };
  auto bad = [&](const std::string& what) {
    return UserError("corrupt legacy PyTorch checkpoint: " + what, {file, 0, 0, ""},
                     "a file written by torch.save");
  };
  const Json protocol = read_plain_pickle(rest(), file, &used);
  at += used;
  if (protocol != 1001) throw bad("protocol version " + protocol.dump() + ", not 1001");
  const Json info = read_plain_pickle(rest(), file, &used);
  at += used;
  if (!info.is_object() || !info.contains("little_endian") || !info["little_endian"].is_boolean())
    throw bad("no system information");
  if (!info["little_endian"].get<bool>())
    throw UserError(
        "the checkpoint was written on a big-endian machine; lm-eval reads "
        "little-endian ones",
        {file, 0, 0, "little_endian"}, "true");
  const PickledStateDict dict = read_state_dict_pickle(rest(), StorageIds::kLegacy, file, &used);
  at += used;
  const Json keys = read_plain_pickle(rest(), file, &used);
  at += used;
  if (!keys.is_array()) throw bad("no list of storage keys");
  std::map<std::string, size_t> index;
  for (size_t k = 0; k < dict.storages.size(); ++k) index[dict.storages[k].key] = k;
  std::vector<tf::Span> storages(dict.storages.size(), {nullptr, 0});
  std::vector<bool> seen(dict.storages.size(), false);
  for (const auto& k : keys) {
    if (!k.is_string()) throw bad("a storage key that is not a string");
    auto it = index.find(k.get<std::string>());
    if (it == index.end()) throw bad("storage " + k.get<std::string>() + " is not used");
    if (seen[it->second]) throw bad("storage " + k.get<std::string>() + " is listed twice");
    seen[it->second] = true;
    const PickledStorage& s = dict.storages[it->second];
    if (n - at < 8) throw bad("the data of storage " + s.key + " is missing (truncated?)");
    const uint64_t numel = tf::le(map_.data() + at, 8);
    at += 8;
    if (numel != static_cast<uint64_t>(s.numel))
      throw bad("storage " + s.key + " holds " + std::to_string(numel) + " elements where " +
                std::to_string(s.numel) + " are declared");
    const uint64_t nbytes = numel * safetensors_dtype_size(s.dtype);
    if (nbytes / safetensors_dtype_size(s.dtype) != numel || nbytes > n - at)
      throw bad("the data of storage " + s.key + " runs past the end of the file (truncated?)");
    storages[it->second] = {map_.data() + at, nbytes};
    at += nbytes;
  }
  for (size_t k = 0; k < seen.size(); ++k)
    if (!seen[k]) throw bad("storage " + dict.storages[k].key + " has no data");
  add_tensors(dict, storages);
}

void TorchFile::add_tensors(const PickledStateDict& dict, const std::vector<tf::Span>& storages) {
  const std::string file = map_.path().string();
  for (const PickledTensor& p : dict.tensors) {
    const PickledStorage& s = dict.storages[p.storage];
    const size_t esize = safetensors_dtype_size(s.dtype);
    auto bad = [&](const std::string& what) {
      return UserError("tensor '" + p.name + "' " + what, {file, 0, 0, p.name},
                       "a tensor inside its storage, as torch.save writes it");
    };
    uint64_t storage_bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(s.numel), esize, &storage_bytes) ||
        storage_bytes > storages[p.storage].second)
      throw bad("has a storage of " + std::to_string(s.numel) + " elements but its data holds " +
                std::to_string(storages[p.storage].second) + " bytes");
    const std::byte* sbase = storages[p.storage].first;
    uint64_t numel = 1, last = static_cast<uint64_t>(p.offset);
    bool overflow = false;
    for (size_t k = 0; k < p.shape.size(); ++k) {
      const auto dim = static_cast<uint64_t>(p.shape[k]);
      uint64_t reach = 0;
      overflow |= __builtin_mul_overflow(numel, dim, &numel);
      if (dim > 0)
        overflow |= __builtin_mul_overflow(dim - 1, static_cast<uint64_t>(p.stride[k]), &reach) ||
                    __builtin_add_overflow(last, reach, &last);
    }
    if (overflow) throw bad("has a size or stride that overflows 64 bits");
    TensorView t;
    t.name = p.name;
    t.dtype = s.dtype;
    t.shape = p.shape;
    t.file = file;
    if (numel == 0) {
      t.data = sbase;
      tensors_[p.name] = std::move(t);
      continue;
    }
    if (last >= static_cast<uint64_t>(s.numel))
      throw bad("reaches element " + std::to_string(last) + " of a storage of " +
                std::to_string(s.numel));
    t.nbytes = numel * esize;
    bool contiguous = true;
    int64_t expected = 1;
    for (size_t k = p.shape.size(); k-- > 0;) {
      if (p.shape[k] != 1 && p.stride[k] != expected) contiguous = false;
      expected *= p.shape[k];
    }
    if (contiguous) {
      t.data = sbase + static_cast<size_t>(p.offset) * esize;
    } else {
      // A strided view (a transposed or sliced tensor saved as it was) is gathered into bytes of
      // its own, row-major, as torch's .contiguous() would.
      auto bytes = std::make_shared<std::vector<std::byte>>(t.nbytes);
      std::vector<int64_t> idx(p.shape.size(), 0);
      for (uint64_t e = 0; e < numel; ++e) {
        int64_t src = p.offset;
        for (size_t k = 0; k < idx.size(); ++k) src += idx[k] * p.stride[k];
        std::memcpy(bytes->data() + e * esize, sbase + static_cast<size_t>(src) * esize, esize);
        for (size_t k = idx.size(); k-- > 0;) {
          if (++idx[k] < p.shape[k]) break;
          idx[k] = 0;
        }
      }
      t.data = bytes->data();
      t.owner = bytes;
    }
    tensors_[p.name] = std::move(t);
  }
}

void TorchFile::release(const TensorView& t) const {
  if (!t.owner) map_.release(t.data, t.nbytes);
}

}  // namespace lmeval::hf
