/* Prints every wall-clock read the clock preload library answers, and
 * whether the monotonic clock still runs in real time. Run by
 * virtual_clock_test.cc under LD_PRELOAD=libxackly_clock.so. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static long long Ns(const struct timespec* ts) {
  return (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

int main(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  printf("gettimeofday_us %lld\n", (long long)tv.tv_sec * 1000000LL + tv.tv_usec);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  printf("realtime_ns %lld\n", Ns(&ts));
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  printf("realtime_coarse_ns %lld\n", Ns(&ts));
  printf("time_s %lld\n", (long long)time(NULL));
  struct timespec before, after, pause = {0, 20 * 1000 * 1000};
  clock_gettime(CLOCK_MONOTONIC, &before);
  nanosleep(&pause, NULL);
  clock_gettime(CLOCK_MONOTONIC, &after);
  printf("monotonic_runs %d\n", Ns(&after) - Ns(&before) >= 10 * 1000 * 1000);
  /* A clock the kernel does not know fails the way clock_gettime promises. */
  errno = 0;
  int rc = clock_gettime((clockid_t)12345, &ts);
  printf("bad_clock rc %d errno_is_einval %d\n", rc, errno == EINVAL);
  return 0;
}
