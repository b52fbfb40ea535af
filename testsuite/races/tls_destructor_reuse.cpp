// race: no
// robust: yes
// reason: a thread's stack block (and static TLS) is reset when the next thread starts on it, so what the previous owner's thread_local destructor wrote after its exit hook does not race with the new owner
// Detached threads, one after another, with a thread_local object whose destructor writes it.
#include <pthread.h>
#include <atomic>
#include <cstdio>
#include <unistd.h>
struct Tracker { long hits[4] = {0, 0, 0, 0}; ~Tracker() { for (auto &h : hits) h = -1; } };
thread_local Tracker tracker;
std::atomic<int> done;
static void *work(void *arg) {
  for (int i = 0; i < 4; i++) tracker.hits[i] += (long)arg;
  done.store(1, std::memory_order_relaxed);
  return nullptr;
}
int main() {
  pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  for (long k = 0; k < 4; k++) {
    pthread_t t; done.store(0, std::memory_order_relaxed);
    pthread_create(&t, &a, work, (void *)k);
    while (!done.load(std::memory_order_relaxed)) {}
    usleep(20000);
  }
  std::puts("ok");
}
