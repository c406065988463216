// Page-table population in one call for a buffer about to be written (issue 14).
#pragma once

#include <cstddef>

namespace nf {

/// Makes the memory pages wholly inside [p, p + bytes) present and writable before the
/// caller writes them, with one madvise(MADV_POPULATE_WRITE) call instead of one page fault
/// per 4 KiB page on first touch. The contents are unchanged (memory not yet touched reads
/// as zeros either way). Worth it for buffers of hundreds of KiB and more that are about
/// to be filled: on the virtual machine the benchmarks ran on a page fault cost 14-37 us
/// and populating 8-9 us per page (bench/README.md, "Page faults"). Does nothing for less
/// than 64 KiB, or where the kernel lacks MADV_POPULATE_WRITE (before Linux 5.14) or
/// refuses it: the pages are then faulted in on first touch as before. Never fails.
void prefault_for_write(void* p, size_t bytes);

}  // namespace nf
