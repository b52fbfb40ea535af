#include <cstdio>
#include <thread>
#include "q.h"
int main() {
  std::thread p(produce, 6);
  int sum = 0, v, got = 0;
  while (got < 6) if (ring.pop(v)) { sum += v; got++; }
  p.join();
  std::printf("%d\n", sum);
}
