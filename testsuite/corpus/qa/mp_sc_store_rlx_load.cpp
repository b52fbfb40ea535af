// robust: no
// race: no
// reason: MP where the flag is set with operator= (seq_cst) but read with load(relaxed) and the data read relaxed: a seq_cst store releases, but a relaxed load does not acquire, so the reader may see the flag and stale data; reference model ([st x rlx, st y sc] | [ld y rlx, ld x rlx]): not robust
// C++ MP mixing a seq_cst flag store (operator=) with relaxed loads on the reader side.
#include <atomic>
#include <cstdio>
#include <thread>

struct Channel {
  std::atomic<int> data{0};
  std::atomic<bool> ready{false};
};

int main() {
  Channel ch;
  int seen = -1;
  std::thread writer([&ch] {
    ch.data.store(7, std::memory_order_relaxed); // pyrsan: stale
    ch.ready = true;
  });
  std::thread reader([&ch, &seen] {
    if (ch.ready.load(std::memory_order_relaxed)) seen = ch.data.load(std::memory_order_relaxed); // pyrsan: violation
  });
  writer.join();
  reader.join();
  std::printf("%d\n", seen);
  return 0;
}
