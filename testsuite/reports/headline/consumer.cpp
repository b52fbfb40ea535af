#include <thread>
#include "ring.hpp"
ring q;
int seen;
static void producer() {
  q.data.store(1, std::memory_order_relaxed);
  q.ready.store(1, std::memory_order_release);
}
static void consumer() {
  if (q.ready.load(std::memory_order_relaxed))
    seen = peek(q);
}
int main() {
  std::thread a(producer), b(consumer);
  a.join();
  b.join();
  return seen == 2;
}
