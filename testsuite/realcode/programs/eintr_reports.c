/* Many distinct reports (store buffering on 8 pairs of relaxed atomics, each pair at its own
 * lines) written while a 100 µs interval timer interrupts the process with a handler
 * installed WITHOUT SA_RESTART, so a blocked write(2) of a report fails with EINTR. Every
 * report must still reach stderr whole. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>

static atomic_long ticks;
static void on_alarm(int sig) { (void)sig; atomic_fetch_add_explicit(&ticks, 1, memory_order_relaxed); }

#define PAIR(n)                                                                                    \
  static atomic_int x##n, y##n;                                                                    \
  static void *a##n(void *p) { atomic_store_explicit(&x##n, 1, memory_order_relaxed); return (void *)(long)atomic_load_explicit(&y##n, memory_order_relaxed); } \
  static void *b##n(void *p) { atomic_store_explicit(&y##n, 1, memory_order_relaxed); return (void *)(long)atomic_load_explicit(&x##n, memory_order_relaxed); }
PAIR(0) PAIR(1) PAIR(2) PAIR(3) PAIR(4) PAIR(5) PAIR(6) PAIR(7)
static void *(*fa[])(void *) = {a0, a1, a2, a3, a4, a5, a6, a7};
static void *(*fb[])(void *) = {b0, b1, b2, b3, b4, b5, b6, b7};

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART */
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &it, NULL);
  for (int r = 0; r < 3; r++)
    for (int i = 0; i < 8; i++) {
      pthread_t a, b;
      pthread_create(&a, 0, fa[i], 0);
      pthread_create(&b, 0, fb[i], 0);
      pthread_join(a, 0);
      pthread_join(b, 0);
    }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  return 0;
}
