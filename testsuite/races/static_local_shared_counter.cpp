// race: yes
// robust: yes
// opt: -O0 -O1
// reason: the static's initialisation is ordered before every use by its guard, but the increments of its member by different threads are not ordered by anything
// A function-local static initialised safely, whose member is then incremented by two threads without a lock.
#include <pthread.h>
#include <cstdio>

struct Stats {
  long hits;
  long limit[8];
  Stats() : hits(0) {
    for (long i = 0; i < 8; i++) limit[i] = 100 + i;
  }
};

static Stats &stats() {
  static Stats s;
  return s;
}

static void *work(void *arg) {
  Stats &s = stats();
  for (long i = 0; i < s.limit[(long)arg]; i++) s.hits++; // pyrsan: race
  return nullptr;
}

int main() {
  pthread_t t[2];
  for (long i = 0; i < 2; i++) pthread_create(&t[i], nullptr, work, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], nullptr);
  std::printf("%ld\n", stats().hits);
  return 0;
}
