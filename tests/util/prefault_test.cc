// util/prefault.h: the pages are made present, their contents are kept.
#include "util/prefault.h"

#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace nf {
namespace {

// Pages of [p, p + bytes) resident in memory (mincore).
size_t resident_pages(void* p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v((bytes + page - 1) / page);
  if (mincore(p, bytes, v.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : v) n += c & 1;
  return n;
}

bool kernel_at_least(int major, int minor) {
  utsname u{};
  if (uname(&u) != 0) return false;
  int a = 0, b = 0;
  if (std::sscanf(u.release, "%d.%d", &a, &b) != 2) return false;
  return a > major || (a == major && b >= minor);
}

TEST(Prefault, FreshPagesBecomeResidentAndReadAsZeros) {
  const size_t bytes = size_t{1} << 20;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ(resident_pages(m, bytes), 0u);
  prefault_for_write(m, bytes);
  if (kernel_at_least(5, 14)) {
    EXPECT_EQ(resident_pages(m, bytes), bytes / static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  }
  const auto* c = static_cast<const unsigned char*>(m);
  for (size_t i = 0; i < bytes; i += 997) ASSERT_EQ(c[i], 0) << i;
  munmap(m, bytes);
}

TEST(Prefault, WrittenContentsAreKeptAndUnalignedEdgesAreLeftAlone) {
  std::vector<unsigned char> v(300000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(i * 31 + 7);
  // An unaligned start and end: only whole pages inside the range are advised.
  prefault_for_write(v.data() + 3, v.size() - 5);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<unsigned char>(i * 31 + 7)) << i;
}

TEST(Prefault, SmallAndEmptyRangesAreNoOps) {
  const size_t bytes = size_t{1} << 16;  // the smallest range advised is 64 KiB
  void* m = mmap(nullptr, 2 * bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  prefault_for_write(m, bytes - 1);
  prefault_for_write(nullptr, bytes);
  prefault_for_write(m, 0);
  EXPECT_EQ(resident_pages(m, 2 * bytes), 0u);
  munmap(m, 2 * bytes);
}

}  // namespace
}  // namespace nf
