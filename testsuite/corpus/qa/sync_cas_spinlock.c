// robust: yes
// race: no
// reason: __sync_val_compare_and_swap and __sync_lock_release: the legacy builtins are full barriers (seq_cst) except __sync_lock_release (release) and __sync_lock_test_and_set (acquire); a spinlock whose acquire is a CAS loop on one word and whose release is a release store protects the plain data; one location carries all synchronisation
// Spinlock built from the legacy __sync builtins around a plain two-field record, three threads.
#include <pthread.h>
#include <stdio.h>

static volatile int lockword;
static struct {
  int x, y;
} rec;

static void *work(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) {
    while (__sync_val_compare_and_swap(&lockword, 0, 1) != 0)
      ;
    rec.x++;
    rec.y += 2;
    __sync_lock_release(&lockword);
  }
  return NULL;
}

int main(void) {
  pthread_t t[3];
  for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, work, NULL);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  printf("%d %d\n", rec.x, rec.y);
  return rec.x == 6 && rec.y == 12 ? 0 : 1;
}
