/* Concurrency Kit (libck-dev): ck_spinlock_cas protecting a plain counter, 4 threads
 * (spinlock_counter.h). Checks the count. */
#include <ck_spinlock.h>
#define LOCK_T ck_spinlock_cas_t
#define LOCK_INIT CK_SPINLOCK_CAS_INITIALIZER
#define LOCK_ACQUIRE ck_spinlock_cas_lock
#define LOCK_RELEASE ck_spinlock_cas_unlock
#include "spinlock_counter.h"
