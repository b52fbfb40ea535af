// moodycamel::ConcurrentQueue (libconcurrentqueue-dev): an MPMC queue of per-producer blocks
// with explicit producer tokens, 2 producers and 2 consumers. Checks the sum of the values.
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <concurrentqueue/concurrentqueue.h>
#include <atomic>
#include <cstdio>
#include <thread>

constexpr int kItems = SMALL ? 2 : 2000;

int main() {
  moodycamel::ConcurrentQueue<int> queue;
  std::atomic<long> sum{0};
  std::atomic<int> taken{0};
  std::thread threads[4];
  for (int p = 0; p < 2; p++)
    threads[p] = std::thread([&] {
      moodycamel::ProducerToken token(queue);
      for (int i = 1; i <= kItems; i++) queue.enqueue(token, i);
    });
  for (int c = 2; c < 4; c++)
    threads[c] = std::thread([&] {
      int v;
      while (taken.load() < 2 * kItems)
        if (queue.try_dequeue(v)) {
          sum += v;
          taken++;
        }
    });
  for (auto &t : threads) t.join();
  long want = 2L * kItems * (kItems + 1) / 2;
  if (sum != want) {
    std::printf("bad sum %ld, want %ld\n", sum.load(), want);
    return 1;
  }
  std::printf("ok sum %ld\n", sum.load());
  return 0;
}
