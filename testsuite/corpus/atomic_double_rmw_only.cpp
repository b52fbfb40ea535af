// robust: yes
// race: no
// options: -std=c++20
// reason: every access to d and f is a fetch_add/fetch_sub (an RMW reads the write right before it in modification order); two locations updated by RMWs only cannot form a cycle (po ∪ rf acyclic), whatever the orders
// C++20 floating-point atomics: std::atomic<double>::fetch_add and std::atomic<float>::fetch_sub with mixed orders (libstdc++'s out-of-line CAS loop taking the order as an argument).
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<double> d{0.0};
std::atomic<float> f{0.0f};

int main() {
  std::thread a([] {
    for (int i = 0; i < 2; i++) {
      d.fetch_add(1.0, std::memory_order_relaxed);
      f.fetch_sub(1.0f, std::memory_order_acq_rel);
    }
  });
  std::thread b([] {
    for (int i = 0; i < 2; i++) {
      f.fetch_add(2.0f, std::memory_order_release);
      d.fetch_sub(0.5);
    }
  });
  a.join();
  b.join();
  std::printf("%g %g\n", d.load(), (double)f.load());
  return d.load() == 1.0 && f.load() == 2.0f ? 0 : 1;
}
