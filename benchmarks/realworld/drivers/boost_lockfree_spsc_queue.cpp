// Boost.Lockfree (libboost-dev): boost::lockfree::spsc_queue (bounded ring, acquire/release
// indices), 1 producer and 1 consumer passing pointers to plain records. Checks the sum.
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <boost/lockfree/spsc_queue.hpp>
#include <cstdio>
#include <thread>

constexpr long kItems = SMALL ? 3 : 5000;
static boost::lockfree::spsc_queue<long *, boost::lockfree::capacity<64>> queue;
static long records[kItems];

int main() {
  long sum = 0;
  std::thread producer([] {
    for (long i = 0; i < kItems; i++) {
      records[i] = i;  // plain write, published by the push
      while (!queue.push(&records[i])) {
      }
    }
  });
  std::thread consumer([&sum] {
    for (long n = 0; n < kItems;) {
      long *p;
      if (queue.pop(p)) {
        sum += *p;
        n++;
      }
    }
  });
  producer.join();
  consumer.join();
  std::printf("%s %ld\n", (sum == kItems * (kItems - 1) / 2) ? "ok" : "bad", sum);
  return (sum == kItems * (kItems - 1) / 2) ? 0 : 1;
}
