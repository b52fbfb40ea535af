// std::thread, std::mutex, std::condition_variable (libstdc++ calls pthread_create itself).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex m;
static std::condition_variable cv;
static std::atomic<int> arrived{0};
static bool open_gate = false;

int main() {
  std::vector<std::thread> workers;
  for (int i = 0; i < 3; i++)
    workers.emplace_back([] {
      std::unique_lock<std::mutex> lk(m);
      arrived.fetch_add(1, std::memory_order_relaxed);
      cv.wait(lk, [] { return open_gate; });
    });
  for (;;) {
    std::lock_guard<std::mutex> lk(m);
    if (arrived.load(std::memory_order_relaxed) == 3) {
      open_gate = true;
      cv.notify_all();
      break;
    }
  }
  for (auto &t : workers) t.join();
  return 0;
}
