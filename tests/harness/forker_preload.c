/* A test fixture, preloaded into xackly: a thread that keeps a forked copy
 * of the process alive nearly all the time, as `check -j 2` does while its
 * other case thread starts servers and consumers (each fork holds a copy of
 * every descriptor until it execs). Each copy sleeps 50 ms and exits. The
 * variable LD_PRELOAD is removed at load, so that nothing xackly starts
 * loads this library too. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void* ForkForEver(void* unused) {
  (void)unused;
  for (;;) {
    pid_t pid = fork();
    if (pid == 0) {
      struct timespec life = {0, 50 * 1000000};
      syscall(SYS_nanosleep, &life, NULL);
      _exit(0);
    }
    if (pid < 0) return NULL;
    while (waitpid(pid, NULL, 0) < 0) {
    }
  }
}

__attribute__((constructor)) static void StartForking(void) {
  unsetenv("LD_PRELOAD");
  pthread_t thread;
  pthread_create(&thread, NULL, ForkForEver, NULL);
}
