// robust: yes
// race: no
// reason: a templated SPSC ring: the producer writes the slot (plain T) then stores tail with release, the consumer reads tail with acquire before reading the slot and stores head with release, which the producer reads with acquire before reusing the slot; each index has one writer, and each thread's relaxed read of its own index reads its own last write
// C++ template SPSC ring buffer (std::atomic<size_t> indices, plain slots of a struct type) driven by two lambdas.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <thread>

template <typename T, std::size_t N>
class SpscRing {
  T slots_[N];
  std::atomic<std::size_t> head_{0}, tail_{0};

 public:
  bool push(const T &v) {
    std::size_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_.load(std::memory_order_acquire) == N) return false;
    slots_[t % N] = v;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }
  bool pop(T &out) {
    std::size_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_.load(std::memory_order_acquire)) return false;
    out = slots_[h % N];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }
};

struct Msg {
  int id;
  double weight;
};

int main() {
  SpscRing<Msg, 2> ring;
  constexpr int kCount = 5;
  auto produce = [&ring] {
    for (int i = 0; i < kCount; i++)
      while (!ring.push(Msg{i, i * 0.5})) std::this_thread::yield();
  };
  double total = 0;
  auto consume = [&ring, &total] {
    Msg m;
    for (int got = 0; got < kCount;)
      if (ring.pop(m)) {
        total += m.weight;
        got++;
      }
  };
  std::thread p(produce), c(consume);
  p.join();
  c.join();
  std::printf("%.1f\n", total);
  return 0;
}
