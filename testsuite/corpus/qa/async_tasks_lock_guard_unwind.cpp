// robust: yes
// race: no
// reason: std::async tasks update a shared plain map under a std::lock_guard; one task throws while holding the guard and the unwinding releases the mutex, so the other tasks' later critical sections are ordered after it; results come back through futures (their shared state synchronises); the relaxed counter is one location (RMWs only)
// std::async tasks sharing a mutex-protected map, one throwing out of its critical section.
#include <atomic>
#include <cstdio>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

static std::mutex mu;
static std::map<int, int> table;
static std::atomic<int> calls{0};

static int task(int k) {
  calls.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(mu);
  table[k % 3] += k;
  if (k == 4) throw std::runtime_error("four");
  return table[k % 3];
}

int main() {
  std::vector<std::future<int>> fs;
  for (int k = 0; k < 6; k++) fs.push_back(std::async(std::launch::async, task, k));
  int ok = 0, failed = 0;
  for (auto &f : fs) {
    try {
      ok += f.get() > 0;
    } catch (const std::runtime_error &) {
      failed++;
    }
  }
  std::lock_guard<std::mutex> g(mu);
  std::printf("%d %d %zu %d\n", ok, failed, table.size(), calls.load());
}
