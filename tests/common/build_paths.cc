// The only test object compiled with the checkout's paths (see build_paths.h).
#include "common/build_paths.h"

namespace nf_test_paths {

const std::string& build_source_dir() {
  static const std::string dir = NF_BUILD_SOURCE_DIR;
  return dir;
}

const std::string& build_binary() {
  static const std::string bin = NF_BUILD_BINARY;
  return bin;
}

}  // namespace nf_test_paths
