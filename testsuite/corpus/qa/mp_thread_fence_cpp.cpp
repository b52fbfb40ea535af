// robust: yes
// race: no
// reason: std::atomic_thread_fence(release) before the relaxed flag store and std::atomic_thread_fence(acquire) after the relaxed load that reads it synchronise (fence-fence, C++ [atomics.fences]/2), so the plain payload is ordered; the flag is one location
// C++ MP: plain payload, relaxed flag, fence-fence synchronisation (the signal-fence program's fix).
#include <atomic>
#include <cstdio>
#include <thread>

static std::atomic<bool> ready{false};
static int payload;

int main() {
  std::thread producer([] {
    payload = 42;
    std::atomic_thread_fence(std::memory_order_release);
    ready.store(true, std::memory_order_relaxed);
  });
  std::thread consumer([] {
    while (!ready.load(std::memory_order_relaxed)) {
    }
    std::atomic_thread_fence(std::memory_order_acquire);
    std::printf("%d\n", payload);
  });
  producer.join();
  consumer.join();
  return 0;
}
