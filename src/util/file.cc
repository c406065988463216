#include "util/file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "util/output_file.h"


namespace nf {

Result<std::string> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound(path + ": no such file");
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument(path + ": is a directory, expected a file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return InvalidArgument(path + ": cannot open: " + std::strerror(errno));
  // One buffer sized from fstat and filled by read(2): no stream buffer copied into a
  // string that doubles as it grows (that was most of the start-up CPU of `run` on a
  // 2 MB dataset: page faults and memcpy of every doubling). The loop reads to EOF, so a
  // file that grew since fstat (or a pipe, size 0) is still read whole; the one spare
  // byte lets the read that sees EOF happen without growing the buffer.
  struct stat st {};
  std::string out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) out.resize(static_cast<size_t>(st.st_size) + 1);
  size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() < 4096 ? 4096 : out.size() * 2);
    const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return InvalidArgument(path + ": read failed: " + std::strerror(err));
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(used);
  return out;
}

Status write_file_atomic(const std::string& path, const std::string& data) {
  // The parent directory must exist (callers create it); AtomicOutputFile::open would also
  // create it, so check first to keep this function's contract.
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    return InvalidArgument(path + ".tmp: cannot write: " + std::strerror(ENOENT));
  }
  AtomicOutputFile file(path);
  NF_RETURN_IF_ERROR(file.open());
  file.out() << data;
  return file.commit();
}

Status make_dirs(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return InvalidArgument(dir + ": cannot create directory: " + ec.message());
  return Status::Ok();
}

}  // namespace nf
