// Boost.Lockfree (libboost-dev): boost::lockfree::stack (Treiber stack with tagged pointers
// and a freelist), 3 threads popping and pushing back values. Checks that no value is lost.
#ifndef SMALL /* -DSMALL: a few operations per thread, for pyrsan run --explore */
#define SMALL 0
#endif
#include <boost/lockfree/stack.hpp>
#include <cstdio>
#include <thread>

constexpr int kValues = SMALL ? 2 : 32;
constexpr int kRounds = SMALL ? 2 : 500;
static boost::lockfree::stack<int> stack(kValues);

int main() {
  for (int i = 0; i < kValues; i++) stack.push(i);
  std::thread threads[3];
  for (auto &t : threads)
    t = std::thread([] {
      for (int i = 0; i < kRounds; i++) {
        int v;
        if (stack.pop(v)) stack.push(v);
      }
    });
  for (auto &t : threads) t.join();
  long n = 0, sum = 0;
  int v;
  while (stack.pop(v)) {
    n++;
    sum += v;
  }
  std::printf("%s %ld %ld\n", (n == kValues && sum == kValues * (kValues - 1) / 2) ? "ok" : "bad", n, sum);
  return (n == kValues && sum == kValues * (kValues - 1) / 2) ? 0 : 1;
}
