// robust: yes
// race: no
// reason: C11 <threads.h>: the counter is only touched under mtx_t, the flag waited for with cnd_t, thrd_join orders the final read
// C11 threads: thrd_create, mtx_lock, cnd_wait / cnd_signal.
#include <stdio.h>
#include <threads.h>

static mtx_t m;
static cnd_t c;
static int ready, counter;

static int worker(void *arg) {
  (void)arg;
  mtx_lock(&m);
  while (!ready)
    cnd_wait(&c, &m);
  counter++;
  mtx_unlock(&m);
  return 0;
}

int main(void) {
  mtx_init(&m, mtx_plain);
  cnd_init(&c);
  thrd_t t[2];
  for (int i = 0; i < 2; i++)
    thrd_create(&t[i], worker, NULL);
  mtx_lock(&m);
  ready = 1;
  cnd_broadcast(&c);
  mtx_unlock(&m);
  for (int i = 0; i < 2; i++)
    thrd_join(t[i], NULL);
  printf("%d\n", counter);
  return counter == 2 ? 0 : 1;
}
