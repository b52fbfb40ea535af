// robust: yes
// race: no
// reason: the consumer waits with condition_variable::wait_for (a 5 ms timeout) in a loop that re-checks the predicate under the mutex; the producer sets the plain item and the flag under the same mutex and notifies; every shared access is under the mutex, so a timeout only makes the consumer check again; no atomics of the program's own
// Timed condition-variable waits (wait_for in a loop), one producer, one consumer.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

static std::mutex m;
static std::condition_variable cv;
static bool ready;
static int item;

int main() {
  std::thread consumer([] {
    std::unique_lock<std::mutex> lk(m);
    int timeouts = 0;
    while (!ready)
      if (cv.wait_for(lk, std::chrono::milliseconds(5)) == std::cv_status::timeout) timeouts++;
    std::printf("%d\n", item);
    (void)timeouts;
  });
  std::thread producer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    {
      std::lock_guard<std::mutex> g(m);
      item = 7;
      ready = true;
    }
    cv.notify_one();
  });
  producer.join();
  consumer.join();
  return 0;
}
