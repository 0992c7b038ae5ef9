// The pickles inside torch.save files, read by an unpickler that runs no code: it knows only the
// opcodes and globals torch.load(weights_only=True) accepts, and of those only what a state dict
// of tensors needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lmeval/core/json.hpp"

namespace lmeval::hf {

// A storage that the pickle names by persistent id (torch.serialization's persistent_load).
struct PickledStorage {
  std::string key;    // the record <archive>/data/<key> (zip) or the legacy storage key
  std::string dtype;  // safetensors name of its element type: F32, F16, BF16, ...
  int64_t numel = 0;  // elements, as the pickle declares them
};

// One entry of a state dict: a strided view of a storage (torch._utils._rebuild_tensor_v2).
struct PickledTensor {
  std::string name;
  size_t storage = 0;  // index into PickledStateDict::storages
  int64_t offset = 0;  // in elements
  std::vector<int64_t> shape, stride;
};

struct PickledStateDict {
  std::vector<PickledStorage> storages;  // each key once, in the order first named
  std::vector<PickledTensor> tensors;    // in the dict's order
};

// How storages are named: the zip format's ('storage', type, key, location, numel) or the legacy
// format's 6-tuple, whose last entry (a view of another storage, torch < 1.0) must be None.
enum class StorageIds { kZip, kLegacy };

// Reads the pickle at the start of `bytes`: a dict or OrderedDict of names to tensors. `end`
// receives the offset just past its STOP opcode. Anything else (another opcode or global, a value
// that is no tensor, a malformed or truncated pickle) is a UserError naming `file`.
PickledStateDict read_state_dict_pickle(std::string_view bytes, StorageIds ids,
                                        const std::string& file, size_t* end = nullptr);

// Reads a pickle of plain values (None, bools, ints, floats, strings, lists, tuples as lists,
// dicts with string keys) without globals or storages: the legacy format's protocol number,
// system information and storage key list.
Json read_plain_pickle(std::string_view bytes, const std::string& file, size_t* end = nullptr);

}  // namespace lmeval::hf
