// robust: no
// race: no
// reason: SB with release/acquire on two std::atomic<short> members of one object
// C++: store buffering on atomic members of a class shared by lambdas.
#include <atomic>
#include <cstdio>
#include <thread>

struct Flags {
  std::atomic<short> a{0};
  int filler = 5;
  std::atomic<short> b{0};
};

int main() {
  Flags f;
  int r0 = -1, r1 = -1;
  std::thread t1([&] {
    f.a.store(1, std::memory_order_release); // pyrsan: stale
    r0 = f.b.load(std::memory_order_acquire); // pyrsan: violation
  });
  std::thread t2([&] {
    f.b.store(1, std::memory_order_release); // pyrsan: stale
    r1 = f.a.load(std::memory_order_acquire); // pyrsan: violation
  });
  t1.join();
  t2.join();
  std::printf("%d %d\n", r0, r1);
  return 0;
}
