// robust: yes
// race: no
// reason: thread_local counters are private to each thread; the totals are merged under a mutex
// C++: thread_local accumulation merged under std::mutex.
#include <cstdio>
#include <mutex>
#include <thread>

static thread_local long local_sum;
static long total;
static std::mutex m;

static void work(int k) {
  for (int i = 0; i < 10; i++)
    local_sum += i * k;
  std::lock_guard<std::mutex> g(m);
  total += local_sum;
}

int main() {
  std::thread a(work, 1), b(work, 2);
  work(3);
  a.join();
  b.join();
  std::printf("%ld\n", total);
  return total == 270 ? 0 : 1;
}
