// robust: yes
// race: no
// reason: each thread counts in a thread_local struct (no sharing) and adds its totals to global atomics with relaxed fetch_add when it finishes; main reads the totals after joining every thread (join orders the adds before), and RMWs on a location are totally ordered: no stale value can flow anywhere
// Per-thread statistics in thread_local storage merged into global atomics at the end of each thread, four threads.
#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

struct Stats {
  long ops = 0, bytes = 0;
};
static thread_local Stats local;
static std::atomic<long> all_ops{0}, all_bytes{0};

static void work(int id) {
  for (int i = 0; i < 50; i++) {
    local.ops++;
    local.bytes += id + i;
  }
  all_ops.fetch_add(local.ops, std::memory_order_relaxed);
  all_bytes.fetch_add(local.bytes, std::memory_order_relaxed);
}

int main() {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; i++) ts.emplace_back(work, i);
  for (auto &t : ts) t.join();
  std::printf("%ld %ld\n", all_ops.load(std::memory_order_relaxed), all_bytes.load(std::memory_order_relaxed));
  return 0;
}
