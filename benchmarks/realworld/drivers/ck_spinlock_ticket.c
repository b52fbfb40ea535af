/* Concurrency Kit (libck-dev): ck_spinlock_ticket protecting a plain counter, 4 threads
 * (spinlock_counter.h). Checks the count. */
#include <ck_spinlock.h>
#define LOCK_T ck_spinlock_ticket_t
#define LOCK_INIT CK_SPINLOCK_TICKET_INITIALIZER
#define LOCK_ACQUIRE ck_spinlock_ticket_lock
#define LOCK_RELEASE ck_spinlock_ticket_unlock
#include "spinlock_counter.h"
