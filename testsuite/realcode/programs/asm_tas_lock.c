/* A test-and-set lock written the way lock libraries write it: xchg in asm, pause, and a
 * compiler barrier; the data it protects is plain. */
#include <pthread.h>
#include <stdio.h>
static volatile int lockword;
static long counter;
static inline int tas(volatile int *p) { int v = 1; __asm__ volatile("xchgl %0, %1" : "+r"(v), "+m"(*p) :: "memory"); return v; }
static inline void cpu_relax(void) { __asm__ volatile("pause"); }
static void lock(void) { while (tas(&lockword)) while (__atomic_load_n(&lockword, __ATOMIC_RELAXED)) cpu_relax(); }
static void unlock(void) { __atomic_store_n(&lockword, 0, __ATOMIC_RELEASE); }
static void *w(void *a) { for (int i = 0; i < 2000; i++) { lock(); counter++; unlock(); } return 0; }
int main(void) { pthread_t t[3]; for (int i = 0; i < 3; i++) pthread_create(&t[i], 0, w, 0); for (int i = 0; i < 3; i++) pthread_join(t[i], 0); printf("%ld\n", counter); return counter != 6000; }
