// race: no
// robust: yes
// runs: 3
// reason: as static_local_init.cpp; here the constructor itself makes atomic accesses, so a controlled scheduler may switch threads in the middle of the initialisation: the other threads must wait in the scheduler (not in libstdc++'s futex) until __cxa_guard_release
// A function-local static whose constructor yields (atomic accesses), used by three threads.
#include <atomic>
#include <cstdio>
#include <pthread.h>

static std::atomic<int> constructions{0};

struct Slow {
  long value;
  Slow() {
    for (int i = 0; i < 4; i++) constructions.fetch_add(1, std::memory_order_relaxed);
    value = 42;
  }
};

static long use() {
  static Slow slow;
  return slow.value;
}

static void *worker(void *) {
  return (void *)use();
}

int main() {
  pthread_t t[3];
  for (auto &th : t) pthread_create(&th, nullptr, worker, nullptr);
  long sum = 0;
  for (auto &th : t) {
    void *r;
    pthread_join(th, &r);
    sum += (long)r;
  }
  std::printf("%ld %d\n", sum, constructions.load());
  return sum == 126 ? 0 : 1;
}
