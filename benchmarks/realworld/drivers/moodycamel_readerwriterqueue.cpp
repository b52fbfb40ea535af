// moodycamel::ReaderWriterQueue (libreaderwriterqueue-dev): a single-producer single-consumer
// queue of circular blocks, grown by the producer. Checks that values arrive in order.
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <readerwriterqueue/readerwriterqueue.h>
#include <cstdio>
#include <thread>

constexpr int kItems = SMALL ? 3 : 20000;

int main() {
  moodycamel::ReaderWriterQueue<int> queue(SMALL ? 2 : 16);
  int bad = 0;
  std::thread producer([&] {
    for (int i = 1; i <= kItems; i++) queue.enqueue(i);
  });
  std::thread consumer([&] {
    int v, next = 1;
    while (next <= kItems)
      if (queue.try_dequeue(v)) bad += v != next++;
  });
  producer.join();
  consumer.join();
  if (bad) {
    std::printf("bad: %d values out of order\n", bad);
    return 1;
  }
  std::printf("ok %d in order\n", kItems);
  return 0;
}
