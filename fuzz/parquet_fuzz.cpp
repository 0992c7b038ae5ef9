// libFuzzer target: a whole parquet file through the reader; only UserError may come out.
#include "lmeval/core/error.hpp"
#include "lmeval/data/parquet_reader.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto f = lmeval::parquet::ParquetFile::from_buffer(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.parquet");
    for (size_t g = 0; g < f.num_row_groups(); ++g) {
      auto rows = f.read_row_group(g);
      for (const auto& r : rows)
        (void)r.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    }
  } catch (const lmeval::UserError&) {
  }
  return 0;
}
