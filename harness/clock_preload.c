/* The virtual clock inside redis-server. Loaded with LD_PRELOAD into a server
 * that xackly starts, it answers every wall-clock read the server makes
 * (gettimeofday, clock_gettime with CLOCK_REALTIME or CLOCK_REALTIME_COARSE,
 * and time) from a page that the harness shares with it, so TIME, XADD '*'
 * IDs, PEL delivery times, XPENDING idle, X(AUTO)CLAIM min-idle and key TTLs
 * all follow the harness's virtual clock and nothing else.
 *
 * Why not libfaketime: it resolves the real functions with dlsym during its
 * own initialisation, and Debian's jemalloc calls clock_gettime from inside
 * that, so the server never starts. This library therefore never calls dlsym
 * (but in a real consumer's sqlite3_step, which redis-server never calls):
 * every clock it does not virtualise (CLOCK_MONOTONIC, CLOCK_BOOTTIME, CPU
 * clocks...) goes to the kernel's vDSO clock_gettime, found in the vDSO's
 * own ELF symbol table (getauxval, no allocation), or by raw syscall where
 * that fails; and the page is opened and mapped lazily, on the first
 * wall-clock read, with raw syscalls.
 *
 * Contract with the harness (harness/virtual_clock.h holds the other side):
 *   - XACKLY_CLOCK_PAGE names a clock page laid out as harness/clock_page.h
 *     says: a magic, then the virtual time in nanoseconds since the epoch.
 *   - If XACKLY_CLOCK_PAGE is unset, this library is transparent: wall-clock
 *     reads go to the kernel.
 *   - If it is set but the page cannot be mapped or carries the wrong magic,
 *     the process writes a line to stderr and exits with status 70. It never
 *     falls back to real time: a silently real clock would make a run
 *     nondeterministic without anyone noticing.
 *
 * The server's randomness, made reproducible the same way (only while
 * XACKLY_CLOCK_PAGE is set):
 *   - /dev/urandom, which Redis reads once with fopen64 for the seed of its
 *     hash tables (the order of SMEMBERS, KEYS, HGETALL...) and its run id,
 *     reads fixed bytes: every server process hashes alike;
 *   - rand() and random() (SRANDMEMBER, SPOP on small sets) draw from this
 *     library's own generator; srand() and srandom() change nothing;
 *   - Redis's own 64-bit Mersenne Twister (SRANDMEMBER, SPOP, RANDOMKEY on
 *     hash tables), seeded from the time and the pid in main(), is reseeded
 *     through its exported init_genrand64 (found in the executable's
 *     dynamic symbols, no dlsym);
 *   - both generators start over from one fixed state whenever the page's
 *     case count changes (a new case), and in every new server process once
 *     main() has seeded them (its read of /dev/urandom comes right after).
 * What stays per process (the pid, the paths INFO shows) is listed in
 * docs/scripts.md. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "harness/clock_page.h"

enum { kExitNoPage = 70 };

/* The mapped page, or NULL before the first wall-clock read. */
static int64_t* g_page = NULL;

static void WriteStderr(const char* s) {
  syscall(SYS_write, 2, s, strlen(s));
}

static void Die(const char* what, const char* path) {
  WriteStderr("xackly clock preload: ");
  WriteStderr(what);
  WriteStderr(" XACKLY_CLOCK_PAGE=");
  WriteStderr(path);
  WriteStderr("; refusing to run on the real clock\n");
  _exit(kExitNoPage);
}

/* Returns the page, mapping it on first use; NULL when XACKLY_CLOCK_PAGE is
 * unset. Two threads may race to map it: the loser unmaps its copy. */
static int64_t* Page(void) {
  int64_t* page = __atomic_load_n(&g_page, __ATOMIC_ACQUIRE);
  if (page != NULL) return page;
  const char* path = getenv("XACKLY_CLOCK_PAGE");
  if (path == NULL) return NULL;
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) Die("cannot open", path);
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0 || st.st_size < XACKLY_CLOCK_PAGE_BYTES) {
    Die("too small or unreadable:", path);
  }
  long addr =
      syscall(SYS_mmap, NULL, (size_t)XACKLY_CLOCK_PAGE_BYTES, PROT_READ, MAP_SHARED, (int)fd, 0L);
  syscall(SYS_close, fd);
  if (addr == -1) Die("cannot mmap", path);
  int64_t* mapped = (int64_t*)addr;
  if ((uint64_t)__atomic_load_n(&mapped[XACKLY_CLOCK_PAGE_SLOT_MAGIC], __ATOMIC_ACQUIRE) !=
      XACKLY_CLOCK_PAGE_MAGIC) {
    Die("bad magic in", path);
  }
  int64_t* expected = NULL;
  if (!__atomic_compare_exchange_n(&g_page, &expected, mapped, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    syscall(SYS_munmap, mapped, (size_t)XACKLY_CLOCK_PAGE_BYTES);
    return expected;
  }
  return mapped;
}

/* --- randomness --------------------------------------------------------- */

/* The fixed state every generator starts from. */
#define XACKLY_RANDOM_SEED 0x78636b6c79736565ull /* "xcklysee" */

/* This library's generator (splitmix64) behind rand() and random(). */
static uint64_t g_random_state = XACKLY_RANDOM_SEED;
/* Set once main() seeded its own generators (at its read of /dev/urandom). */
static int g_main_seeded = 0;
/* The case count the generators were last restarted for. */
static int64_t g_seen_case = -1;

static uint64_t NextRandom(void) {
  uint64_t z = __atomic_add_fetch(&g_random_state, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef void (*InitGenrand64Fn)(unsigned long long);

/* The address of the function `name` in the executable's dynamic symbol
 * table (Redis links with -rdynamic), or NULL. Reads only memory the loader
 * mapped; allocates nothing. */
static void* FindExecutableFunction(const char* name) {
  const Elf64_Phdr* ph = (const Elf64_Phdr*)getauxval(AT_PHDR);
  const unsigned long phnum = getauxval(AT_PHNUM);
  if (ph == NULL) return NULL;
  uintptr_t base = 0;
  const Elf64_Dyn* dyn = NULL;
  for (unsigned long i = 0; i < phnum; ++i) {
    if (ph[i].p_type == PT_PHDR) base = (uintptr_t)ph - ph[i].p_vaddr;
  }
  for (unsigned long i = 0; i < phnum; ++i) {
    if (ph[i].p_type == PT_DYNAMIC) dyn = (const Elf64_Dyn*)(base + ph[i].p_vaddr);
  }
  if (dyn == NULL) return NULL;
  uintptr_t symtab = 0, strtab = 0;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB) symtab = dyn->d_un.d_ptr;
    if (dyn->d_tag == DT_STRTAB) strtab = dyn->d_un.d_ptr;
  }
  /* The loader may or may not have relocated these in place. */
  if (symtab != 0 && symtab < base) symtab += base;
  if (strtab != 0 && strtab < base) strtab += base;
  if (symtab == 0 || strtab <= symtab) return NULL;
  /* The symbol table ends where the string table begins. */
  const size_t count = (strtab - symtab) / sizeof(Elf64_Sym);
  const Elf64_Sym* syms = (const Elf64_Sym*)symtab;
  for (size_t i = 0; i < count && i < (1u << 20); ++i) {
    if (ELF64_ST_TYPE(syms[i].st_info) == STT_FUNC && syms[i].st_shndx != SHN_UNDEF &&
        strcmp((const char*)strtab + syms[i].st_name, name) == 0) {
      return (void*)(base + syms[i].st_value);
    }
  }
  return NULL;
}

/* Restarts every generator from XACKLY_RANDOM_SEED. */
static void RestartGenerators(void) {
  static InitGenrand64Fn init_genrand64 = NULL;
  static int looked = 0;
  if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
    __atomic_store_n(&init_genrand64, (InitGenrand64Fn)FindExecutableFunction("init_genrand64"),
                     __ATOMIC_RELEASE);
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
  }
  __atomic_store_n(&g_random_state, XACKLY_RANDOM_SEED, __ATOMIC_RELAXED);
  InitGenrand64Fn fn = __atomic_load_n(&init_genrand64, __ATOMIC_ACQUIRE);
  if (fn != NULL) fn(XACKLY_RANDOM_SEED);
}

/* At every wall-clock read: a new case (or a new process whose main() has
 * seeded its generators) restarts the generators first. */
static void NoteCase(const int64_t* page) {
  if (!__atomic_load_n(&g_main_seeded, __ATOMIC_ACQUIRE)) return;
  const int64_t now_case = __atomic_load_n(&page[XACKLY_CLOCK_PAGE_SLOT_CASE], __ATOMIC_ACQUIRE);
  if (__atomic_exchange_n(&g_seen_case, now_case, __ATOMIC_ACQ_REL) != now_case) RestartGenerators();
}

__attribute__((visibility("default"))) int rand(void) { return (int)(NextRandom() >> 33); } /* 0..RAND_MAX */

__attribute__((visibility("default"))) long random(void) { return (long)(NextRandom() >> 33); }

__attribute__((visibility("default"))) void srand(unsigned int seed) { (void)seed; }

__attribute__((visibility("default"))) void srandom(unsigned int seed) { (void)seed; }

/* Redis (built with large-file support) opens /dev/urandom with fopen64;
 * every other file goes to glibc's fopen, the same function. */
__attribute__((visibility("default"))) FILE* fopen64(const char* restrict path, const char* restrict mode) {
  if (path != NULL && strcmp(path, "/dev/urandom") == 0 && getenv("XACKLY_CLOCK_PAGE") != NULL) {
    static unsigned char fixed[256];
    for (size_t i = 0; i < sizeof fixed; ++i) fixed[i] = (unsigned char)(i * 151u + 89u);
    /* main() has seeded its generators by now (Redis reads this right after). */
    __atomic_store_n(&g_seen_case, -1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_main_seeded, 1, __ATOMIC_RELEASE);
    return fmemopen(fixed, sizeof fixed, "r");
  }
  return fopen(path, mode);
}

/* Virtual nanoseconds since the epoch; returns 0 and leaves *ns alone when
 * the clock is not virtual. */
static int VirtualNs(int64_t* ns) {
  int64_t* page = Page();
  if (page == NULL) return 0;
  NoteCase(page);
  *ns = __atomic_load_n(&page[XACKLY_CLOCK_PAGE_SLOT_NS], __ATOMIC_ACQUIRE);
  return 1;
}

typedef int (*ClockGettimeFn)(clockid_t, struct timespec*);

static int SyscallClockGettime(clockid_t clock_id, struct timespec* ts) {
  return (int)syscall(SYS_clock_gettime, clock_id, ts);
}

/* The vDSO's __vdso_clock_gettime, or NULL when the process has no vDSO or
 * it lacks the symbol (or a DT_HASH table to count its symbols). Reads only
 * memory the kernel mapped; allocates nothing, so it is safe at any time. */
static ClockGettimeFn FindVdsoClockGettime(void) {
  const unsigned char* base = (const unsigned char*)getauxval(AT_SYSINFO_EHDR);
  if (base == NULL) return NULL;
  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)base;
  if (eh->e_ident[EI_CLASS] != ELFCLASS64) return NULL; /* e.g. a 32-bit build */
  const Elf64_Phdr* ph = (const Elf64_Phdr*)(base + eh->e_phoff);
  uintptr_t load_offset = 0;
  int have_load = 0;
  const Elf64_Dyn* dyn = NULL;
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD && !have_load) {
      load_offset = (uintptr_t)base + ph[i].p_offset - ph[i].p_vaddr;
      have_load = 1;
    } else if (ph[i].p_type == PT_DYNAMIC) {
      dyn = (const Elf64_Dyn*)(base + ph[i].p_offset);
    }
  }
  if (!have_load || dyn == NULL) return NULL;
  const Elf64_Sym* symtab = NULL;
  const char* strtab = NULL;
  const Elf64_Word* hash = NULL;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    if (dyn->d_tag == DT_SYMTAB) symtab = (const Elf64_Sym*)(load_offset + dyn->d_un.d_ptr);
    if (dyn->d_tag == DT_STRTAB) strtab = (const char*)(load_offset + dyn->d_un.d_ptr);
    if (dyn->d_tag == DT_HASH) hash = (const Elf64_Word*)(load_offset + dyn->d_un.d_ptr);
  }
  if (symtab == NULL || strtab == NULL || hash == NULL) return NULL;
  const Elf64_Word symbols = hash[1]; /* nchain: one per symbol */
  for (Elf64_Word i = 0; i < symbols; ++i) {
    const Elf64_Sym* sym = &symtab[i];
    if (ELF64_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_shndx != SHN_UNDEF &&
        strcmp(strtab + sym->st_name, "__vdso_clock_gettime") == 0) {
      return (ClockGettimeFn)(load_offset + sym->st_value);
    }
  }
  return NULL;
}

/* What answers the clocks this library does not virtualise; resolved on
 * first use. Racing threads resolve the same value. */
static ClockGettimeFn g_real_clock_gettime = NULL;

static int RawClockGettime(clockid_t clock_id, struct timespec* ts) {
  ClockGettimeFn fn = __atomic_load_n(&g_real_clock_gettime, __ATOMIC_ACQUIRE);
  if (fn == NULL) {
    fn = FindVdsoClockGettime();
    if (fn == NULL) fn = SyscallClockGettime;
    __atomic_store_n(&g_real_clock_gettime, fn, __ATOMIC_RELEASE);
  }
  if (fn == SyscallClockGettime) return fn(clock_id, ts);
  /* The vDSO returns -errno; clock_gettime's contract is -1 with errno. */
  int rc = fn(clock_id, ts);
  if (rc < 0) {
    errno = -rc;
    return -1;
  }
  return rc;
}

/* --- a real consumer's clocks and sleeps --------------------------------
 *
 * Only in a consumer process that xackly runs behind its RESP front
 * (harness/real_consumer.h), which sets XACKLY_FRONT_SOCKET to the front's
 * socket. Its monotonic clocks are the virtual clock too, and a sleep
 * (nanosleep, clock_nanosleep, usleep, sleep) is not slept: it is a timed
 * wait with nothing to look at (below), sent to the front as XACKLY.WAIT on
 * a connection of its own, which the scheduler runs as sleep steps on the
 * virtual clock; the call returns once the whole sleep has passed there. A
 * sleep that cannot reach the front ends the process (status 71): a
 * silently real sleep would make the run nondeterministic. */

enum { kExitNoFront = 71 };

/* Read once: redis-server runs through these wrappers on every event-loop
 * turn (epoll_wait), where a getenv each time would cost. */
static const char* FrontSocket(void) {
  static const char* front = NULL;
  static int known = 0;
  if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
    const char* path = getenv("XACKLY_FRONT_SOCKET");
    __atomic_store_n(&front, path != NULL && *path != '\0' ? path : NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&known, 1, __ATOMIC_RELEASE);
  }
  return __atomic_load_n(&front, __ATOMIC_RELAXED);
}

static int IsMonotonic(clockid_t id) {
  return id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_COARSE || id == CLOCK_MONOTONIC_RAW ||
         id == CLOCK_BOOTTIME;
}

static void DieFront(const char* what, const char* path) {
  WriteStderr("xackly clock preload: a sleep ");
  WriteStderr(what);
  WriteStderr(" XACKLY_FRONT_SOCKET=");
  WriteStderr(path);
  WriteStderr("\n");
  _exit(kExitNoFront);
}

/* Appends the decimal digits of v >= 0 at p; returns the end. */
static char* AppendDecimal(char* p, int64_t v) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

/* Appends "$<len>\r\n<decimal v>\r\n" (a bulk string of v) to p. */
static char* AppendBulkDecimal(char* p, int64_t v) {
  char number[24];
  char* end = AppendDecimal(number, v);
  *p++ = '$';
  p = AppendDecimal(p, end - number);
  *p++ = '\r';
  *p++ = '\n';
  memcpy(p, number, (size_t)(end - number));
  p += end - number;
  *p++ = '\r';
  *p++ = '\n';
  return p;
}

/* Sends `verb` <ms> (XACKLY.COMMITTED), or `verb` <ms> <tid>
 * when tid >= 0 (XACKLY.WAIT: the thread that waits), to the front on a
 * connection of its own and waits for its reply line. */
static void FrontRoundTrip(const char* path, const char* verb, int64_t ms, long tid) {
  long fd = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) DieFront("cannot open a socket to", path);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof addr.sun_path) DieFront("names too long a path:", path);
  memcpy(addr.sun_path, path, strlen(path) + 1);
  if (syscall(SYS_connect, fd, &addr, sizeof addr) != 0) DieFront("cannot connect to", path);
  char frame[128];
  char* p = frame;
  memcpy(p, tid >= 0 ? "*3\r\n$" : "*2\r\n$", 5);
  p += 5;
  p = AppendDecimal(p, (int64_t)strlen(verb));
  *p++ = '\r';
  *p++ = '\n';
  memcpy(p, verb, strlen(verb));
  p += strlen(verb);
  *p++ = '\r';
  *p++ = '\n';
  p = AppendBulkDecimal(p, ms);
  if (tid >= 0) p = AppendBulkDecimal(p, tid);
  for (char* q = frame; q < p;) {
    long n = syscall(SYS_write, fd, q, (size_t)(p - q));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) DieFront("cannot write to", path);
    q += n;
  }
  char c = 0;
  int seen_cr = 0;
  for (;;) {  /* the reply is one line: +OK */
    long n = syscall(SYS_read, fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) DieFront("got no answer from", path);
    if (seen_cr && c == '\n') break;
    seen_cr = c == '\r';
  }
  syscall(SYS_close, fd);
}

/* What a timed wait looks at, with a zero timeout: the number of ready
 * descriptors, 0 for none, -1 with errno on failure. */
typedef long (*LookFn)(void* ctx);
static long WaitVirtually(int timeout_ms, LookFn look, void* ctx);

/* A sleep looks at nothing. */
static long LookAtNothing(void* ctx) {
  (void)ctx;
  return 0;
}

/* A sleep is a timed wait with nothing to look at (WaitVirtually): its
 * thread's timer is one of the process's timers, and the front sleeps to
 * the earliest of them, as a kernel wakes whichever thread's comes first
 * (a heartbeat thread's select(1 s) beside a time.sleep(5)). */
static void VirtualSleepMs(int64_t ms) {
  while (ms > 0) {
    const int part = ms > 0x7fffffff ? 0x7fffffff : (int)ms;
    WaitVirtually(part, LookAtNothing, NULL);
    ms -= part;
  }
}

/* How long a sleep until `req` (absolute on `clock_id` when `absolute`)
 * lasts, in whole milliseconds rounded up. */
static int64_t SleepMs(clockid_t clock_id, int absolute, const struct timespec* req);

__attribute__((visibility("default"))) int clock_nanosleep(clockid_t clock_id, int flags,
                                                           const struct timespec* req,
                                                           struct timespec* rem) {
  const char* front = FrontSocket();
  if (front == NULL || Page() == NULL) {
    long rc = syscall(SYS_clock_nanosleep, clock_id, flags, req, rem);
    return rc == 0 ? 0 : errno;  /* clock_nanosleep returns the error number */
  }
  if (req->tv_sec < 0 || req->tv_nsec < 0 || req->tv_nsec >= 1000000000) return EINVAL;
  VirtualSleepMs(SleepMs(clock_id, (flags & TIMER_ABSTIME) != 0, req));
  if (rem != NULL && (flags & TIMER_ABSTIME) == 0) memset(rem, 0, sizeof *rem);
  return 0;
}

__attribute__((visibility("default"))) int nanosleep(const struct timespec* req, struct timespec* rem) {
  int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);
  if (rc == 0) return 0;
  errno = rc;
  return -1;
}

__attribute__((visibility("default"))) int usleep(useconds_t us) {
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  return nanosleep(&ts, NULL);
}

__attribute__((visibility("default"))) unsigned int sleep(unsigned int seconds) {
  struct timespec ts = {(time_t)seconds, 0};
  return nanosleep(&ts, NULL) == 0 ? 0 : seconds;
}

__attribute__((visibility("default"))) int clock_gettime(clockid_t clock_id, struct timespec* ts) {
  int64_t ns;
  if ((clock_id == CLOCK_REALTIME || clock_id == CLOCK_REALTIME_COARSE ||
       (IsMonotonic(clock_id) && FrontSocket() != NULL)) &&
      VirtualNs(&ns)) {
    ts->tv_sec = (time_t)(ns / 1000000000);
    ts->tv_nsec = (long)(ns % 1000000000);
    return 0;
  }
  return RawClockGettime(clock_id, ts);
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* restrict tv,
                                                        void* restrict tz) {
  /* glibc declares tv nonnull, so it is not checked here. */
  if (tz != NULL) memset(tz, 0, sizeof(struct timezone));
  struct timespec ts;
  int rc = clock_gettime(CLOCK_REALTIME, &ts);
  if (rc != 0) return rc;
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

__attribute__((visibility("default"))) time_t time(time_t* out) {
  struct timespec ts;
  if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}

static int64_t SleepMs(clockid_t clock_id, int absolute, const struct timespec* req) {
  int64_t ns = (int64_t)req->tv_sec * 1000000000 + req->tv_nsec;
  if (absolute) {
    struct timespec now;
    if (clock_gettime(clock_id, &now) != 0) return 0;
    ns -= (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
  }
  return ns <= 0 ? 0 : (ns + 999999) / 1000000;
}

/* --- a real consumer's randomness -----------------------------------------
 *
 * In a consumer process (XACKLY_FRONT_SOCKET set), getrandom and getentropy
 * (Python's os.urandom, uuid.uuid4, random's and secrets' seeds) draw from a
 * stream of XACKLY_RANDOM_SEED (a decimal the front sets per worker and
 * incarnation): one seed, the same bytes, run after run. A program that
 * reads the kernel another way (a raw getrandom syscall, /dev/urandom by
 * read(), OpenSSL) is not controlled (docs/real-consumers.md). */

static uint64_t g_consumer_random = 0;
static int g_consumer_random_ready = 0;

static uint64_t NextConsumerRandom(void) {
  if (!__atomic_load_n(&g_consumer_random_ready, __ATOMIC_ACQUIRE)) {
    uint64_t seed = XACKLY_RANDOM_SEED;
    const char* text = getenv("XACKLY_RANDOM_SEED");
    if (text != NULL) {
      for (seed = 0; *text >= '0' && *text <= '9'; ++text) seed = seed * 10 + (uint64_t)(*text - '0');
    }
    __atomic_store_n(&g_consumer_random, seed, __ATOMIC_RELAXED);
    __atomic_store_n(&g_consumer_random_ready, 1, __ATOMIC_RELEASE);
  }
  uint64_t z = __atomic_add_fetch(&g_consumer_random, 0x9e3779b97f4a7c15ull, __ATOMIC_RELAXED);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void FillConsumerRandom(unsigned char* out, size_t len) {
  while (len > 0) {
    uint64_t v = NextConsumerRandom();
    size_t n = len < sizeof v ? len : sizeof v;
    memcpy(out, &v, n);
    out += n;
    len -= n;
  }
}

__attribute__((visibility("default"))) ssize_t getrandom(void* buf, size_t len, unsigned int flags) {
  if (FrontSocket() == NULL) return syscall(SYS_getrandom, buf, len, flags);
  FillConsumerRandom((unsigned char*)buf, len);
  return (ssize_t)len;
}

__attribute__((visibility("default"))) int getentropy(void* buf, size_t len) {
  if (len > 256) {
    errno = EIO;
    return -1;
  }
  if (FrontSocket() != NULL) {
    FillConsumerRandom((unsigned char*)buf, len);
    return 0;
  }
  for (size_t done = 0; done < len;) {  /* glibc's: the kernel's bytes, retried on EINTR */
    long n = syscall(SYS_getrandom, (unsigned char*)buf + done, len - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    done += (size_t)n;
  }
  return 0;
}

/* --- a real consumer's timed waits -----------------------------------------
 *
 * In a consumer process, poll, ppoll, epoll_wait, epoll_pwait, select and
 * pselect with a timeout (an event loop's timers: Node's setTimeout,
 * asyncio's call_later, a socket timeout, Python's select.select) look at
 * the descriptors at once; while none is ready and the timeout has not
 * passed on the virtual clock, the time left is sent to the front as
 * XACKLY.WAIT <ms>, which answers at once when a reply of its may still be
 * on the way, else after <ms> of virtual time (a sleep step), and the
 * descriptors are looked at again (WaitVirtually). The wait never passes in
 * real time, and never ends early: 0 ready means the whole timeout passed. A wait without a timeout (-1) blocks for
 * real: only a descriptor can end it (a reply the front sends). */

/* The timeout in ms a timespec gives (rounded up); -1 for none. */
static int TimeoutMsOf(const struct timespec* ts) {
  if (ts == NULL) return -1;
  int64_t ms = (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
  return ms > 0x7fffffff ? 0x7fffffff : (int)ms;
}

/* A wait of `timeout_ms` (> 0) on the virtual clock: looks, and while
 * nothing is ready and the virtual deadline is still ahead, sends the time
 * left as XACKLY.WAIT and looks again. The front answers at once when
 * something may still change (a reply on the way, another thread that
 * ran), else after that much virtual time (a sleep step); either way the
 * caller gets 0 only once its whole timeout has passed on the virtual
 * clock, as a real wait would. -2: not in a consumer process (the caller
 * waits for real). */
static long WaitVirtually(int timeout_ms, LookFn look, void* ctx) {
  const char* front = FrontSocket();
  int64_t now_ns = 0;
  if (front == NULL || timeout_ms <= 0 || !VirtualNs(&now_ns)) return -2;
  const int64_t deadline_ms = now_ns / 1000000 + timeout_ms;
  for (;;) {
    long n = look(ctx);
    if (n != 0) return n;
    if (!VirtualNs(&now_ns)) return 0;
    const int64_t left_ms = deadline_ms - now_ns / 1000000;
    if (left_ms <= 0) return 0;
    FrontRoundTrip(front, "XACKLY.WAIT", left_ms, syscall(SYS_gettid));
  }
}

struct PollLook {
  struct pollfd* fds;
  nfds_t nfds;
  const sigset_t* sigmask;
};

static long LookPoll(void* ctx) {
  struct PollLook* l = ctx;
  const struct timespec zero = {0, 0};
  return syscall(SYS_ppoll, l->fds, l->nfds, &zero, l->sigmask, (size_t)8);
}

__attribute__((visibility("default"))) int ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout,
                                                 const sigset_t* sigmask) {
  struct PollLook look = {fds, nfds, sigmask};
  long n = WaitVirtually(TimeoutMsOf(timeout), LookPoll, &look);
  if (n != -2) return (int)n;
  return (int)syscall(SYS_ppoll, fds, nfds, timeout, sigmask, (size_t)8);
}

__attribute__((visibility("default"))) int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  if (timeout < 0) return (int)syscall(SYS_ppoll, fds, nfds, NULL, NULL, (size_t)8);
  const struct timespec ts = {timeout / 1000, (long)(timeout % 1000) * 1000000};
  return ppoll(fds, nfds, &ts, NULL);
}

struct EpollLook {
  int epfd;
  struct epoll_event* events;
  int maxevents;
  const sigset_t* sigmask;
};

static long LookEpoll(void* ctx) {
  struct EpollLook* l = ctx;
  return syscall(SYS_epoll_pwait, l->epfd, l->events, l->maxevents, 0, l->sigmask, (size_t)8);
}

__attribute__((visibility("default"))) int epoll_pwait(int epfd, struct epoll_event* events, int maxevents,
                                                       int timeout, const sigset_t* sigmask) {
  struct EpollLook look = {epfd, events, maxevents, sigmask};
  long n = WaitVirtually(timeout, LookEpoll, &look);
  if (n != -2) return (int)n;
  return (int)syscall(SYS_epoll_pwait, epfd, events, maxevents, timeout, sigmask, (size_t)8);
}

__attribute__((visibility("default"))) int epoll_wait(int epfd, struct epoll_event* events, int maxevents,
                                                      int timeout) {
  return epoll_pwait(epfd, events, maxevents, timeout, NULL);
}

/* select and pselect, both as pselect6 (select has no syscall of its own on
 * some architectures). Each look starts from the caller's sets, which a
 * look that found nothing clears. */
struct SelectLook {
  int nfds;
  fd_set* given[3];  /* read, write, except (each may be NULL) */
  fd_set sets[3];    /* the caller's, as given */
  const sigset_t* sigmask;
};

static long LookSelect(void* ctx) {
  struct SelectLook* l = ctx;
  for (int i = 0; i < 3; ++i) {
    if (l->given[i] != NULL) *l->given[i] = l->sets[i];
  }
  struct timespec zero = {0, 0};
  struct {
    const sigset_t* set;
    size_t size;
  } mask = {l->sigmask, 8};
  return syscall(SYS_pselect6, l->nfds, l->given[0], l->given[1], l->given[2], &zero, &mask);
}

static int Pselect(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds, struct timespec* timeout,
                   const sigset_t* sigmask) {
  struct SelectLook look = {nfds, {readfds, writefds, exceptfds}, {{{0}}}, sigmask};
  for (int i = 0; i < 3; ++i) {
    if (look.given[i] != NULL) look.sets[i] = *look.given[i];
  }
  long n = WaitVirtually(TimeoutMsOf(timeout), LookSelect, &look);
  if (n == 0) *timeout = (struct timespec){0, 0};  /* the whole timeout passed (virtually) */
  if (n != -2) return (int)n;
  struct {
    const sigset_t* set;
    size_t size;
  } mask = {sigmask, 8};
  return (int)syscall(SYS_pselect6, nfds, readfds, writefds, exceptfds, timeout, &mask);
}

__attribute__((visibility("default"))) int select(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds,
                                                  struct timeval* timeout) {
  if (timeout == NULL) return Pselect(nfds, readfds, writefds, exceptfds, NULL, NULL);
  if (timeout->tv_sec < 0 || timeout->tv_usec < 0) {
    errno = EINVAL;
    return -1;
  }
  struct timespec ts = {timeout->tv_sec + timeout->tv_usec / 1000000, (timeout->tv_usec % 1000000) * 1000};
  int n = Pselect(nfds, readfds, writefds, exceptfds, &ts, NULL);
  /* Linux's select leaves the time not slept in `timeout` (pselect6 wrote
   * it to ts; a virtual wait leaves ts as given, as none is left of it
   * once it returns 0, and less is not told). */
  if (n >= 0) {
    timeout->tv_sec = ts.tv_sec;
    timeout->tv_usec = ts.tv_nsec / 1000;
  }
  return n;
}

__attribute__((visibility("default"))) int pselect(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds,
                                                   const struct timespec* timeout, const sigset_t* sigmask) {
  struct timespec left;
  if (timeout != NULL) left = *timeout;
  return Pselect(nfds, readfds, writefds, exceptfds, timeout != NULL ? &left : NULL, sigmask);
}

/* --- a real consumer's SQLite commits ---------------------------------------
 *
 * In a consumer process, a sqlite3_step that ends a transaction (COMMIT,
 * ROLLBACK) or writes outside one is followed by XACKLY.COMMITTED on a
 * connection of its own: the front reads the xackly_effects rows committed
 * since it last looked as effect steps, each a crash point (after-effect),
 * so a crash can fall right after the commit, before the process's next
 * statement, not only at its next Redis request. The real functions are
 * found in the loaded library that has them (dl_iterate_phdr, dlsym), only
 * here: a consumer's SQLite calls them,
 * redis-server never does. */

typedef int (*SqliteStmtFn)(void*);
typedef void* (*SqliteDbOfFn)(void*);

int sqlite3_step(void* stmt);

struct SqliteLookup {
  const char* name;
  void* found;
};

/* The loaded object (other than this library) that defines `name`.
 * RTLD_NEXT cannot see it: Python loads its SQLite module with RTLD_LOCAL. */
static int FindInObject(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  struct SqliteLookup* lookup = (struct SqliteLookup*)data;
  if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0') return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_LAZY);
  if (handle == NULL) return 0;
  void* f = dlsym(handle, lookup->name);
  dlclose(handle);
  if (f == NULL || f == (void*)&sqlite3_step) return 0;
  lookup->found = f;
  return 1;
}

static void* FindSqlite(const char* name) {
  struct SqliteLookup lookup = {name, NULL};
  dl_iterate_phdr(&FindInObject, &lookup);
  if (lookup.found == NULL) {
    WriteStderr("xackly clock preload: SQLite's ");
    WriteStderr(name);
    WriteStderr(" is not in any loaded library\n");
    _exit(72);
  }
  return lookup.found;
}

__attribute__((visibility("default"))) int sqlite3_step(void* stmt) {
  static SqliteStmtFn real_step = NULL, autocommit = NULL, readonly = NULL;
  static SqliteDbOfFn db_of = NULL;
  if (__atomic_load_n(&real_step, __ATOMIC_ACQUIRE) == NULL) {
    __atomic_store_n(&autocommit, (SqliteStmtFn)FindSqlite("sqlite3_get_autocommit"), __ATOMIC_RELAXED);
    __atomic_store_n(&readonly, (SqliteStmtFn)FindSqlite("sqlite3_stmt_readonly"), __ATOMIC_RELAXED);
    __atomic_store_n(&db_of, (SqliteDbOfFn)FindSqlite("sqlite3_db_handle"), __ATOMIC_RELAXED);
    __atomic_store_n(&real_step, (SqliteStmtFn)FindSqlite("sqlite3_step"), __ATOMIC_RELEASE);
  }
  SqliteStmtFn step = __atomic_load_n(&real_step, __ATOMIC_ACQUIRE);
  const char* front = FrontSocket();
  if (front == NULL) return step(stmt);
  void* db = db_of(stmt);
  const int in_transaction = !autocommit(db);
  const int writes = !readonly(stmt);
  const int rc = step(stmt);
  const int ended = in_transaction && autocommit(db);          /* COMMIT, ROLLBACK */
  const int wrote_alone = !in_transaction && writes && rc == 101; /* SQLITE_DONE */
  if (ended || wrote_alone) FrontRoundTrip(front, "XACKLY.COMMITTED", 0, -1);
  return rc;
}
