/* timer_create with SIGEV_THREAD: glibc runs the notification function in threads it creates
 * itself (not through the interposed pthread_create), which would start with empty clocks:
 * everything the creator did before timer_create would look unordered with the function (a
 * false race). The interceptor hands glibc a trampoline: creating the timer is a release on
 * a per-timer record, each notification begins with an acquire load of it, then calls the
 * program's function. The record lives as long as the process (timers are few; glibc may
 * still run a notification after timer_delete returns). */
#include <signal.h>
#include <string.h>
#include <time.h>

#include "intercept_internal.h"
#include "rsan_sched.h"

RSAN_REAL_DECL(int, timer_create, NULL, clockid_t, struct sigevent *, timer_t *)

typedef struct timer_record {
  void (*fn)(union sigval);
  union sigval value;
} timer_record;

static void timer_trampoline(union sigval v) {
  timer_record *r = v.sival_ptr;
  rsan_icpt_acquire_load(r);
  r->fn(r->value);
}

int timer_create(clockid_t clock, struct sigevent *sev, timer_t *id) {
  if (sev == NULL || sev->sigev_notify != SIGEV_THREAD || sev->sigev_notify_function == NULL)
    return REAL(timer_create)(clock, sev, id);
  timer_record *r = rsan_icpt_malloc(sizeof *r);
  if (r == NULL) return REAL(timer_create)(clock, sev, id);
  r->fn = sev->sigev_notify_function;
  r->value = sev->sigev_value;
  rsan_icpt_release(r);
  struct sigevent mine = *sev;
  mine.sigev_notify_function = timer_trampoline;
  mine.sigev_value.sival_ptr = r;
  int rc = REAL(timer_create)(clock, &mine, id);
  if (rc == 0) __atomic_store_n(&rsan_sched_hidden_wakers, 1, __ATOMIC_RELEASE);
  /* a failed create keeps r: the address was modelled (released), never recycled */
  return rc;
}
