/* Layout of the clock page shared by the harness (harness/virtual_clock.cc)
 * and the preload library inside redis-server (harness/clock_preload.c).
 * Plain C so that both sides include the same definition. */
#ifndef XACKLY_HARNESS_CLOCK_PAGE_H_
#define XACKLY_HARNESS_CLOCK_PAGE_H_

/* Size of the page file; both sides map exactly this many bytes. */
#define XACKLY_CLOCK_PAGE_BYTES 4096
/* Slot 0 (int64) holds this magic ("XCKLYCLK" little-endian), written once
 * before the server starts; a mismatch means the file is not a clock page. */
#define XACKLY_CLOCK_PAGE_MAGIC 0x4b4c43594c4b4358ull
/* Slot 1 (int64) holds the virtual time, nanoseconds since the Unix epoch,
 * read and written with atomic 64-bit operations. */
#define XACKLY_CLOCK_PAGE_SLOT_MAGIC 0
#define XACKLY_CLOCK_PAGE_SLOT_NS 1
/* Slot 2 (int64) counts the cases the server has started: the harness adds
 * one whenever it moves the clock back for a new case, and the preload
 * restarts the server's random generators from one fixed state when it
 * sees the count change, so that SRANDMEMBER, SPOP and RANDOMKEY answer the
 * same in every run of a case, on any server process. */
#define XACKLY_CLOCK_PAGE_SLOT_CASE 2

#endif  /* XACKLY_HARNESS_CLOCK_PAGE_H_ */
