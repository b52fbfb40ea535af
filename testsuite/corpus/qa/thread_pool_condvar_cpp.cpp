// robust: yes
// race: no
// reason: the task queue is a std::deque under a std::mutex with a std::condition_variable; each task writes its own plain result slot and bumps a relaxed counter; main waits on the done condition under the mutex and the workers' notify follows their writes under the same mutex, so the results are hb-before main's reads; the counter is a single atomic location (RMWs only), robust
// A thread pool of three workers running std::function tasks from a mutex/condvar queue.
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex mu;
static std::condition_variable cv, done_cv;
static std::deque<std::function<void()>> tasks;
static bool stopping;
static int finished;
static std::atomic<int> ran{0};
static int results[8];

static void worker() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> g(mu);
      cv.wait(g, [] { return stopping || !tasks.empty(); });
      if (tasks.empty()) return;
      task = std::move(tasks.front());
      tasks.pop_front();
    }
    task();
    ran.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> g(mu);
    finished++;
    done_cv.notify_all();
  }
}

int main() {
  std::vector<std::thread> pool;
  for (int i = 0; i < 3; i++) pool.emplace_back(worker);
  {
    std::lock_guard<std::mutex> g(mu);
    for (int i = 0; i < 8; i++) tasks.push_back([i] { results[i] = i * i; });
  }
  cv.notify_all();
  {
    std::unique_lock<std::mutex> g(mu);
    done_cv.wait(g, [] { return finished == 8; });
    stopping = true;
  }
  cv.notify_all();
  for (auto &t : pool) t.join();
  int sum = 0;
  for (int r : results) sum += r;
  std::printf("%d %d\n", sum, ran.load(std::memory_order_relaxed));
}
