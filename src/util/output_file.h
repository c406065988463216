#pragma once
// An output file that appears whole or not at all (exports, reports).

#include <fstream>
#include <string>

#include "util/status.h"

namespace nf {

/// Writes PATH through PATH.tmp and renames it onto PATH in `commit()`, so a reader never
/// sees a half-written file and a failed or abandoned write leaves no `.tmp` behind (the
/// destructor removes it when `commit()` was not reached or failed).
///
/// Errors name the file and the system's reason (e.g. "out.csv.tmp: write failed: No space
/// left on device"); InvalidArgument when it cannot be created, DataLoss when a write or the
/// rename fails. Parent directories are created by `open()`. Not thread-safe.
class AtomicOutputFile {
 public:
  explicit AtomicOutputFile(std::string path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  Status open();
  /// The stream to write; valid after a successful `open()`.
  std::ofstream& out() { return out_; }
  /// Flushes, closes and renames the temporary onto the path.
  Status commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace nf
