// robust: yes
// race: no
// reason: every access to x and y is inside a critical section of the same std::mutex; unlock/lock order the sections by hb, so every RC20 execution is SC
// C++ store buffering where each relaxed access sits in its own std::lock_guard section (3 threads): must not be reported.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>

std::mutex m;
std::atomic<int> x{0}, y{0};
int plain_total;

static void worker(std::atomic<int> &mine, std::atomic<int> &other, int *seen) {
  {
    std::lock_guard<std::mutex> guard(m);
    mine.store(mine.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    plain_total++;
  }
  {
    std::lock_guard<std::mutex> guard(m);
    *seen = other.load(std::memory_order_relaxed);
  }
}

int main() {
  int s1 = 0, s2 = 0, s3 = 0;
  std::thread a([&] { worker(x, y, &s1); });
  std::thread b([&] { worker(y, x, &s2); });
  std::thread c([&] { worker(x, y, &s3); });
  a.join();
  b.join();
  c.join();
  std::printf("s1=%d s2=%d s3=%d total=%d\n", s1, s2, s3, plain_total);
  return 0;
}
