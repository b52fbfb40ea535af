// oneTBB (libtbb-dev; link: -ltbb): tbb::concurrent_queue (unbounded MPMC, micro-queues with
// ticket counters), 2 producers and 2 consumers passing pointers to plain records. Checks the
// sum.
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <tbb/concurrent_queue.h>
#include <atomic>
#include <cstdio>
#include <thread>

constexpr long kPerProducer = SMALL ? 1 : 1000;
constexpr long kItems = 2 * kPerProducer;
static long records[kItems];
static std::atomic<long> consumed{0};

int main() {
  tbb::concurrent_queue<long *> queue;
  long sums[2] = {0, 0};
  std::thread threads[4];
  for (long p = 0; p < 2; p++)
    threads[p] = std::thread([p, &queue] {
      for (long i = p * kPerProducer; i < (p + 1) * kPerProducer; i++) {
        records[i] = i;  // plain write, published by the push
        queue.push(&records[i]);
      }
    });
  for (int c = 0; c < 2; c++)
    threads[2 + c] = std::thread([c, &sums, &queue] {
      long sum = 0, *p;
      while (consumed.load(std::memory_order_relaxed) < kItems)
        if (queue.try_pop(p)) {
          sum += *p;
          consumed.fetch_add(1, std::memory_order_relaxed);
        }
      sums[c] = sum;
    });
  for (auto &t : threads) t.join();
  long sum = sums[0] + sums[1];
  std::printf("%s %ld\n", (sum == kItems * (kItems - 1) / 2) ? "ok" : "bad", sum);
  return (sum == kItems * (kItems - 1) / 2) ? 0 : 1;
}
