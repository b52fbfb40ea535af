// robust: yes
// race: yes
// reason: std::atomic_signal_fence(release/acquire) synchronises nothing between threads (only with a signal handler of the same thread), so the payload written before the flag and read after it is a data race; the atomic flag alone is robust (one location)
// C++ MP: plain payload, relaxed flag, std::atomic_signal_fence in place of thread fences.
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> ready{false};
static int payload;

int main() {
  std::thread producer([] {
    payload = 42;
    std::atomic_signal_fence(std::memory_order_release);
    ready.store(true, std::memory_order_relaxed);
  });
  std::thread consumer([] {
    while (!ready.load(std::memory_order_relaxed)) {
    }
    std::atomic_signal_fence(std::memory_order_acquire);
    std::printf("%d\n", payload);
  });
  producer.join();
  consumer.join();
  return 0;
}
