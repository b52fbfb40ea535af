/* Lazy initialisation of the runtime: options (flags.c), the scheduler, the exit summary.
 * Instrumented code can run before main (C++ constructors, site registration), so every
 * entry point calls rsan_ensure_init (rsan_internal.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rsan_internal.h"
#include "rsan_explain.h"
#include "rsan_race.h"
#include "rsan_sched.h"

int rsan_inited;
int rsan_test_mode;
static rsan_spin init_lock;

static void rsan_at_exit(void) {
  rsan_sched_process_exit(); /* the other threads may run before the process ends */
  if (rsan_flag.verbosity >= 1) rsan_loc_print_stats(); /* docs/design/clocks.md */
  if (rsan_flag.verbosity >= 1) rsan_loc_print_census(); /* docs/design/clocks.md §15 */
  if (rsan_flag.verbosity >= 1) rsan_race_print_census(); /* docs/design/races.md §17 */
  if (rsan_flag.verbosity >= 1) rsan_lock_print_stats();  /* lock.c */
  rsan_report_at_exit();
}

void rsan_init_slow(void) {
  rsan_spin_lock(&init_lock);
  if (!rsan_inited) {
    rsan_flags_defaults();
    const char *env = getenv("PYRSAN_OPTIONS");
    char err[300];
    /* a bad option ends the process in there, with RSAN_EXIT_BAD_OPTIONS (only test mode,
     * which starts after this, gets an error back) */
    if (env) (void)rsan_flags_parse(env, err, sizeof err);
    if (rsan_flag.help) rsan_flags_print_help();
    rsan_sched_init();
    rsan_explain_init();
    if (rsan_flag.verbosity >= 1) {
      static const char msg[] = "pyrsan: runtime started\n";
      (void)!write(2, msg, sizeof msg - 1);
    }
    atexit(rsan_at_exit);
    __atomic_store_n(&rsan_inited, 1, __ATOMIC_RELEASE);
  }
  rsan_spin_unlock(&init_lock);
}


/* fork (rsan_fork.h) */
void rsan_init_fork_lock(void) { rsan_spin_lock(&init_lock); }
void rsan_init_fork_unlock(void) { rsan_spin_unlock(&init_lock); }
