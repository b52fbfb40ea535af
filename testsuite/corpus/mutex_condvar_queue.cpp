// robust: yes
// race: no
// reason: every shared access is under one std::mutex; the consumer waits on a condition_variable
// C++: producer/consumer through std::mutex + std::condition_variable and a std::deque.
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable cv;
static std::deque<int> q;
static bool done;

int main() {
  std::thread prod([] {
    for (int i = 1; i <= 4; i++) {
      std::lock_guard<std::mutex> g(m);
      q.push_back(i);
      cv.notify_one();
    }
    std::lock_guard<std::mutex> g(m);
    done = true;
    cv.notify_one();
  });
  long sum = 0;
  std::thread cons([&sum] {
    for (;;) {
      std::unique_lock<std::mutex> l(m);
      cv.wait(l, [] { return !q.empty() || done; });
      if (q.empty())
        return;
      sum += q.front();
      q.pop_front();
    }
  });
  prod.join();
  cons.join();
  std::printf("sum=%ld\n", sum);
  return sum == 10 ? 0 : 1;
}
