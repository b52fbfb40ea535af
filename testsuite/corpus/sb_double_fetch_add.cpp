// robust: no
// race: no
// options: -std=c++20
// reason: store buffering whose writes are std::atomic<double> fetch_adds (release RMWs) and whose reads are acquire loads: both loads may read the initial values; the RMWs themselves are not stale (taking libstdc++'s CAS loop for one RMW must not hide the loads' reports)
// C++20: SB over two std::atomic<double>, written with fetch_add.
#include <atomic>
#include <cstdio>
#include <thread>

std::atomic<double> x{0.0}, y{0.0};
double r1, r2;

int main() {
  std::thread a([] {
    x.fetch_add(1.0, std::memory_order_release);
    r1 = y.load(std::memory_order_acquire); // pyrsan: violation
  });
  std::thread b([] {
    y.fetch_add(1.0, std::memory_order_release);
    r2 = x.load(std::memory_order_acquire); // pyrsan: violation
  });
  a.join();
  b.join();
  std::printf("%g %g\n", r1, r2);
  return 0;
}
