#include "util/output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/file.h"

namespace nf {

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)), tmp_(path_ + ".tmp") {}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  if (out_.is_open()) out_.close();
  std::error_code ec;
  std::filesystem::remove(tmp_, ec);  // best effort: nothing half-written stays behind
}

Status AtomicOutputFile::open() {
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) NF_RETURN_IF_ERROR(make_dirs(parent.string()));
  errno = 0;
  out_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!out_) return InvalidArgument(tmp_ + ": cannot write: " + (errno ? std::strerror(errno) : "open failed"));
  return Status::Ok();
}

Status AtomicOutputFile::commit() {
  errno = 0;
  out_.flush();
  // errno of the failed write(2) (ENOSPC on a full disk), read before anything else runs.
  const int flush_errno = errno;
  if (!out_) return DataLoss(tmp_ + ": write failed: " + (flush_errno ? std::strerror(flush_errno) : "stream error"));
  errno = 0;
  out_.close();
  if (out_.fail())
    return DataLoss(tmp_ + ": write failed: " + (errno ? std::strerror(errno) : "close failed"));
  std::error_code ec;
  std::filesystem::rename(tmp_, path_, ec);
  if (ec) return DataLoss(path_ + ": rename failed: " + ec.message());
  committed_ = true;
  return Status::Ok();
}

}  // namespace nf
