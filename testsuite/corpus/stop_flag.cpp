// robust: yes
// race: no
// reason: one relaxed stop flag (a single location: coherence), the worker's counter is its own and read after join
// C++: a worker polls a relaxed std::atomic<bool> stop flag while counting; main sets it and joins.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> stop{false};

int main() {
  long count = 0;
  std::thread w([&count] {
    while (!stop.load(std::memory_order_relaxed) && count < 100000)
      count++;
  });
  stop.store(true, std::memory_order_relaxed);
  w.join();
  std::printf("%s\n", count <= 100000 ? "ok" : "bad");
  return 0;
}
