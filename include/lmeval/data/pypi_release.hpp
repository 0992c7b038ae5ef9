// A release's files on PyPI, read through its JSON API (https://pypi.org/pypi/<name>/<version>/
// json) and downloaded with their published sha256 checked: how lm-eval fetches the reference's
// task library without a Python environment.
#pragma once

#include <cstdint>
#include <string>

namespace lmeval {

struct PypiFile {
  std::string filename;
  std::string url;
  std::string sha256;  // lowercase hex, as `digests.sha256` publishes it
  uint64_t size = 0;
};

// $LMEVAL_PYPI_URL (a mirror, or a test's local server), else https://pypi.org; no trailing '/'.
std::string pypi_base_url();

// The pure-Python wheel (packagetype bdist_wheel, "-py3-none-any.whl") of name==version. A
// RuntimeError names the URL asked and what its answer lacked.
PypiFile pypi_wheel(const std::string& name, const std::string& version);

// The file's bytes, whose sha256 must be file.sha256 (RuntimeError naming both digests).
std::string download_verified(const PypiFile& file);

}  // namespace lmeval
