#pragma once
#include <atomic>
template <typename T, int N> struct Ring {
  T buf[N];
  std::atomic<int> head{0}, tail{0};
  bool push(T v) {
    int t = tail.load(std::memory_order_relaxed);
    if (t - head.load(std::memory_order_acquire) == N) return false;
    buf[t % N] = v;
    tail.store(t + 1, std::memory_order_release);
    return true;
  }
  bool pop(T &v) {
    int h = head.load(std::memory_order_relaxed);
    if (h == tail.load(std::memory_order_acquire)) return false;
    v = buf[h % N];
    head.store(h + 1, std::memory_order_release);
    return true;
  }
};
extern Ring<int, 4> ring;
void produce(int n);
